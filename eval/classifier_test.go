package eval

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fedtopic/fedtopic/internal/rng"
)

func TestLogisticHandComputed(t *testing.T) {
	// One binary feature: at x = 0 two of three labels are 1, at x = 1
	// one of four. With (almost) no regularization the softmax model fits
	// the empirical frequencies exactly: p(1|0) = 2/3, p(1|1) = 1/4.
	x := []float64{0, 0, 0, 1, 1, 1, 1}
	y := []int{0, 1, 1, 0, 0, 0, 1}
	m, err := FitLogistic(x, 1, y, LogisticConfig{L2: 1e-12, GradTol: 1e-10})
	if err != nil {
		t.Fatalf("FitLogistic: %v", err)
	}
	got := m.Scores([]float64{0, 1})
	want := []float64{1.0 / 3, 2.0 / 3, 0.75, 0.25}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) < 1e-6 })); diff != "" {
		t.Errorf("FitLogistic scores at x = 0, 1 (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{1, 0}, m.Predict([]float64{0, 1})); diff != "" {
		t.Errorf("Predict (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{0, 1}, m.Classes()); diff != "" {
		t.Errorf("Classes (-want +got):\n%s", diff)
	}
}

func TestSVMHandComputed(t *testing.T) {
	// Points −2, −1 (class 3) and 1, 2 (class 7). The primal objective
	// ½(w² + b²) + Σ_i max(0, 1 − y_i(w x_i + b)) with C = 1 is minimized
	// by w = 1, b = 0: the margins of ±1 are exactly 1, and any w < 1 pays
	// 2(1 − w) in hinge loss, more than it saves in ½w².
	x := []float64{-2, -1, 1, 2}
	y := []int{3, 3, 7, 7}
	m, err := FitSVM(x, 1, y, SVMConfig{Tol: 1e-9}, rng.Derive(1, "svm"))
	if err != nil {
		t.Fatalf("FitSVM: %v", err)
	}
	got := m.Scores([]float64{-1, 0.5})
	want := []float64{1, -1, -0.5, 0.5}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) < 1e-6 })); diff != "" {
		t.Errorf("FitSVM decision values at x = −1, 0.5 (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{3, 7}, m.Predict([]float64{-1, 0.5})); diff != "" {
		t.Errorf("Predict (-want +got):\n%s", diff)
	}
}

// blobs draws n points per class around the corners of a triangle with
// side 6 in the plane, unit-variance Gaussian noise.
func blobs(seed uint64, n int) (x []float64, y []int) {
	r := rng.Derive(seed, "eval", "blobs")
	centers := [][2]float64{{0, 0}, {6, 0}, {3, 5.196}}
	for i := range n * len(centers) {
		c := i % len(centers)
		x = append(x, centers[c][0]+r.NormFloat64(), centers[c][1]+r.NormFloat64())
		y = append(y, c+10)
	}
	return x, y
}

func TestClassifiersOnBlobs(t *testing.T) {
	// The blob centres are 6 apart, so the Bayes classifier errs with
	// probability about 2·Φ(−3) ≈ 0.0027 per point. On 600 test points the
	// number of errors of a near-Bayes linear rule is roughly
	// Binomial(600, 0.003); P(more than 12 errors, accuracy < 0.98) < 1e-6.
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
		acc, err := Accuracy(yTest, tc.c.Predict(xTest))
		if err != nil || acc < 0.98 {
			t.Errorf("%s test accuracy = %v, %v; want ≥ 0.98", tc.name, acc, err)
		}
	}
	p := lr.Scores(xTest[:2])
	if s := p[0] + p[1] + p[2]; math.Abs(s-1) > 1e-12 {
		t.Errorf("logistic probabilities sum to %v; want 1", s)
	}
	again, err := FitSVM(xTrain, 2, yTrain, SVMConfig{}, rng.Derive(3, "svm"))
	if err != nil || !slices.Equal(again.w, svm.w) || !slices.Equal(again.b, svm.b) {
		t.Errorf("FitSVM with the same seed gave different weights")
	}
}

func TestClassifierErrors(t *testing.T) {
	r := rng.Derive(1, "svm")
	tests := []struct {
		name string
		x    []float64
		f    int
		y    []int
		want string
	}{
		{name: "one class", x: []float64{1, 2}, f: 1, y: []int{4, 4}, want: "need at least two classes, got 1"},
		{name: "shape", x: []float64{1, 2, 3}, f: 2, y: []int{0, 1}, want: "3 feature values for 2 labels of dimension 2, want 4"},
		{name: "NaN", x: []float64{1, math.NaN()}, f: 1, y: []int{0, 1}, want: "feature 0 of row 1 is NaN"},
		{name: "dimension", x: nil, f: 0, y: nil, want: "feature dimension 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := FitLogistic(tt.x, tt.f, tt.y, LogisticConfig{}); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("FitLogistic error = %v; want one containing %q", err, tt.want)
			}
			if _, err := FitSVM(tt.x, tt.f, tt.y, SVMConfig{}, r); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("FitSVM error = %v; want one containing %q", err, tt.want)
			}
		})
	}
	if err := (LogisticConfig{L2: -1, MaxIterations: -1}).Validate(); err == nil || !strings.Contains(err.Error(), "max_iterations = -1") {
		t.Errorf("LogisticConfig.Validate = %v; want l2 and max_iterations errors", err)
	}
	if err := (SVMConfig{C: math.Inf(1), Tol: -1}).Validate(); err == nil || !strings.Contains(err.Error(), "tol = -1") {
		t.Errorf("SVMConfig.Validate = %v; want c and tol errors", err)
	}
}

func TestSplitAndKFold(t *testing.T) {
	train, test, err := Split(10, 0.3, rng.Derive(1, "split"))
	if err != nil {
		t.Fatal(err)
	}
	if len(test) != 3 || len(train) != 7 {
		t.Errorf("Split(10, 0.3) sizes = %d, %d; want 7, 3", len(train), len(test))
	}
	all := slices.Sorted(slices.Values(slices.Concat(train, test)))
	if diff := cmp.Diff([]int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, all); diff != "" {
		t.Errorf("Split(10, 0.3) is not a partition (-want +got):\n%s", diff)
	}
	train2, test2, _ := Split(10, 0.3, rng.Derive(1, "split"))
	if !slices.Equal(train, train2) || !slices.Equal(test, test2) {
		t.Error("Split with the same seed gave different sets")
	}
	folds, err := KFold(11, 3, rng.Derive(2, "kfold"))
	if err != nil {
		t.Fatal(err)
	}
	var sizes []int
	var union []int
	for _, f := range folds {
		sizes = append(sizes, len(f))
		union = append(union, f...)
		if !slices.IsSorted(f) {
			t.Errorf("KFold fold %v is not sorted", f)
		}
	}
	slices.Sort(union)
	if diff := cmp.Diff([]int{4, 4, 3}, sizes); diff != "" {
		t.Errorf("KFold(11, 3) sizes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, union); diff != "" {
		t.Errorf("KFold(11, 3) is not a partition (-want +got):\n%s", diff)
	}
	for _, bad := range [][2]int{{5, 1}, {3, 4}} {
		if _, err := KFold(bad[0], bad[1], rng.Derive(2, "kfold")); err == nil {
			t.Errorf("KFold(%d, %d) = nil error; want an error", bad[0], bad[1])
		}
	}
	if _, _, err := Split(3, 1.5, rng.Derive(1, "split")); err == nil {
		t.Error("Split(3, 1.5) = nil error; want an error")
	}
}
