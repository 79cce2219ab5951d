package eval

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
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
