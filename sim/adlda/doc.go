// Package adlda is approximate distributed LDA (AD-LDA; Newman, Asuncion,
// Smyth and Welling, "Distributed Algorithms for Topic Models", JMLR 10,
// 2009) as a federated algorithm: the conventional, non-private distributed
// baseline whose communication FTM is compared with (experiment E3,
// docs/experiments.md).
//
// Every party keeps the topic assignment of each of its tokens, drawn
// uniformly at random at the start. Each round every party runs one
// collapsed Gibbs sweep over its documents against its copy of the global
// topic-word counts G plus its own changes D,
//
//	p(z_i = k) ∝ (C_dk^(−i) + α)·(n_kw^(−i) + β)/(n_k^(−i) + Vβ),  n = G + D,
//
// and sends the change of its counts, a sparse list of (index, delta); the
// coordinator adds the deltas to G and broadcasts it. In its first round a
// party has no G yet: it sweeps against its own counts and sends them whole.
// After Rounds rounds the model is φ_kw = (G_kw + β)/(G_k + Vβ); each
// party's local model is the same estimate from its own counts. Messages are
// sparse varint-encoded integer counts (encoding.go), so the bytes per party
// and round are what a careful implementation would send.
//
// AD-LDA assumes synchronous rounds: a party whose update is not aggregated
// (late or dropped) leaves G short of its change, so run it with the quorum
// at all parties (the default).
//
//	alg := adlda.Algorithm // a fed.Algorithm; parameters as JSON: {"k": 50, "rounds": 200}
//
// Determinism: within a party, documents are cut into fixed blocks of at
// least BlockSize tokens; block b of sweep t samples with its own view of
// the counts (G plus the block's own changes, the AD-LDA approximation one
// level down) and its own stream rng.Derive(seed, "adlda", "party", id,
// "sweep", t, "block", b), id the party's identity, so a deployed party,
// which knows only itself, draws what it draws in a simulation. Workers run blocks in parallel and never change
// the result. Sums over updates run in party order.
//
// Privacy: none. Counts are released exactly; the package emits no privacy
// events. It is a baseline, not a private method. See example_test.go.
package adlda
