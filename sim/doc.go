// Package sim runs federated scenarios in one process — the embedded
// posture of fedtopic (fedtopic simulate) — and writes their run records.
//
// A Scenario names an algorithm (a fed.Algorithm such as adlda.Algorithm),
// its parameters, one corpus per party over a shared vocabulary, a seed and
// how the federation behaves (quorum, deadlines, budgets, injected faults).
// Run plays it with the very same fed.Coordinator and fed.Party a
// deployment uses, connected by fed/inproc, which encodes every message, so
// byte counts are the wire's; each party charges its own durable
// accountant.Ledger. The run record is JSON lines: one RoundLine per round
// attempt (parties that replied or dropped, bytes per party, privacy each
// party declared and its composed ε so far, duration, metrics), then a
// SummaryLine. fedtopic coordinator writes the same format with Recorder.
//
//	res, err := sim.Run(ctx, sim.Scenario{Algorithm: adlda.Algorithm,
//		Params: json.RawMessage(`{"k": 20, "rounds": 50}`),
//		Corpora: parts, Vocab: words, Seed: 7, Record: f})
//	// res.Global: the global model; res.Locals: each party's local model.
//
// Determinism: a scenario and its seed give the same models, ledgers and
// run record (apart from durations) every time, whatever the scheduling
// (the engine aggregates in party order and every random stream is
// derived from the seed). Privacy: exactly what the algorithm releases; the
// ε in the run record is composed by privacy/accountant from what parties
// declared, and each party's ledger enforces its budget. See
// example_test.go.
package sim
