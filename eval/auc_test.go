package eval

import (
	"math"
	"strings"
	"testing"

	"github.com/fedtopic/fedtopic/internal/rng"
)

func TestROCAUC(t *testing.T) {
	tests := []struct {
		name     string
		positive []bool
		score    []float64
		want     float64
	}{
		// Pairs (positive, negative): (0.9, 0.9) tie ½, (0.9, 0.1) 1,
		// (0.3, 0.9) 0, (0.3, 0.1) 1 → 2.5/4.
		{name: "tie", positive: []bool{true, false, true, false}, score: []float64{0.9, 0.9, 0.3, 0.1}, want: 0.625},
		{name: "perfect", positive: []bool{false, true, false, true}, score: []float64{1, 2, 0, 3}, want: 1},
		{name: "inverted", positive: []bool{true, false}, score: []float64{0, 1}, want: 0},
		{name: "all tied", positive: []bool{true, false, false}, score: []float64{1, 1, 1}, want: 0.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ROCAUC(tt.positive, tt.score)
			if err != nil || got != tt.want {
				t.Errorf("ROCAUC(%v, %v) = %v, %v; want %v, nil", tt.positive, tt.score, got, err, tt.want)
			}
		})
	}
}

func TestMacroROCAUC(t *testing.T) {
	onehot := func(y []int, nc int, hit, miss float64) []float64 {
		s := make([]float64, len(y)*nc)
		for i, c := range y {
			for j := range nc {
				s[i*nc+j] = miss
				if j == c {
					s[i*nc+j] = hit
				}
			}
		}
		return s
	}
	y := []int{0, 0, 1, 1, 2, 2, 2}
	tests := []struct {
		name    string
		yTrue   []int
		classes []int
		scores  []float64
		want    MacroAUC
	}{
		{
			// Per class, the (positive, negative) pairs won, ties ½:
			//   0: positives 0.5, 0.4 against 0.4, 0.2, 0.1 → 3 + 2.5 = 5.5 of 6
			//   1: positives 0.5, 0.3 against 0.3, 0.4, 0.3 → 3 + 1 = 4 of 6
			//   2: positive 0.6 against 0.2, 0.2, 0.1, 0.5 → 4 of 4
			// mean (11/12 + 8/12 + 12/12)/3 = 31/36, which scikit-learn's
			// roc_auc_score(multi_class="ovr", average="macro") also gives.
			name: "hand-computed with ties", yTrue: []int{0, 0, 1, 1, 2}, classes: []int{0, 1, 2},
			scores: []float64{0.5, 0.3, 0.2, 0.4, 0.4, 0.2, 0.4, 0.5, 0.1, 0.2, 0.3, 0.5, 0.1, 0.3, 0.6},
			want:   MacroAUC{AUC: 31.0 / 36, Classes: 3},
		},
		{name: "perfect", yTrue: y, classes: []int{0, 1, 2}, scores: onehot(y, 3, 1, 0), want: MacroAUC{AUC: 1, Classes: 3}},
		{name: "reversed", yTrue: y, classes: []int{0, 1, 2}, scores: onehot(y, 3, -2, 5), want: MacroAUC{AUC: 0, Classes: 3}},
		{name: "all tied", yTrue: y, classes: []int{0, 1, 2}, scores: make([]float64, 21), want: MacroAUC{AUC: 0.5, Classes: 3}},
		{
			// Class 9 has no column: it is left out of the mean, and its
			// row is a negative of classes 3 and 5. Class 3: positive 0.9
			// against 0.1 and 0.9 → 1.5 of 2; class 5: positive 0.8
			// against 0.2 and 0.1 → 2 of 2.
			name: "a class without scores", yTrue: []int{3, 5, 9}, classes: []int{3, 5},
			scores: []float64{0.9, 0.1, 0.1, 0.8, 0.9, 0.2},
			want:   MacroAUC{AUC: (0.75 + 1) / 2, Classes: 2, Unscored: 1},
		},
		{
			// A trained class absent from the test set has no positives
			// and is not averaged.
			name: "a class without positives", yTrue: []int{0, 1}, classes: []int{0, 1, 2},
			scores: []float64{1, 0, 5, 0, 1, 5},
			want:   MacroAUC{AUC: 1, Classes: 2},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := MacroROCAUC(tt.yTrue, tt.classes, tt.scores)
			if err != nil || got.Classes != tt.want.Classes || got.Unscored != tt.want.Unscored || math.Abs(got.AUC-tt.want.AUC) > 1e-15 {
				t.Errorf("MacroROCAUC = %+v, %v; want %+v, nil", got, err, tt.want)
			}
		})
	}
}

// TestMacroROCAUCAgainstPairs checks MacroROCAUC against the definition,
// counting every (positive, negative) pair of every class, on random
// scores drawn from a few values so that ties are frequent.
func TestMacroROCAUCAgainstPairs(t *testing.T) {
	r := rng.Derive(1, "eval", "auc")
	const n, nc = 60, 4
	for trial := range 20 {
		y := make([]int, n)
		scores := make([]float64, n*nc)
		for i := range y {
			y[i] = r.IntN(nc)
			for j := range nc {
				scores[i*nc+j] = float64(r.IntN(5) + y[i]*j%3)
			}
		}
		want := 0.0
		classes := 0
		for c := range nc {
			won, pairs := 0.0, 0
			for i := range n {
				for k := range n {
					if y[i] != c || y[k] == c {
						continue
					}
					pairs++
					switch a, b := scores[i*nc+c], scores[k*nc+c]; {
					case a > b:
						won++
					case a == b:
						won += 0.5
					}
				}
			}
			if pairs > 0 {
				want += won / float64(pairs)
				classes++
			}
		}
		want /= float64(classes)
		got, err := MacroROCAUC(y, []int{0, 1, 2, 3}, scores)
		if err != nil || got.Classes != classes || math.Abs(got.AUC-want) > 1e-12 {
			t.Errorf("trial %d: MacroROCAUC = %+v, %v; want AUC %v over %d classes", trial, got, err, want, classes)
		}
	}
}

func TestMacroROCAUCErrors(t *testing.T) {
	tests := []struct {
		name    string
		yTrue   []int
		classes []int
		scores  []float64
		want    string
	}{
		{"no labels", nil, []int{0, 1}, nil, "no labels"},
		{"short scores", []int{0, 1}, []int{0, 1}, []float64{1, 2, 3}, "3 scores for 2 rows of 2 classes, want 4"},
		{"no classes", []int{0, 1}, nil, nil, "0 scores for 2 rows of 0 classes"},
		{"duplicate column", []int{0, 1}, []int{1, 1}, []float64{1, 2, 3, 4}, "class 1 has two score columns"},
		{"one class", []int{1, 1}, []int{0, 1}, []float64{1, 2, 3, 4}, "need at least two classes"},
		{"nothing scored", []int{7, 8}, []int{0, 1}, []float64{1, 2, 3, 4}, "none of the 2 classes"},
		{"NaN", []int{0, 1}, []int{0, 1}, []float64{math.NaN(), 0, 1, 0}, "class 0: eval: ROC AUC: score 0 is NaN"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := MacroROCAUC(tt.yTrue, tt.classes, tt.scores)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("MacroROCAUC error = %v; want one containing %q", err, tt.want)
			}
		})
	}
}

func TestAssessOnBlobs(t *testing.T) {
	// As in TestClassifiersOnBlobs, a near-Bayes linear rule errs on about
	// 0.3% of the points; its scores rank a class's points above the
	// others' on all but a few pairs, so the macro AUC is ≥ 0.99 except
	// with a probability far below 1e-6.
	xTrain, yTrain := blobs(1, 200)
	xTest, yTest := blobs(2, 200)
	lr, err := FitLogistic(xTrain, 2, yTrain, LogisticConfig{})
	if err != nil {
		t.Fatalf("FitLogistic: %v", err)
	}
	svm, err := FitSVM(xTrain, 2, yTrain, SVMConfig{}, rng.Derive(3, "svm"))
	if err != nil {
		t.Fatalf("FitSVM: %v", err)
	}
	for _, tc := range []struct {
		name string
		c    Classifier
	}{{"logistic", lr}, {"svm", svm}} {
		got, err := Assess(tc.c, xTest, yTest)
		if err != nil {
			t.Fatalf("%s: Assess: %v", tc.name, err)
		}
		pred := tc.c.Predict(xTest)
		acc, _ := Accuracy(yTest, pred)
		prf, _ := MacroPRF(yTest, pred)
		if got.Accuracy != acc || got.Macro != prf {
			t.Errorf("%s: Assess = %+v; want accuracy %v and %+v", tc.name, got, acc, prf)
		}
		if got.AUC.Classes != 3 || got.AUC.Unscored != 0 || got.AUC.AUC < 0.99 || got.AUC.AUC > 1 {
			t.Errorf("%s: Assess macro AUC = %+v; want ≥ 0.99 over 3 classes", tc.name, got.AUC)
		}
	}
	// Scores that rank the classes backwards: the negated decision values
	// of the SVM give an AUC of at most 0.01.
	neg := negated{svm}
	got, err := Assess(neg, xTest, yTest)
	if err != nil || got.AUC.AUC > 0.01 {
		t.Errorf("Assess(negated SVM) macro AUC = %+v, %v; want ≤ 0.01", got.AUC, err)
	}
}

// negated is a Classifier whose scores are another's negated.
type negated struct{ Classifier }

func (n negated) Scores(x []float64) []float64 {
	s := n.Classifier.Scores(x)
	for i := range s {
		s[i] = -s[i]
	}
	return s
}
