package corpus

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"
)

// Split methods for SplitSpec.Method.
const (
	// SplitSizes shuffles the documents and cuts them into parties with
	// sizes proportional to SplitSpec.Sizes (equal by default): an IID split.
	SplitSizes = "sizes"
	// SplitCounts shuffles the documents and gives party p exactly
	// SplitSpec.Counts[p] of them; documents beyond the total are left out.
	SplitCounts = "counts"
	// SplitLabels gives each party whole labels, so parties see different
	// labels: either the explicit SplitSpec.Groups, or groups whose document
	// totals approximate SplitSpec.Sizes (equal by default).
	SplitLabels = "labels"
	// SplitDirichlet draws each party's label mix from Dirichlet(α·p), p the
	// corpus label distribution (Hsu et al. 2019), with party sizes
	// proportional to SplitSpec.Sizes (equal by default): a non-IID split.
	SplitDirichlet = "dirichlet"
	// SplitFiles gives party i the documents of the i-th input file.
	SplitFiles = "files"
)

// SplitSpec says how Split divides a corpus among parties. The zero value
// is one party holding the whole corpus (method sizes, equal sizes). Its
// string form, parsed by ParseSplit and produced by String, is one of
//
//	sizes=1,2,3            IID, proportions 1:2:3 (three parties)
//	counts=100,200         IID, exactly 100 and 200 documents
//	labels                 whole labels, groups of about equal size
//	labels:sizes=1,2,3     whole labels, group sizes about 1:2:3
//	labels=a,b;c;d,e       whole labels, explicit groups (parties split by ';')
//	dirichlet=0.5          non-IID, Dirichlet(0.5·p) label mix, equal sizes
//	dirichlet=0.5:sizes=1,2,3
//	files                  one party per input file
//
// The number of parties is the length of sizes, counts or groups, or the
// number of input files for files; otherwise it is Parties.
type SplitSpec struct {
	Method  string     `json:"method,omitempty"`  // one of the Split* constants; "" means sizes
	Parties int        `json:"parties,omitempty"` // number of parties when no list fixes it; 0 means 1
	Sizes   []float64  `json:"sizes,omitempty"`   // relative party sizes (sizes, labels, dirichlet)
	Counts  []int      `json:"counts,omitempty"`  // documents per party (counts)
	Groups  [][]string `json:"groups,omitempty"`  // labels of each party (labels)
	Alpha   float64    `json:"alpha,omitempty"`   // Dirichlet concentration α (dirichlet)
}

func (s SplitSpec) method() string {
	if s.Method == "" {
		return SplitSizes
	}
	return s.Method
}

// Validate reports every problem with the spec that can be seen without the
// corpus.
func (s SplitSpec) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf("corpus: split: "+format, args...)) }
	m := s.method()
	switch m {
	case SplitSizes, SplitCounts, SplitLabels, SplitDirichlet, SplitFiles:
	default:
		bad("unknown method %q (want sizes, counts, labels, dirichlet or files)", s.Method)
	}
	if s.Parties < 0 {
		bad("parties %d is negative", s.Parties)
	}
	for i, x := range s.Sizes {
		if !(x > 0) || math.IsInf(x, 0) {
			bad("size %d is %v; sizes must be positive and finite", i+1, x)
		}
	}
	for i, n := range s.Counts {
		if n < 1 {
			bad("count %d is %d; counts must be at least 1", i+1, n)
		}
	}
	if len(s.Sizes) > 0 && !(m == SplitSizes || m == SplitLabels || m == SplitDirichlet) {
		bad("method %s takes no sizes", m)
	}
	if len(s.Counts) > 0 && m != SplitCounts {
		bad("method %s takes no counts", m)
	}
	if m == SplitCounts && len(s.Counts) == 0 {
		bad("method counts needs counts")
	}
	if len(s.Groups) > 0 {
		if m != SplitLabels {
			bad("method %s takes no label groups", m)
		}
		if len(s.Sizes) > 0 {
			bad("label groups and sizes exclude each other")
		}
		seen := map[string]int{}
		for i, g := range s.Groups {
			if len(g) == 0 {
				bad("label group %d is empty", i+1)
			}
			for _, l := range g {
				if j, dup := seen[l]; dup {
					bad("label %q is in groups %d and %d", l, j+1, i+1)
				}
				seen[l] = i
			}
		}
	}
	if m == SplitDirichlet {
		if !(s.Alpha > 0) || math.IsInf(s.Alpha, 0) {
			bad("dirichlet α is %v; it must be positive and finite", s.Alpha)
		}
	} else if s.Alpha != 0 {
		bad("method %s takes no α", m)
	}
	if n := s.listLen(); n > 0 && s.Parties > 0 && s.Parties != n {
		bad("%d parties, but the spec lists %d", s.Parties, n)
	}
	return errors.Join(errs...)
}

// listLen is the number of parties a list in the spec fixes, or 0.
func (s SplitSpec) listLen() int {
	switch {
	case len(s.Sizes) > 0:
		return len(s.Sizes)
	case len(s.Counts) > 0:
		return len(s.Counts)
	case len(s.Groups) > 0:
		return len(s.Groups)
	}
	return 0
}

// NumParties returns the number of parties the spec makes from a corpus
// with the given number of input files (used by method files only).
func (s SplitSpec) NumParties(files int) int {
	if n := s.listLen(); n > 0 {
		return n
	}
	if s.method() == SplitFiles {
		return files
	}
	if s.Parties > 0 {
		return s.Parties
	}
	return 1
}

// String returns the spec in the form ParseSplit reads.
func (s SplitSpec) String() string {
	m := s.method()
	var b strings.Builder
	switch m {
	case SplitSizes:
		b.WriteString("sizes=")
		if len(s.Sizes) == 0 {
			writeList(&b, slices.Repeat([]float64{1}, max(s.Parties, 1)))
		} else {
			writeList(&b, s.Sizes)
		}
		return b.String()
	case SplitCounts:
		b.WriteString("counts=")
		for i, c := range s.Counts {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Itoa(c))
		}
		return b.String()
	case SplitLabels:
		b.WriteString("labels")
		if len(s.Groups) > 0 {
			b.WriteByte('=')
			for i, g := range s.Groups {
				if i > 0 {
					b.WriteByte(';')
				}
				b.WriteString(strings.Join(g, ","))
			}
		}
	case SplitDirichlet:
		b.WriteString("dirichlet=" + strconv.FormatFloat(s.Alpha, 'g', -1, 64))
	default:
		b.WriteString(m)
	}
	if len(s.Sizes) > 0 {
		b.WriteString(":sizes=")
		writeList(&b, s.Sizes)
	}
	return b.String()
}

func writeList(b *strings.Builder, xs []float64) {
	for i, x := range xs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatFloat(x, 'g', -1, 64))
	}
}

// ParseSplit parses the string form of a SplitSpec (see SplitSpec). The
// result has Parties 0; set it when the form does not fix the number of
// parties (labels, dirichlet=α).
func ParseSplit(str string) (SplitSpec, error) {
	fail := func(format string, args ...any) (SplitSpec, error) {
		return SplitSpec{}, fmt.Errorf("corpus: split %q: "+format, append([]any{str}, args...)...)
	}
	head, tail, _ := strings.Cut(str, ":")
	name, arg, hasArg := strings.Cut(head, "=")
	var s SplitSpec
	switch name {
	case SplitSizes, SplitCounts:
		if !hasArg || tail != "" {
			return fail("want %s=N,N,...", name)
		}
		s.Method = name
		if name == SplitSizes {
			xs, err := parseFloats(arg)
			if err != nil {
				return fail("%v", err)
			}
			s.Sizes = xs
		} else {
			for f := range strings.SplitSeq(arg, ",") {
				n, err := strconv.Atoi(strings.TrimSpace(f))
				if err != nil {
					return fail("count %q is not an integer", f)
				}
				s.Counts = append(s.Counts, n)
			}
		}
	case SplitLabels:
		s.Method = name
		if hasArg {
			// Explicit groups: everything after "labels=" (labels may
			// contain ':'), parties separated by ';', labels by ','.
			_, groups, _ := strings.Cut(str, "=")
			for g := range strings.SplitSeq(groups, ";") {
				var group []string
				for l := range strings.SplitSeq(g, ",") {
					if l = strings.TrimSpace(l); l != "" {
						group = append(group, l)
					}
				}
				s.Groups = append(s.Groups, group)
			}
			tail = ""
		}
	case SplitDirichlet:
		s.Method = name
		if !hasArg {
			return fail("want dirichlet=α")
		}
		a, err := strconv.ParseFloat(strings.TrimSpace(arg), 64)
		if err != nil {
			return fail("α %q is not a number", arg)
		}
		s.Alpha = a
	case SplitFiles:
		if hasArg || tail != "" {
			return fail("files takes no arguments")
		}
		s.Method = name
	default:
		return fail("unknown method %q (want sizes=, counts=, labels, dirichlet= or files)", name)
	}
	if tail != "" {
		rest, ok := strings.CutPrefix(tail, "sizes=")
		if !ok {
			return fail("want %s:sizes=N,N,...", name)
		}
		xs, err := parseFloats(rest)
		if err != nil {
			return fail("%v", err)
		}
		s.Sizes = xs
	}
	if err := s.Validate(); err != nil {
		return SplitSpec{}, fmt.Errorf("corpus: split %q: %w", str, err)
	}
	return s, nil
}

func parseFloats(list string) ([]float64, error) {
	var xs []float64
	for f := range strings.SplitSeq(list, ",") {
		x, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			return nil, fmt.Errorf("size %q is not a number", f)
		}
		xs = append(xs, x)
	}
	return xs, nil
}

// Split divides c among parties as spec says and returns one corpus per
// party. The parties' corpora share c's vocabulary (V and word ids) and keep
// units, IDs, labels and sources; each holds its documents in c's order.
// Every document goes to exactly one party, except beyond the total of a
// counts split. The result depends only on c, spec and the stream r (needed
// by sizes, counts and dirichlet); it fails when a party would get no
// document.
func Split(c *Corpus, spec SplitSpec, r *rand.Rand) ([]*Corpus, error) {
	parts, err := Partition(c, spec, r)
	if err != nil {
		return nil, err
	}
	out := make([]*Corpus, len(parts))
	for p, docs := range parts {
		out[p] = c.Subset(docs)
	}
	return out, nil
}

// Partition returns the document indexes of each party, as Split would
// assign them, each list in increasing order.
func Partition(c *Corpus, spec SplitSpec, r *rand.Rand) ([][]int, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	D := c.NumDocs()
	P := spec.NumParties(len(c.Sources))
	m := spec.method()
	if r == nil && (m == SplitSizes || m == SplitCounts || m == SplitDirichlet) {
		return nil, fmt.Errorf("corpus: split %s: no random source given", m)
	}
	if m == SplitFiles && c.DocSource == nil {
		return nil, errors.New("corpus: split files: the corpus does not record its input files")
	}
	if P < 1 {
		return nil, fmt.Errorf("corpus: split %s: no parties", m)
	}
	if D < P {
		return nil, fmt.Errorf("corpus: split %s: %d documents cannot fill %d parties", m, D, P)
	}
	var (
		parts [][]int
		err   error
	)
	switch m {
	case SplitSizes:
		parts = cut(r.Perm(D), apportion(D, spec.sizes(P)))
	case SplitCounts:
		total := 0
		for _, n := range spec.Counts {
			total += n
		}
		if total > D {
			return nil, fmt.Errorf("corpus: split counts: %d documents requested, the corpus has %d", total, D)
		}
		parts = cut(r.Perm(D), spec.Counts)
	case SplitLabels:
		parts, err = splitLabels(c, spec, P)
	case SplitDirichlet:
		parts, err = splitDirichlet(c, spec, P, r)
	case SplitFiles:
		if spec.Parties > 0 && spec.Parties != P {
			return nil, fmt.Errorf("corpus: split files: %d parties, but the corpus comes from %d files", spec.Parties, P)
		}
		parts, err = splitFiles(c, P)
	}
	if err != nil {
		return nil, err
	}
	for p, docs := range parts {
		if len(docs) == 0 {
			return nil, fmt.Errorf("corpus: split %s: party %d gets no documents", spec, p)
		}
		slices.Sort(docs)
	}
	return parts, nil
}

// sizes returns the relative sizes of P parties (equal when none are set).
func (s SplitSpec) sizes(P int) []float64 {
	if len(s.Sizes) > 0 {
		return s.Sizes
	}
	return slices.Repeat([]float64{1}, P)
}

// apportion divides n items in proportion to w by the largest-remainder
// method, ties going to the lower index. Each share is at least 1 when
// n ≥ len(w), taken from the largest shares.
func apportion(n int, w []float64) []int {
	sum := 0.0
	for _, x := range w {
		sum += x
	}
	out := make([]int, len(w))
	type rem struct {
		i int
		f float64
	}
	rems := make([]rem, len(w))
	given := 0
	for i, x := range w {
		q := float64(n) * x / sum
		out[i] = int(math.Floor(q))
		given += out[i]
		rems[i] = rem{i, q - math.Floor(q)}
	}
	slices.SortStableFunc(rems, func(a, b rem) int {
		switch {
		case a.f > b.f:
			return -1
		case a.f < b.f:
			return 1
		}
		return 0
	})
	for k := 0; given < n; k++ {
		out[rems[k%len(rems)].i]++
		given++
	}
	if n >= len(w) {
		for i := range out {
			for out[i] == 0 {
				j := argmax(out)
				out[j]--
				out[i]++
			}
		}
	}
	return out
}

func argmax(xs []int) int {
	j := 0
	for i, x := range xs {
		if x > xs[j] {
			j = i
		}
	}
	return j
}

// cut gives consecutive runs of order, of the given lengths, to the parties.
func cut(order []int, counts []int) [][]int {
	parts := make([][]int, len(counts))
	at := 0
	for p, n := range counts {
		parts[p] = slices.Clone(order[at : at+n])
		at += n
	}
	return parts
}

// labelIndex returns the sorted distinct labels of c and the documents of
// each, failing when a document has no label.
func labelIndex(c *Corpus, method string) ([]string, [][]int, error) {
	if c.Labels == nil {
		return nil, nil, fmt.Errorf("corpus: split %s: the documents have no labels", method)
	}
	missing := 0
	first := ""
	for d, l := range c.Labels {
		if l == "" {
			if missing == 0 && c.IDs != nil {
				first = " (first: " + c.IDs[d] + ")"
			}
			missing++
		}
	}
	if missing > 0 {
		return nil, nil, fmt.Errorf("corpus: split %s: %d documents have no label%s", method, missing, first)
	}
	labels := slices.Clone(c.Labels)
	slices.Sort(labels)
	labels = slices.Compact(labels)
	docs := make([][]int, len(labels))
	for d, l := range c.Labels {
		i, _ := slices.BinarySearch(labels, l)
		docs[i] = append(docs[i], d)
	}
	return labels, docs, nil
}

// splitLabels assigns whole labels to parties. With explicit groups, group
// p goes to party p and every label must be in exactly one group. Otherwise
// labels are taken in decreasing order of document count (ties by label):
// the P largest go one to each party, largest label to largest target size;
// every later label goes to the party furthest below its target
// n·size_p/Σsize (ties to the lower party index). No randomness is used.
func splitLabels(c *Corpus, spec SplitSpec, P int) ([][]int, error) {
	labels, docs, err := labelIndex(c, SplitLabels)
	if err != nil {
		return nil, err
	}
	parts := make([][]int, P)
	if len(spec.Groups) > 0 {
		owner := make([]int, len(labels))
		for i := range owner {
			owner[i] = -1
		}
		for p, g := range spec.Groups {
			for _, l := range g {
				i, ok := slices.BinarySearch(labels, l)
				if !ok {
					return nil, fmt.Errorf("corpus: split labels: label %q of group %d does not occur in the corpus", l, p+1)
				}
				owner[i] = p
			}
		}
		for i, p := range owner {
			if p < 0 {
				return nil, fmt.Errorf("corpus: split labels: label %q is in no group", labels[i])
			}
			parts[p] = append(parts[p], docs[i]...)
		}
		return parts, nil
	}
	if len(labels) < P {
		return nil, fmt.Errorf("corpus: split labels: %d labels cannot be divided among %d parties", len(labels), P)
	}
	order := make([]int, len(labels))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return len(docs[b]) - len(docs[a]) })
	w := spec.sizes(P)
	sum := 0.0
	for _, x := range w {
		sum += x
	}
	target := make([]float64, P)
	for p, x := range w {
		target[p] = float64(c.NumDocs()) * x / sum
	}
	byTarget := make([]int, P)
	for p := range byTarget {
		byTarget[p] = p
	}
	slices.SortStableFunc(byTarget, func(a, b int) int {
		switch {
		case target[a] > target[b]:
			return -1
		case target[a] < target[b]:
			return 1
		}
		return 0
	})
	have := make([]float64, P)
	for k, i := range order {
		p := 0
		if k < P {
			p = byTarget[k]
		} else {
			for q := 1; q < P; q++ {
				if target[q]-have[q] > target[p]-have[p] {
					p = q
				}
			}
		}
		parts[p] = append(parts[p], docs[i]...)
		have[p] += float64(len(docs[i]))
	}
	return parts, nil
}

// splitDirichlet implements the non-IID split of Hsu, Qi and Brown (2019):
// party p draws its label proportions q_p ~ Dirichlet(α·prior), prior the
// corpus label frequencies, and gets n_p documents (sizes apportioned from
// spec.Sizes, equal by default). Documents are dealt one at a time, parties
// in turn: party p draws a label from q_p restricted to labels with
// documents left and takes a random remaining document of it; when all of
// its labels are used up it draws from the remaining documents uniformly.
// Every document is assigned exactly once.
func splitDirichlet(c *Corpus, spec SplitSpec, P int, r *rand.Rand) ([][]int, error) {
	_, docs, err := labelIndex(c, SplitDirichlet)
	if err != nil {
		return nil, err
	}
	D, L := c.NumDocs(), len(docs)
	q := make([][]float64, P)
	for p := range q {
		q[p] = make([]float64, L)
		for l := range docs {
			q[p][l] = spec.Alpha * float64(len(docs[l])) / float64(D)
		}
		dirichlet(q[p], r)
	}
	// Shuffled pools; documents are taken from the end.
	pools := make([][]int, L)
	left := D
	for l := range docs {
		pools[l] = slices.Clone(docs[l])
		r.Shuffle(len(pools[l]), func(i, j int) { pools[l][i], pools[l][j] = pools[l][j], pools[l][i] })
	}
	need := apportion(D, spec.sizes(P))
	parts := make([][]int, P)
	for left > 0 {
		for p := range P {
			if len(parts[p]) == need[p] {
				continue
			}
			mass := 0.0
			for l, pool := range pools {
				if len(pool) > 0 {
					mass += q[p][l]
				}
			}
			var l int
			if mass > 0 {
				l = pick(r.Float64()*mass, func(l int) float64 {
					if len(pools[l]) == 0 {
						return 0
					}
					return q[p][l]
				}, L)
			} else {
				l = pick(float64(r.IntN(left))+0.5, func(l int) float64 { return float64(len(pools[l])) }, L)
			}
			n := len(pools[l])
			parts[p] = append(parts[p], pools[l][n-1])
			pools[l] = pools[l][:n-1]
			left--
		}
	}
	return parts, nil
}

// pick returns the first index i of [0, n) where the running sum of w
// exceeds u, skipping zero weights; rounding never selects a zero weight.
func pick(u float64, w func(int) float64, n int) int {
	last := -1
	for i := range n {
		x := w(i)
		if x <= 0 {
			continue
		}
		last = i
		if u < x {
			return i
		}
		u -= x
	}
	return last
}

// dirichlet replaces the concentration parameters a with one draw from
// Dirichlet(a). Gamma variates are drawn in log space, log G(a) =
// log G(a+1) + log(U)/a (Marsaglia & Tsang 2000, §6), so tiny parameters
// (α·p ≪ 1) do not underflow to an all-zero vector.
func dirichlet(a []float64, r *rand.Rand) {
	hi := math.Inf(-1)
	for i, x := range a {
		g := distuv.Gamma{Alpha: x + 1, Beta: 1, Src: r}.Rand()
		u := 1 - r.Float64() // in (0, 1]
		a[i] = math.Log(g) + math.Log(u)/x
		hi = max(hi, a[i])
	}
	sum := 0.0
	for i := range a {
		a[i] = math.Exp(a[i] - hi)
		sum += a[i]
	}
	for i := range a {
		a[i] /= sum
	}
}

// splitFiles gives party i the documents read from Sources[i].
func splitFiles(c *Corpus, P int) ([][]int, error) {
	if P != len(c.Sources) {
		return nil, fmt.Errorf("corpus: split files: %d parties, but the corpus comes from %d files", P, len(c.Sources))
	}
	parts := make([][]int, P)
	for d, s := range c.DocSource {
		parts[s] = append(parts[s], d)
	}
	for p, docs := range parts {
		if len(docs) == 0 {
			return nil, fmt.Errorf("corpus: split files: %s has no documents", c.Sources[p])
		}
	}
	return parts, nil
}
