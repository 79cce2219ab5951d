package eval

import (
	"math"
	"strings"
	"testing"
)

func TestClassificationHandComputed(t *testing.T) {
	yTrue := []int{0, 0, 1, 1, 2}
	yPred := []int{0, 1, 1, 1, 0}
	// Per class (TP, FP, FN) → (P, R, F1):
	//   0: (1, 1, 1) → (1/2, 1/2, 1/2)
	//   1: (2, 1, 0) → (2/3, 1, 4/5)
	//   2: (0, 0, 1) → (0, 0, 0)
	acc, err := Accuracy(yTrue, yPred)
	if err != nil || acc != 0.6 {
		t.Errorf("Accuracy = %v, %v; want 0.6, nil", acc, err)
	}
	got, err := MacroPRF(yTrue, yPred)
	if err != nil {
		t.Fatalf("MacroPRF: %v", err)
	}
	want := PRF{Precision: (0.5 + 2.0/3) / 3, Recall: 0.5, F1: (0.5 + 0.8) / 3}
	if math.Abs(got.Precision-want.Precision) > 1e-15 || math.Abs(got.Recall-want.Recall) > 1e-15 || math.Abs(got.F1-want.F1) > 1e-15 {
		t.Errorf("MacroPRF = %+v; want %+v", got, want)
	}
	// A class only predicted, never true, counts with recall 0.
	got, err = MacroPRF([]int{0, 0}, []int{0, 5})
	if want := (PRF{Precision: 0.5, Recall: 0.25, F1: 1.0 / 3}); err != nil || math.Abs(got.F1-want.F1) > 1e-15 || got.Precision != want.Precision || got.Recall != want.Recall {
		t.Errorf("MacroPRF(predicted-only class) = %+v, %v; want %+v", got, err, want)
	}
}

func TestClassificationErrors(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{name: "accuracy lengths", err: second(Accuracy([]int{1}, []int{1, 2})), want: "1 true labels and 2 predictions"},
		{name: "accuracy empty", err: second(Accuracy(nil, nil)), want: "no labels"},
		{name: "macro lengths", err: second(MacroPRF([]int{1}, nil)), want: "1 true labels and 0 predictions"},
		{name: "AUC one class", err: second(ROCAUC([]bool{true, true}, []float64{1, 2})), want: "need both classes"},
		{name: "AUC NaN", err: second(ROCAUC([]bool{true, false}, []float64{math.NaN(), 2})), want: "score 0 is NaN"},
		{name: "AUC lengths", err: second(ROCAUC([]bool{true}, nil)), want: "1 labels and 0 scores"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.err == nil || !strings.Contains(tt.err.Error(), tt.want) {
				t.Errorf("error = %v; want one containing %q", tt.err, tt.want)
			}
		})
	}
}

func second[T any](_ T, err error) error { return err }
