package eval

import (
	"errors"
	"fmt"
	"slices"
)

// Accuracy returns the fraction of positions where yPred equals yTrue.
func Accuracy(yTrue, yPred []int) (float64, error) {
	if err := checkLabels(yTrue, yPred); err != nil {
		return 0, fmt.Errorf("eval: accuracy: %w", err)
	}
	hit := 0
	for i := range yTrue {
		if yTrue[i] == yPred[i] {
			hit++
		}
	}
	return float64(hit) / float64(len(yTrue)), nil
}

// PRF holds precision, recall and F1.
type PRF struct {
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	F1        float64 `json:"f1"`
}

// MacroPRF returns macro-averaged precision, recall and F1: each is the
// unweighted mean over classes of the per-class value, the classes being
// every label that occurs in yTrue or yPred. Per class, precision is
// TP/(TP+FP), recall TP/(TP+FN) and F1 their harmonic mean, each 0 when its
// denominator is 0 (scikit-learn's zero_division=0). Macro F1 is the mean
// of per-class F1, not the harmonic mean of macro precision and recall.
func MacroPRF(yTrue, yPred []int) (PRF, error) {
	if err := checkLabels(yTrue, yPred); err != nil {
		return PRF{}, fmt.Errorf("eval: macro precision/recall/F1: %w", err)
	}
	classes := slices.Concat(yTrue, yPred)
	slices.Sort(classes)
	classes = slices.Compact(classes)
	tp := make([]int, len(classes))
	fp := make([]int, len(classes))
	fn := make([]int, len(classes))
	idx := func(c int) int { i, _ := slices.BinarySearch(classes, c); return i }
	for i := range yTrue {
		t, p := idx(yTrue[i]), idx(yPred[i])
		if t == p {
			tp[t]++
		} else {
			fp[p]++
			fn[t]++
		}
	}
	var res PRF
	for c := range classes {
		p := ratio(tp[c], tp[c]+fp[c])
		r := ratio(tp[c], tp[c]+fn[c])
		res.Precision += p
		res.Recall += r
		if p+r > 0 {
			res.F1 += 2 * p * r / (p + r)
		}
	}
	n := float64(len(classes))
	res.Precision /= n
	res.Recall /= n
	res.F1 /= n
	return res, nil
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// checkLabels checks that two label slices are non-empty and equally long.
func checkLabels(yTrue, yPred []int) error {
	switch {
	case len(yTrue) != len(yPred):
		return fmt.Errorf("%d true labels and %d predictions", len(yTrue), len(yPred))
	case len(yTrue) == 0:
		return errors.New("no labels")
	}
	return nil
}
