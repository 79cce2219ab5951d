// Package vocabround is the private vocabulary round (docs/methods.md) as
// a one-round federated algorithm: before training, each party releases
// only the words whose noisy document frequency passes a differentially
// private threshold (privacy.PartitionSelection: Laplace thresholding with
// each document contributing at most l₀ distinct words), the coordinator
// takes the union, and the broadcast vocabulary — sorted, so word ids mean
// the same everywhere — is what every party trains on.
//
//	l, _ := vocabround.NewLearner(params, docs, rng.Secure()) // docs: each a list of the party's words
//	// run over the engine like any fed.Learner; the final broadcast is the vocabulary
//	words, _ := vocabround.Decode(final, params)
//
// Privacy: each party's release is (ε, δ)-DP for the unit "document"
// (adding or removing one document), with the δ that includes the boundary
// mass of the threshold; its Event goes to the party's ledger before the
// words leave, like any release. Only the selected words leave a party —
// not their counts. The coordinator's union is post-processing.
//
// Determinism: the words of a release are sorted and the noise is drawn in
// word order from the stream the learner was given, so a seeded stream
// gives the same vocabulary every time. Production parties pass a stream
// keyed from crypto/rand. See example_test.go.
package vocabround
