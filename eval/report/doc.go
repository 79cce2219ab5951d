// Package report writes the HTML report of federated topic-model runs: one
// self-contained page (inline CSS and SVG, no script, nothing loaded from
// the network) made only from what runs leave on disk — run records, model
// files and experiment results — so a consortium can judge a federation
// from pictures: did it beat each party alone, what did privacy cost, how
// much crossed the network, and what are the topics.
//
// Sections, each left out when the runs hold nothing for it:
//
//   - Setup: algorithm, parties, rounds, K, V, seed, data, time, traffic.
//   - Privacy statement (docs/privacy.md, after TensorFlow Privacy's
//     privacy statements): privacy unit, neighbouring relation, accountant,
//     mechanisms, ε and δ per party, number of releases, what was and was
//     never released.
//   - Convergence: held-out perplexity and log-likelihood against rounds,
//     one line per run (or per party's local model), single-party and
//     pooled baselines as reference lines (document completion, Wallach,
//     Murray, Salakhutdinov and Mimno, "Evaluation methods for topic
//     models", ICML 2009).
//   - Communication: bytes per party per round, quality against cumulative
//     bytes (the comparison of FTM, Wang et al., CIKM 2019, Fig. 6).
//   - Privacy and utility: final quality against ε, when the runs spent
//     different ε.
//   - Parties: data, participation, ε, traffic and model quality per party.
//   - Topics: top words of the global model, the party topics each FTM
//     topic merged, and each party's local model.
//   - Experiments: any E1–E8 result files (docs/experiments.md), plotted and
//     tabulated.
//
// Plots are drawn by gonum.org/v1/plot into SVG with labelled axes and
// units; legends are HTML beneath each plot.
//
// # Run directories
//
// A run directory holds (names relative to it):
//
//   - run.jsonl, the run record that `fedtopic simulate` and `fedtopic
//     coordinator` write: one JSON line per round attempt, {"type":
//     "round", "round", "attempt", "committed", "replied", "dropped",
//     "bytes": [{"party", "up", "down"}], "spent": [{"party", "events"}],
//     "epsilon": [{"party", "epsilon", "delta", "unit", "accountant",
//     "releases", "error"}] (each party's spend composed so far),
//     "duration_s", "metrics": {"perplexity": 812.5, "log_likelihood":
//     -52110.3, ...} (the global model's held-out metrics), "error"}; then
//     one summary line {"type": "summary", "run", "algorithm", "parties",
//     "seed", "rounds", "bytes", "epsilon", "duration_s", "metrics",
//     "error"}. A writer may add, on round lines, "party_metrics" ([{"party",
//     "metrics"}], each party's local model) and on the summary "model",
//     "topics", "vocab", "corpus", "split", "params", "party_data"
//     ([{"party", "docs", "tokens", "budget_epsilon", "budget_delta"}]),
//     "privacy" ({"unit", "neighbouring", "accountant", "released": [...],
//     "notes": [...]}), "party_metrics", "baselines" ([{"name", "kind":
//     "single-party" or "pooled", "party", "metrics"}]), "topic_merges"
//     ([{"global": 3, "members": [{"party": "p1", "topic": 7,
//     "similarity": 0.61}]}]) and "models" ({"global": "model", "parties":
//     [{"party", "path"}]}); a party's "document_epsilon" in "epsilon" is
//     its document-level spend. Every field is optional; the report shows
//     what is there and says what is not. A record without a summary (a
//     stopped run) still shows its rounds.
//   - model, the global model (topic.Load), and PARTY.model, each party's
//     final local model (p1.model, ...), unless the summary's "models"
//     names other files.
//   - e1.jsonl … e8.jsonl (also e3-bytes.jsonl and the like) and attacks.jsonl, experiment
//     results: JSON lines of flat objects. A line {"plot": {"x": COLUMN,
//     "y": COLUMN, "series": [COLUMN...]}} chooses what is plotted;
//     otherwise x is the first of round, iteration, bytes, epsilon, tau,
//     sigma, k, ... and y the first of log_likelihood, perplexity,
//     accuracy, macro_f1, ... that the file has.
//
// A directory without run.jsonl stands for its subdirectories that have
// one, so a sweep's parent directory gives one report of all its runs.
// Bad input — a line that is not JSON, an unknown summary field, an
// impossible value, a corrupt model file — is an error naming the file and
// line.
//
// Usage:
//
//	err := report.WriteFile(ctx, "report.html", []string{"runs/ftm-eps8", "runs/ftm-eps11"}, report.Options{})
//	err = report.Write(ctx, w, dirs, report.Options{Title: "Hospital consortium", TopWords: 12})
//
// See example_test.go for a runnable example.
//
// Determinism: the page is a deterministic function of the files read and
// Options: runs appear in the order given (subdirectories by name), parties
// in record order, metrics and parameters sorted by name, and the page
// carries no clock time. Privacy: the report spends no privacy budget and
// reads no raw text; it shows what the runs released and recorded, so it
// is as private as the run records and models it is made from. It shows
// the parties' own accountants' ε and δ and never recomputes them.
package report
