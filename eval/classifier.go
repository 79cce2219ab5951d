package eval

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/optimize"
)

// Classifier is a trained linear classifier over dense feature vectors,
// such as document-topic proportions θ.
type Classifier interface {
	// Predict returns the predicted class label of each row of the
	// row-major feature matrix x.
	Predict(x []float64) []int
	// Scores returns, row-major n×len(Classes), the classifier's score
	// for every class of every row (probabilities for logistic regression,
	// decision values for the SVM).
	Scores(x []float64) []float64
	// Classes returns the sorted class labels the classifier was trained
	// on, the columns of Scores.
	Classes() []int
}

// linear is a multi-class linear model: class c's score for x is
// W[c]·x + B[c].
type linear struct {
	classes []int     // sorted class labels
	f       int       // feature dimension
	w       []float64 // len(classes)×f weights
	b       []float64 // len(classes) biases
}

// raw returns the linear scores of every row of x, row-major.
func (l *linear) raw(x []float64) []float64 {
	if len(x)%l.f != 0 {
		panic(fmt.Sprintf("eval: %d features is not a multiple of the dimension %d", len(x), l.f))
	}
	n, nc := len(x)/l.f, len(l.classes)
	out := make([]float64, n*nc)
	for i := range n {
		xi := x[i*l.f : (i+1)*l.f]
		for c := range nc {
			s := l.b[c]
			for j, v := range l.w[c*l.f : (c+1)*l.f] {
				s += v * xi[j]
			}
			out[i*nc+c] = s
		}
	}
	return out
}

// argmax returns the class label of the highest score of each row;
// ties go to the smaller label.
func (l *linear) argmax(scores []float64) []int {
	nc := len(l.classes)
	out := make([]int, len(scores)/nc)
	for i := range out {
		best := 0
		for c := 1; c < nc; c++ {
			if scores[i*nc+c] > scores[i*nc+best] {
				best = c
			}
		}
		out[i] = l.classes[best]
	}
	return out
}

// LogisticConfig configures LogisticRegression. The zero value means the
// documented defaults.
type LogisticConfig struct {
	// L2 is the regularization strength λ of the objective
	// (1/n) Σ_i −log p(y_i|x_i) + (λ/2)‖W‖² (biases are not penalized);
	// 0 means 1e-4.
	L2 float64 `json:"l2"`
	// MaxIterations bounds the L-BFGS iterations; 0 means 500.
	MaxIterations int `json:"max_iterations"`
	// GradTol stops L-BFGS when the largest gradient entry falls below it;
	// 0 means 1e-6.
	GradTol float64 `json:"grad_tol"`
}

// Validate reports every invalid field of c, joined with errors.Join.
func (c LogisticConfig) Validate() error {
	var errs []error
	if !(c.L2 >= 0) || math.IsInf(c.L2, 0) {
		errs = append(errs, fmt.Errorf("eval: logistic regression: l2 = %v, want finite and ≥ 0", c.L2))
	}
	if c.MaxIterations < 0 {
		errs = append(errs, fmt.Errorf("eval: logistic regression: max_iterations = %d, want ≥ 0", c.MaxIterations))
	}
	if !(c.GradTol >= 0) || math.IsInf(c.GradTol, 0) {
		errs = append(errs, fmt.Errorf("eval: logistic regression: grad_tol = %v, want finite and ≥ 0", c.GradTol))
	}
	return errors.Join(errs...)
}

// LogisticRegression is a multinomial (softmax) logistic regression model.
type LogisticRegression struct {
	linear
}

// Classes returns the sorted class labels the model was trained on.
func (m *LogisticRegression) Classes() []int { return m.classes }

// Predict returns the most probable class of each row of x.
func (m *LogisticRegression) Predict(x []float64) []int { return m.argmax(m.raw(x)) }

// Scores returns the class probabilities p(c|x) of each row of x,
// row-major n×len(Classes()).
func (m *LogisticRegression) Scores(x []float64) []float64 {
	s := m.raw(x)
	nc := len(m.classes)
	for i := 0; i < len(s); i += nc {
		softmax(s[i : i+nc])
	}
	return s
}

// softmax replaces s by exp(s)/Σexp(s), computed stably.
func softmax(s []float64) {
	mx := math.Inf(-1)
	for _, v := range s {
		mx = max(mx, v)
	}
	sum := 0.0
	for c, v := range s {
		s[c] = math.Exp(v - mx)
		sum += s[c]
	}
	for c := range s {
		s[c] /= sum
	}
}

// FitLogistic trains multinomial logistic regression on the n×f row-major
// feature matrix x (n = len(y)) with labels y, minimizing the L2-regularized
// mean negative log-likelihood of LogisticConfig with L-BFGS
// (gonum/optimize) from zero weights. It is deterministic. At least two
// classes must occur in y.
func FitLogistic(x []float64, f int, y []int, cfg LogisticConfig) (*LogisticRegression, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.L2 == 0 {
		cfg.L2 = 1e-4
	}
	if cfg.MaxIterations == 0 {
		cfg.MaxIterations = 500
	}
	if cfg.GradTol == 0 {
		cfg.GradTol = 1e-6
	}
	classes, yi, err := prepare(x, f, y)
	if err != nil {
		return nil, fmt.Errorf("eval: logistic regression: %w", err)
	}
	n, nc := len(y), len(classes)
	stride := f + 1 // weights then bias, per class
	p := make([]float64, nc)
	// objective returns the loss at params and, if grad is non-nil, writes
	// its gradient; rows are visited in order, so sums are reproducible.
	objective := func(params, grad []float64) float64 {
		if grad != nil {
			clear(grad)
		}
		loss := 0.0
		for i := range n {
			xi := x[i*f : (i+1)*f]
			for c := range nc {
				wc := params[c*stride : (c+1)*stride]
				s := wc[f]
				for j, v := range xi {
					s += wc[j] * v
				}
				p[c] = s
			}
			mx := math.Inf(-1)
			for _, v := range p {
				mx = max(mx, v)
			}
			sum := 0.0
			for _, v := range p {
				sum += math.Exp(v - mx)
			}
			loss += mx + math.Log(sum) - p[yi[i]]
			if grad == nil {
				continue
			}
			for c := range nc {
				d := math.Exp(p[c]-mx) / sum
				if c == yi[i] {
					d--
				}
				gc := grad[c*stride : (c+1)*stride]
				for j, v := range xi {
					gc[j] += d * v
				}
				gc[f] += d
			}
		}
		inv := 1 / float64(n)
		loss *= inv
		for c := range nc {
			for j := range f {
				w := params[c*stride+j]
				loss += cfg.L2 / 2 * w * w
				if grad != nil {
					grad[c*stride+j] = grad[c*stride+j]*inv + cfg.L2*w
				}
			}
			if grad != nil {
				grad[c*stride+f] *= inv
			}
		}
		return loss
	}
	prob := optimize.Problem{
		Func: func(params []float64) float64 { return objective(params, nil) },
		Grad: func(grad, params []float64) { objective(params, grad) },
	}
	settings := &optimize.Settings{
		GradientThreshold: cfg.GradTol,
		MajorIterations:   cfg.MaxIterations,
		Converger:         &optimize.FunctionConverge{Absolute: 1e-12, Relative: 1e-12, Iterations: 20},
	}
	res, err := optimize.Minimize(prob, make([]float64, nc*stride), settings, &optimize.LBFGS{})
	if res == nil {
		return nil, fmt.Errorf("eval: logistic regression: %w", err)
	}
	// A line search that can make no further progress ends L-BFGS with an
	// error at a point that is still the best found; only a non-finite
	// result is a failure.
	for _, v := range res.X {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("eval: logistic regression: optimization diverged (%v): %w", res.Status, err)
		}
	}
	m := &LogisticRegression{linear{classes: classes, f: f, w: make([]float64, nc*f), b: make([]float64, nc)}}
	for c := range nc {
		copy(m.w[c*f:(c+1)*f], res.X[c*stride:c*stride+f])
		m.b[c] = res.X[c*stride+f]
	}
	return m, nil
}

// SVMConfig configures LinearSVM. The zero value means the documented
// defaults.
type SVMConfig struct {
	// C is the cost of a margin violation (liblinear's -c); 0 means 1.
	C float64 `json:"c"`
	// MaxEpochs bounds the passes of dual coordinate descent; 0 means
	// 1000.
	MaxEpochs int `json:"max_epochs"`
	// Tol stops descent when the projected gradient's spread over an epoch
	// falls below it (liblinear's -e); 0 means 0.1.
	Tol float64 `json:"tol"`
}

// Validate reports every invalid field of c, joined with errors.Join.
func (c SVMConfig) Validate() error {
	var errs []error
	if !(c.C >= 0) || math.IsInf(c.C, 0) {
		errs = append(errs, fmt.Errorf("eval: linear SVM: c = %v, want finite and ≥ 0", c.C))
	}
	if c.MaxEpochs < 0 {
		errs = append(errs, fmt.Errorf("eval: linear SVM: max_epochs = %d, want ≥ 0", c.MaxEpochs))
	}
	if !(c.Tol >= 0) || math.IsInf(c.Tol, 0) {
		errs = append(errs, fmt.Errorf("eval: linear SVM: tol = %v, want finite and ≥ 0", c.Tol))
	}
	return errors.Join(errs...)
}

// LinearSVM is a one-vs-rest linear support vector machine.
type LinearSVM struct {
	linear
}

// Classes returns the sorted class labels the model was trained on.
func (m *LinearSVM) Classes() []int { return m.classes }

// Predict returns the class with the largest decision value for each row
// of x.
func (m *LinearSVM) Predict(x []float64) []int { return m.argmax(m.raw(x)) }

// Scores returns the decision values w_c·x + b_c of each row of x,
// row-major n×len(Classes()).
func (m *LinearSVM) Scores(x []float64) []float64 { return m.raw(x) }

// FitSVM trains a one-vs-rest linear SVM with hinge loss and L2
// regularization, min ½‖w‖² + C Σ_i max(0, 1 − y_i w·x_i), by dual
// coordinate descent (Hsieh, Chang, Lin, Keerthi and Sundararajan, "A dual
// coordinate descent method for large-scale linear SVM", ICML 2008; the
// algorithm of liblinear's L2-regularized L1-loss solver, without
// shrinking). The bias is an extra feature of constant value 1, regularized
// like the weights, as in liblinear with -B 1. r orders the coordinates of
// each epoch, so a seeded r makes training reproducible. At least two
// classes must occur in y; with exactly two, one binary machine is trained
// and the second class's scores are its negation.
func FitSVM(x []float64, f int, y []int, cfg SVMConfig, r *rand.Rand) (*LinearSVM, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.C == 0 {
		cfg.C = 1
	}
	if cfg.MaxEpochs == 0 {
		cfg.MaxEpochs = 1000
	}
	if cfg.Tol == 0 {
		cfg.Tol = 0.1
	}
	classes, yi, err := prepare(x, f, y)
	if err != nil {
		return nil, fmt.Errorf("eval: linear SVM: %w", err)
	}
	nc := len(classes)
	m := &LinearSVM{linear{classes: classes, f: f, w: make([]float64, nc*f), b: make([]float64, nc)}}
	sign := make([]float64, len(y))
	for c := range nc {
		if nc == 2 && c == 1 {
			for j := range f {
				m.w[f+j] = -m.w[j]
			}
			m.b[1] = -m.b[0]
			break
		}
		for i, k := range yi {
			sign[i] = -1
			if k == c {
				sign[i] = 1
			}
		}
		dualCD(x, f, sign, cfg, r, m.w[c*f:(c+1)*f], &m.b[c])
	}
	return m, nil
}

// dualCD solves one binary L1-loss SVM dual problem for labels sign (±1),
// writing the primal weights to w and the bias to b.
func dualCD(x []float64, f int, sign []float64, cfg SVMConfig, r *rand.Rand, w []float64, b *float64) {
	n := len(sign)
	alpha := make([]float64, n)
	qii := make([]float64, n)
	for i := range n {
		q := 1.0 // the bias feature
		for _, v := range x[i*f : (i+1)*f] {
			q += v * v
		}
		qii[i] = q
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	for range cfg.MaxEpochs {
		r.Shuffle(n, func(a, b int) { order[a], order[b] = order[b], order[a] })
		maxPG, minPG := math.Inf(-1), math.Inf(1)
		for _, i := range order {
			xi := x[i*f : (i+1)*f]
			g := *b
			for j, v := range xi {
				g += w[j] * v
			}
			g = sign[i]*g - 1
			pg := g
			switch {
			case alpha[i] == 0:
				pg = min(g, 0)
			case alpha[i] == cfg.C:
				pg = max(g, 0)
			}
			maxPG, minPG = max(maxPG, pg), min(minPG, pg)
			if pg == 0 {
				continue
			}
			old := alpha[i]
			alpha[i] = min(max(old-g/qii[i], 0), cfg.C)
			d := (alpha[i] - old) * sign[i]
			for j, v := range xi {
				w[j] += d * v
			}
			*b += d
		}
		if maxPG-minPG < cfg.Tol {
			return
		}
	}
}

// prepare checks a training set and maps its labels to indices into the
// sorted list of classes.
func prepare(x []float64, f int, y []int) (classes, yi []int, err error) {
	switch {
	case f < 1:
		return nil, nil, fmt.Errorf("feature dimension %d, want at least 1", f)
	case len(x) != len(y)*f:
		return nil, nil, fmt.Errorf("%d feature values for %d labels of dimension %d, want %d", len(x), len(y), f, len(y)*f)
	}
	for i, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, nil, fmt.Errorf("feature %d of row %d is %v, want a finite number", i%f, i/f, v)
		}
	}
	classes = slices.Clone(y)
	slices.Sort(classes)
	classes = slices.Compact(classes)
	if len(classes) < 2 {
		return nil, nil, fmt.Errorf("need at least two classes, got %d", len(classes))
	}
	yi = make([]int, len(y))
	for i, label := range y {
		yi[i], _ = slices.BinarySearch(classes, label)
	}
	return classes, yi, nil
}

// Split returns a seeded random split of the indices 0..n−1 into a training
// and a test set, the test set holding round(testFraction·n) of them; both
// come back sorted.
func Split(n int, testFraction float64, r *rand.Rand) (train, test []int, err error) {
	if n < 0 || !(testFraction >= 0 && testFraction <= 1) {
		return nil, nil, fmt.Errorf("eval: split: n = %d, test fraction = %v: want n ≥ 0 and a fraction in [0, 1]", n, testFraction)
	}
	perm := r.Perm(n)
	nt := int(math.Round(testFraction * float64(n)))
	test, train = perm[:nt], perm[nt:]
	slices.Sort(test)
	slices.Sort(train)
	return train, test, nil
}

// KFold returns a seeded random partition of the indices 0..n−1 into k
// folds of sizes differing by at most one, each sorted. Fold i is the test
// set of round i of k-fold cross-validation.
func KFold(n, k int, r *rand.Rand) ([][]int, error) {
	if k < 2 || k > n {
		return nil, fmt.Errorf("eval: k-fold: k = %d for n = %d, want 2 ≤ k ≤ n", k, n)
	}
	perm := r.Perm(n)
	folds := make([][]int, k)
	for i, idx := range perm {
		folds[i%k] = append(folds[i%k], idx)
	}
	for _, f := range folds {
		slices.Sort(f)
	}
	return folds, nil
}
