package report

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/internal/rng"
	"github.com/fedtopic/fedtopic/privacy"
	"github.com/fedtopic/fedtopic/topic"
)

// fixture describes a synthetic run directory with the shape `fedtopic
// simulate` writes, for tests that must not depend on a simulator's
// numbers. Every value is a deterministic function of the fields.
type fixture struct {
	Algorithm   string
	Parties     int
	Rounds      int
	Topics      int
	Epsilon     float64 // ε per party per round; 0 = no privacy
	Failed      int     // attempts that missed the quorum, before round 2
	Seed        uint64
	PartyModels bool // write each party's local model and its metrics
	Baselines   bool // single-party and pooled baselines in the summary
	Merges      bool // FTM topic merges in the summary
	Experiment  bool // an e3.jsonl result file
	NoSummary   bool // a stopped run: no summary line
}

// themes are the fixture vocabulary: topic k favours theme k mod 8.
var themes = [][]string{
	{"patient", "clinic", "nurse", "dose", "ward", "surgery", "diagnosis", "therapy", "symptom", "doctor"},
	{"loan", "credit", "bank", "interest", "deposit", "mortgage", "account", "payment", "branch", "rate"},
	{"river", "valley", "mountain", "forest", "lake", "glacier", "meadow", "canyon", "delta", "ridge"},
	{"engine", "wheel", "brake", "gear", "axle", "piston", "clutch", "chassis", "throttle", "exhaust"},
	{"court", "judge", "appeal", "verdict", "statute", "lawyer", "trial", "witness", "ruling", "contract"},
	{"harvest", "wheat", "barley", "orchard", "soil", "tractor", "seed", "grain", "cattle", "pasture"},
	{"violin", "melody", "chord", "rhythm", "choir", "tempo", "sonata", "opera", "lyric", "drum"},
	{"planet", "orbit", "comet", "galaxy", "telescope", "nebula", "asteroid", "eclipse", "lunar", "solar"},
}

// fixtureModel returns a K-topic model over the theme words, with rows
// drawn from seed.
func fixtureModel(k int, seed uint64, method string) *topic.Model {
	var vocab []string
	for _, th := range themes {
		vocab = append(vocab, th...)
	}
	v := len(vocab)
	r := rng.Derive(seed, "fixture-model")
	phi := make([]float64, k*v)
	for t := range k {
		row := phi[t*v : (t+1)*v]
		s := 0.0
		for w := range row {
			x := 0.002 + 0.01*r.Float64()
			if w/10 == t%len(themes) {
				x += 1 / float64(2+w%10) * (0.5 + r.Float64())
			}
			row[w] = x
			s += x
		}
		for w := range row {
			row[w] /= s
		}
	}
	alpha := make([]float64, k)
	for t := range alpha {
		alpha[t] = 0.1
	}
	return &topic.Model{K: k, V: v, Phi: phi, Vocab: vocab, Alpha: alpha, Beta: 0.01,
		Prov: topic.Provenance{Method: method, Seed: seed, Iterations: 50}}
}

// writeFixture writes the run directory f describes into dir.
func writeFixture(t testing.TB, dir string, f fixture) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if f.Algorithm == "" {
		f.Algorithm = "ftm"
	}
	r := rng.Derive(f.Seed, "fixture-run")
	ids := make([]string, f.Parties)
	for i := range ids {
		ids[i] = fmt.Sprintf("p%d", i+1)
	}
	// Quality improves like a + b·e^(−round/3); more privacy (smaller ε)
	// costs quality.
	cost := 0.0
	if f.Epsilon > 0 {
		cost = 120 / f.Epsilon
	}
	perp := func(round int, offset float64) float64 {
		return 420 + cost + offset + 600*math.Exp(-float64(round)/3) + 4*r.Float64()
	}
	var lines []any
	spentTotal := make([]float64, f.Parties)
	releases := make([]int, f.Parties)
	epsilon := func() []fed.PartyEpsilon {
		if f.Epsilon == 0 {
			return nil
		}
		out := make([]fed.PartyEpsilon, f.Parties)
		for i, id := range ids {
			out[i] = fed.PartyEpsilon{Party: id, Epsilon: spentTotal[i], Unit: "word occurrence", Accountant: "pure", Releases: releases[i]}
		}
		return out
	}
	attempt := func(round, n int, committed bool) fed.RoundLine {
		rl := fed.RoundLine{Type: fed.TypeRound, Round: round, Attempt: n, Committed: committed, DurationS: 0.8 + 0.4*r.Float64()}
		if !committed {
			rl.Error = "quorum not reached"
		}
		for i, id := range ids {
			if !committed && i >= 2 {
				rl.Dropped = append(rl.Dropped, id)
				continue
			}
			rl.Replied = append(rl.Replied, id)
			rl.Bytes = append(rl.Bytes, fed.Traffic{Party: id, Up: int64(20000*(i+1) + r.IntN(3000)), Down: int64(60000 + r.IntN(5000))})
			if f.Epsilon > 0 {
				rl.Spent = append(rl.Spent, fed.PartySpend{Party: id, Events: []privacy.Event{{
					Mechanism: privacy.MechanismThresholdedLaplace, Epsilon: f.Epsilon, Unit: "word occurrence", Count: 1}}})
				spentTotal[i] += f.Epsilon
				releases[i]++
			}
		}
		rl.Epsilon = epsilon()
		return rl
	}
	for round := 1; round <= f.Rounds; round++ {
		if round == 2 {
			for a := range f.Failed {
				lines = append(lines, attempt(round, a+1, false))
			}
		}
		rl := attempt(round, f.Failed*boolInt(round == 2)+1, true)
		rl.Metrics = map[string]float64{MetricPerplexity: perp(round, 0)}
		rl.Metrics[MetricLogLikelihood] = -8000 * math.Log(rl.Metrics[MetricPerplexity])
		if f.PartyModels {
			for i, id := range ids {
				rl.PartyMetrics = append(rl.PartyMetrics, fed.PartyMetrics{Party: id, Metrics: map[string]float64{MetricPerplexity: perp(round, 60+25*float64(i))}})
			}
		}
		lines = append(lines, rl)
	}
	if !f.NoSummary {
		s := fed.SummaryLine{
			Type: fed.TypeSummary, Run: filepath.Base(dir), Algorithm: f.Algorithm, Parties: ids, Seed: f.Seed, Rounds: f.Rounds,
			Epsilon: epsilon(), DurationS: float64(f.Rounds),
			Metrics: map[string]float64{MetricPerplexity: perp(f.Rounds, 0), "topic_diversity": 0.82},
			Model:   "lda", Topics: f.Topics, Vocab: 80,
			Corpus: "synthetic themes: 1,200 documents, 48,000 tokens", Split: "sizes=1,2,3",
			Params: map[string]string{"tau": "0.2", "iterations": "50", "epsilon": fmt.Sprint(f.Epsilon)},
		}
		s.Metrics[MetricLogLikelihood] = -8000 * math.Log(s.Metrics[MetricPerplexity])
		for i, id := range ids {
			pd := fed.PartyData{Party: id, Docs: 200 * (i + 1), Tokens: 8000 * (i + 1)}
			if f.Epsilon > 0 {
				pd.BudgetEpsilon = 1000
				s.Epsilon[i].DocumentEpsilon = spentTotal[i] * 60
			}
			s.PartyData = append(s.PartyData, pd)
		}
		if f.Epsilon > 0 {
			s.Privacy = &fed.Statement{Unit: "word occurrence",
				Released: []string{"each party's thresholded noised topic-word counts, once per round", "each party's document count"}}
		}
		if f.Baselines {
			for i, id := range ids {
				s.Baselines = append(s.Baselines, fed.Baseline{Kind: "single-party", Party: id,
					Metrics: map[string]float64{MetricPerplexity: 560 + 30*float64(f.Parties-i)}})
			}
			s.Baselines = append(s.Baselines, fed.Baseline{Kind: "pooled", Metrics: map[string]float64{MetricPerplexity: 430}})
		}
		if f.Merges {
			for k := range f.Topics {
				m := fed.TopicMerge{Global: k}
				for i, id := range ids {
					if (k+i)%2 == 0 {
						m.Members = append(m.Members, fed.TopicRef{Party: id, Topic: (k + i) % f.Topics, Similarity: 0.5 + 0.05*float64(i)})
					}
				}
				s.TopicMerges = append(s.TopicMerges, m)
			}
		}
		if f.PartyModels {
			s.Models = &fed.ModelFiles{Global: GlobalModelFile}
			for _, id := range ids {
				s.Models.Parties = append(s.Models.Parties, fed.PartyModel{Party: id, Path: id + ".model"})
			}
		}
		lines = append(lines, s)
	}
	fh, err := os.Create(filepath.Join(dir, RecordFile))
	if err != nil {
		t.Fatal(err)
	}
	enc := json.NewEncoder(fh)
	for _, l := range lines {
		if err := enc.Encode(l); err != nil {
			t.Fatal(err)
		}
	}
	if err := fh.Close(); err != nil {
		t.Fatal(err)
	}
	if err := topic.Save(filepath.Join(dir, GlobalModelFile), fixtureModel(f.Topics, f.Seed, f.Algorithm)); err != nil {
		t.Fatal(err)
	}
	if f.PartyModels {
		for i, id := range ids {
			if err := topic.Save(filepath.Join(dir, id+".model"), fixtureModel(f.Topics, f.Seed+uint64(i)+1, "lda")); err != nil {
				t.Fatal(err)
			}
		}
	}
	if f.Experiment {
		var b []byte
		b = append(b, `{"plot": {"x": "round", "y": "log_likelihood", "series": ["method", "parties"]}}`+"\n"...)
		for _, method := range []string{"ftm", "adlda"} {
			for _, parties := range []int{3, 4} {
				for round := 1; round <= 5; round++ {
					ll := -60000 + 4000*math.Log(float64(round))
					if method == "adlda" {
						ll -= 5000
					}
					b = fmt.Appendf(b, `{"method": %q, "parties": %d, "round": %d, "bytes": %d, "log_likelihood": %.1f}`+"\n",
						method, parties, round, round*150000*parties, ll-300*float64(parties))
				}
			}
		}
		if err := os.WriteFile(filepath.Join(dir, "e3.jsonl"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
