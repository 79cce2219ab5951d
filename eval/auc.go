package eval

import (
	"fmt"
	"math"
	"slices"
	"sort"
)

// ROCAUC returns the area under the ROC curve for two classes: the
// probability that a random positive scores higher than a random negative,
// ties counting one half (the Mann–Whitney U statistic with mid-ranks).
// positive[i] is the true class of item i and score[i] its score for the
// positive class; both classes must occur and scores must not be NaN.
func ROCAUC(positive []bool, score []float64) (float64, error) {
	if len(positive) != len(score) {
		return 0, fmt.Errorf("eval: ROC AUC: %d labels and %d scores", len(positive), len(score))
	}
	npos := 0
	for i, s := range score {
		if math.IsNaN(s) {
			return 0, fmt.Errorf("eval: ROC AUC: score %d is NaN", i)
		}
		if positive[i] {
			npos++
		}
	}
	nneg := len(score) - npos
	if npos == 0 || nneg == 0 {
		return 0, fmt.Errorf("eval: ROC AUC: need both classes, got %d positive and %d negative", npos, nneg)
	}
	order := make([]int, len(score))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return score[order[a]] < score[order[b]] })
	rankSum := 0.0 // sum of the positives' 1-based mid-ranks
	for i := 0; i < len(order); {
		j := i
		pos := 0
		for j < len(order) && score[order[j]] == score[order[i]] {
			if positive[order[j]] {
				pos++
			}
			j++
		}
		rankSum += float64(pos) * float64(i+1+j) / 2 // mid-rank of ranks i+1..j
		i = j
	}
	u := rankSum - float64(npos)*float64(npos+1)/2
	return u / (float64(npos) * float64(nneg)), nil
}

// MacroAUC is a macro-averaged one-vs-rest ROC AUC.
type MacroAUC struct {
	// AUC is the unweighted mean over Classes classes of each class's ROC
	// AUC against all the others.
	AUC float64 `json:"auc"`
	// Classes is the number of classes averaged: those of the true labels
	// that have a score column.
	Classes int `json:"classes"`
	// Unscored is the number of classes of the true labels without a score
	// column (a classifier never trained on them), left out of the mean;
	// their rows still count as negatives of every scored class.
	Unscored int `json:"unscored"`
}

// MacroROCAUC returns the macro-averaged one-vs-rest ROC AUC of class
// scores, as scikit-learn's roc_auc_score(multi_class="ovr",
// average="macro") computes it: for every class c that occurs in yTrue,
// the ROCAUC of the rows of class c (positives) against all other rows
// (negatives), ranked by their score for c, and the unweighted mean over
// those classes. scores is row-major len(yTrue)×len(classes), column j
// holding every row's score for class classes[j] (a Classifier's Scores
// and Classes); only the order of a column's scores matters, so
// probabilities and decision values both serve. Ties count one half, so
// the result is exact. yTrue must hold at least two classes.
func MacroROCAUC(yTrue, classes []int, scores []float64) (MacroAUC, error) {
	n, nc := len(yTrue), len(classes)
	switch {
	case n == 0:
		return MacroAUC{}, fmt.Errorf("eval: macro ROC AUC: no labels")
	case nc == 0 || len(scores) != n*nc:
		return MacroAUC{}, fmt.Errorf("eval: macro ROC AUC: %d scores for %d rows of %d classes, want %d", len(scores), n, nc, n*nc)
	}
	col := make(map[int]int, nc)
	for j, c := range classes {
		if _, dup := col[c]; dup {
			return MacroAUC{}, fmt.Errorf("eval: macro ROC AUC: class %d has two score columns", c)
		}
		col[c] = j
	}
	present := slices.Compact(slices.Sorted(slices.Values(slices.Clone(yTrue))))
	if len(present) < 2 {
		return MacroAUC{}, fmt.Errorf("eval: macro ROC AUC: need at least two classes in the true labels, got %d", len(present))
	}
	var res MacroAUC
	positive := make([]bool, n)
	column := make([]float64, n)
	for _, c := range present {
		j, ok := col[c]
		if !ok {
			res.Unscored++
			continue
		}
		for i, y := range yTrue {
			positive[i] = y == c
			column[i] = scores[i*nc+j]
		}
		a, err := ROCAUC(positive, column)
		if err != nil {
			return MacroAUC{}, fmt.Errorf("eval: macro ROC AUC: class %d: %w", c, err)
		}
		res.AUC += a
		res.Classes++
	}
	if res.Classes == 0 {
		return MacroAUC{}, fmt.Errorf("eval: macro ROC AUC: none of the %d classes of the true labels has a score column", len(present))
	}
	res.AUC /= float64(res.Classes)
	return res, nil
}

// Assessment is how well a classifier labels a test set.
type Assessment struct {
	Accuracy float64  `json:"accuracy"`
	Macro    PRF      `json:"macro"`
	AUC      MacroAUC `json:"macro_auc"`
}

// Assess predicts the rows of the row-major feature matrix x with c and
// measures the predictions against yTrue: accuracy, macro precision,
// recall and F1 (MacroPRF), and the macro one-vs-rest ROC AUC of c's
// scores (MacroROCAUC).
func Assess(c Classifier, x []float64, yTrue []int) (Assessment, error) {
	var a Assessment
	pred := c.Predict(x)
	var err error
	if a.Accuracy, err = Accuracy(yTrue, pred); err != nil {
		return Assessment{}, err
	}
	if a.Macro, err = MacroPRF(yTrue, pred); err != nil {
		return Assessment{}, err
	}
	if a.AUC, err = MacroROCAUC(yTrue, c.Classes(), c.Scores(x)); err != nil {
		return Assessment{}, err
	}
	return a, nil
}
