package report

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/privacy"
	"github.com/fedtopic/fedtopic/topic"
)

// GlobalModelFile is the global model's file name inside a run directory,
// unless the run record's summary names another.
const GlobalModelFile = "model"

// PartyModelSuffix names a party's final local model in a run directory,
// after the party id (p1.model), unless the run record's summary names
// the files.
const PartyModelSuffix = ".model"

// run is one run directory as the report shows it.
type run struct {
	dir     string // as given
	name    string // short name, unique within the report
	rec     *record
	sum     fed.SummaryLine // the record's summary; zero if the run did not finish
	parties []string        // party ids in summary order, then in order of appearance
	global  *topic.Model
	locals  []localModel
	exps    []experiment
	notes   []string // what could not be read, shown to the reader
}

// localModel is one party's final local model.
type localModel struct {
	party string
	model *topic.Model
}

// loadRuns reads the run directories. A directory without a run record
// stands for its immediate subdirectories that have one (in name order),
// so `report runs/` shows a whole sweep; its experiment files are read
// either way.
func loadRuns(ctx context.Context, dirs []string) ([]*run, error) {
	var runs []*run
	for _, dir := range dirs {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("report: %w", err)
		}
		st, err := os.Stat(dir)
		if err != nil {
			return nil, fmt.Errorf("report: run directory: %w", err)
		}
		if !st.IsDir() {
			return nil, fmt.Errorf("report: %s is not a directory: give run directories written by 'fedtopic simulate'", dir)
		}
		if exists(filepath.Join(dir, RecordFile)) {
			r, err := loadRun(dir)
			if err != nil {
				return nil, err
			}
			runs = append(runs, r)
			continue
		}
		subs, err := runSubdirs(dir)
		if err != nil {
			return nil, err
		}
		exps, err := readExperiments(dir)
		if err != nil {
			return nil, err
		}
		if len(subs) == 0 && len(exps) == 0 {
			return nil, fmt.Errorf("report: %s has no %s, no experiment results (e1.jsonl … e8.jsonl, attacks.jsonl) and no subdirectory with a run record", dir, RecordFile)
		}
		if len(exps) > 0 {
			runs = append(runs, &run{dir: dir, exps: exps})
		}
		for _, sub := range subs {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("report: %w", err)
			}
			r, err := loadRun(sub)
			if err != nil {
				return nil, err
			}
			runs = append(runs, r)
		}
	}
	nameRuns(runs)
	return runs, nil
}

// runSubdirs lists the subdirectories of dir that hold a run record.
func runSubdirs(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	var subs []string
	for _, e := range entries { // ReadDir sorts by name
		if e.IsDir() && exists(filepath.Join(dir, e.Name(), RecordFile)) {
			subs = append(subs, filepath.Join(dir, e.Name()))
		}
	}
	return subs, nil
}

// loadRun reads one run directory: its record, models and experiments.
func loadRun(dir string) (*run, error) {
	rec, err := readRecord(filepath.Join(dir, RecordFile))
	if err != nil {
		return nil, err
	}
	r := &run{dir: dir, rec: rec, notes: rec.notes}
	switch {
	case rec.summary == nil:
		r.notes = append(r.notes, "The run record has no summary line: the run did not finish, or was stopped; rounds up to the last recorded one are shown.")
	case rec.summary.Error != "":
		r.notes = append(r.notes, "The run stopped early: "+rec.summary.Error)
	}
	if rec.summary != nil {
		r.sum = *rec.summary
	}
	r.parties = partyOrder(r)

	files := fed.ModelFiles{Global: GlobalModelFile}
	if m := r.sum.Models; m != nil {
		if m.Global != "" {
			files.Global = m.Global
		}
		files.Parties = m.Parties
	} else {
		for _, p := range r.parties {
			if name := p + PartyModelSuffix; filepath.IsLocal(name) && exists(filepath.Join(dir, name)) {
				files.Parties = append(files.Parties, fed.PartyModel{Party: p, Path: name})
			}
		}
	}
	r.global, err = loadModel(dir, files.Global)
	if err != nil {
		return nil, err
	}
	if r.global == nil {
		r.notes = append(r.notes, fmt.Sprintf("No global model file %s: topic tables are left out.", filepath.Join(dir, files.Global)))
	}
	for _, pm := range files.Parties {
		m, err := loadModel(dir, pm.Path)
		if err != nil {
			return nil, err
		}
		if m == nil {
			r.notes = append(r.notes, fmt.Sprintf("No local model file %s for party %s.", filepath.Join(dir, pm.Path), pm.Party))
			continue
		}
		r.locals = append(r.locals, localModel{party: pm.Party, model: m})
	}
	r.exps, err = readExperiments(dir)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// loadModel loads dir/rel, or returns nil if it does not exist.
func loadModel(dir, rel string) (*topic.Model, error) {
	path := filepath.Join(dir, filepath.FromSlash(rel))
	if !exists(path) {
		return nil, nil
	}
	m, err := topic.Load(path)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	return m, nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return !errors.Is(err, fs.ErrNotExist)
}

// partyOrder lists the run's parties: the summary's order, then any party
// seen first in the round lines.
func partyOrder(r *run) []string {
	var ids []string
	add := func(id string) {
		if id != "" && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	for _, p := range r.sum.Parties {
		add(p)
	}
	for _, rl := range r.rec.rounds {
		for _, tr := range rl.Bytes {
			add(tr.Party)
		}
		for _, id := range rl.Replied {
			add(id)
		}
		for _, id := range rl.Dropped {
			add(id)
		}
	}
	return ids
}

// nameRuns gives every run a short name: the base name of its directory,
// or more of its path where two would collide.
func nameRuns(runs []*run) {
	for depth := 1; depth < 16; depth++ {
		seen := map[string]int{}
		for _, r := range runs {
			r.name = lastElems(r.dir, depth)
			seen[r.name]++
		}
		unique := true
		for _, n := range seen {
			if n > 1 {
				unique = false
			}
		}
		if unique {
			return
		}
	}
	for i, r := range runs {
		r.name = fmt.Sprintf("%s (%d)", r.name, i+1)
	}
}

// lastElems returns the last n elements of path.
func lastElems(path string, n int) string {
	parts := strings.Split(filepath.ToSlash(filepath.Clean(path)), "/")
	if n > len(parts) {
		n = len(parts)
	}
	return strings.Join(parts[len(parts)-n:], "/")
}

// hasRecord reports whether r came from a run record (and is not only a
// directory of experiment results).
func (r *run) hasRecord() bool { return r.rec != nil }

// label names r in legends: its name and, if known, its algorithm.
func (r *run) label() string {
	if r.sum.Algorithm != "" && !strings.Contains(r.name, r.sum.Algorithm) {
		return r.name + " (" + r.sum.Algorithm + ")"
	}
	return r.name
}

// partyIndex returns the index of party id in r.parties, or -1.
func (r *run) partyIndex(id string) int { return slices.Index(r.parties, id) }

// metricSeries returns the rounds that recorded the global metric key and
// its values.
func (r *run) metricSeries(key string) (xs, ys []float64) {
	for _, rl := range r.rec.rounds {
		if v, ok := rl.Metrics[key]; ok {
			xs = append(xs, float64(rl.Round))
			ys = append(ys, v)
		}
	}
	return xs, ys
}

// partyMetricSeries is metricSeries for one party's local model.
func (r *run) partyMetricSeries(party, key string) (xs, ys []float64) {
	for _, rl := range r.rec.rounds {
		for _, pm := range rl.PartyMetrics {
			if v, ok := pm.Metrics[key]; ok && pm.Party == party {
				xs = append(xs, float64(rl.Round))
				ys = append(ys, v)
			}
		}
	}
	return xs, ys
}

// finalMetric returns the final global model's metric key: the summary's,
// else the last round's that has it.
func (r *run) finalMetric(key string) (float64, bool) {
	if v, ok := r.sum.Metrics[key]; ok {
		return v, true
	}
	if !r.hasRecord() {
		return 0, false
	}
	for i := len(r.rec.rounds) - 1; i >= 0; i-- {
		if v, ok := r.rec.rounds[i].Metrics[key]; ok {
			return v, true
		}
	}
	return 0, false
}

// finalPartyMetric returns party's final local metric key.
func (r *run) finalPartyMetric(party, key string) (float64, bool) {
	for _, pm := range r.sum.PartyMetrics {
		if v, ok := pm.Metrics[key]; ok && pm.Party == party {
			return v, true
		}
	}
	for i := len(r.rec.rounds) - 1; i >= 0; i-- {
		for _, pm := range r.rec.rounds[i].PartyMetrics {
			if v, ok := pm.Metrics[key]; ok && pm.Party == party {
				return v, true
			}
		}
	}
	return 0, false
}

// partyBytes returns, for every committed round, the bytes party sent and
// received.
func (r *run) partyBytes(party string) (rounds []float64, up, down []int64) {
	for _, rl := range r.rec.rounds {
		var u, d int64
		for _, tr := range rl.Bytes {
			if tr.Party == party {
				u += tr.Up
				d += tr.Down
			}
		}
		rounds = append(rounds, float64(rl.Round))
		up = append(up, u)
		down = append(down, d)
	}
	return rounds, up, down
}

// roundBytes returns the bytes all parties sent and received in each
// committed round.
func (r *run) roundBytes() []int64 {
	out := make([]int64, len(r.rec.rounds))
	for i, rl := range r.rec.rounds {
		for _, tr := range rl.Bytes {
			out[i] += tr.Up + tr.Down
		}
	}
	return out
}

// totalBytes returns the bytes all parties sent and received over the run,
// failed attempts included.
func (r *run) totalBytes() int64 {
	var n int64
	for _, rls := range [][]fed.RoundLine{r.rec.rounds, r.rec.failed} {
		for _, rl := range rls {
			for _, tr := range rl.Bytes {
				n += tr.Up + tr.Down
			}
		}
	}
	return n
}

// spend is what a party spent over a run and what it released.
type spend struct {
	epsilon, delta  float64
	documentEpsilon float64 // 0 if not recorded
	known           bool    // whether ε and δ were recorded
	unit            string
	accountant      string
	problem         string // why the accountant could not compose the events
	releases        int    // Σ event counts over the run
	mechanisms      []string
	assumptions     []string
	budgetEpsilon   float64
	budgetDelta     float64
}

// partySpend returns party's privacy spend: the summary's totals, else the
// last round's, and the mechanisms of the privacy events the rounds carry
// (failed attempts included: a party that sent is charged).
func (r *run) partySpend(party string) spend {
	var s spend
	found := false
	take := func(pes []fed.PartyEpsilon) {
		for _, pe := range pes {
			if pe.Party != party {
				continue
			}
			found = true
			s.known = pe.Error == ""
			s.epsilon, s.delta, s.documentEpsilon = pe.Epsilon, pe.Delta, pe.DocumentEpsilon
			s.unit, s.accountant, s.releases, s.problem = pe.Unit, pe.Accountant, pe.Releases, pe.Error
		}
	}
	take(r.sum.Epsilon)
	if !found && r.hasRecord() {
		for i := len(r.rec.rounds) - 1; i >= 0 && !found; i-- {
			take(r.rec.rounds[i].Epsilon)
		}
	}
	for _, pd := range r.sum.PartyData {
		if pd.Party == party {
			s.budgetEpsilon, s.budgetDelta = pd.BudgetEpsilon, pd.BudgetDelta
		}
	}
	if !r.hasRecord() {
		return s
	}
	counted := 0
	for _, rls := range [][]fed.RoundLine{r.rec.rounds, r.rec.failed} {
		for _, rl := range rls {
			for _, ps := range rl.Spent {
				if ps.Party != party {
					continue
				}
				counted += totalEvents(ps.Events)
				for _, e := range ps.Events {
					s.mechanisms = appendNew(s.mechanisms, e.Mechanism)
					s.assumptions = appendNew(s.assumptions, e.Assumption)
					if s.unit == "" {
						s.unit = e.Unit
					}
				}
			}
		}
	}
	if s.releases == 0 {
		s.releases = counted
	}
	return s
}

// events returns every privacy event of the run in round order, parties
// in record order, failed attempts last.
func (r *run) events() []privacy.Event {
	var out []privacy.Event
	for _, rls := range [][]fed.RoundLine{r.rec.rounds, r.rec.failed} {
		for _, rl := range rls {
			for _, ps := range rl.Spent {
				out = append(out, ps.Events...)
			}
		}
	}
	return out
}

// private reports whether the run used differential privacy: a privacy
// event or a positive recorded spend. (A privacy statement alone does not
// make a run private: a non-private run states what it released too.)
func (r *run) private() bool {
	if len(r.events()) > 0 {
		return true
	}
	for _, p := range r.parties {
		if sp := r.partySpend(p); sp.known && sp.epsilon > 0 {
			return true
		}
	}
	return false
}

// maxEpsilon returns the largest total ε any party spent, and whether any
// was recorded.
func (r *run) maxEpsilon() (float64, bool) {
	best, ok := math.Inf(-1), false
	for _, p := range r.parties {
		if s := r.partySpend(p); s.known {
			best, ok = max(best, s.epsilon), true
		}
	}
	return best, ok
}

// appendNew appends s to list unless it is empty or already there.
func appendNew(list []string, s string) []string {
	if s == "" || slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}
