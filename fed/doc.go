// Package fed is the protocol core of fedtopic's federation engine: the seam
// between an algorithm and the engine, and the Coordinator and Party that
// run rounds over any transport. It knows nothing of the network; the
// transports are fed/inproc (one process, every message still encoded) and
// fed/fedgrpc (gRPC with mutual TLS).
//
// # The seam
//
// An algorithm is two pure halves (docs/packages.md): a Learner at each party
// (Learn(round, broadcast) → Step with the update and the privacy Events it
// releases) and an Aggregator at the coordinator (Init, then
// Aggregate(round, updates sorted by party) → Step with the next broadcast,
// per-party broadcasts allowed, Done at the end). A Validator checks every
// update's size, shape and values before the aggregator sees it. The
// Algorithm descriptor builds all three from a Setup; method packages export
// one. The engine — not the algorithm — moves bytes, checks budgets,
// retries, times out, checkpoints and counts bytes.
//
// # Protocol
//
// Parties only dial out. A party calls Join, then repeatedly Next (a long
// poll that returns the open round's task: round, attempt, a fresh random
// token and the broadcast) and Submit (its update echoing the token, or a
// refusal). The coordinator accepts one reply per party per attempt, only
// for the open round with the current token (late, stale, replayed and
// duplicate replies are refused), only from the party the transport
// authenticated, and only after the algorithm's Validator passed it. A
// round ends when every live party has replied or at its deadline; live
// parties that missed it are recorded as dropped and rejoin when they call
// again. With fewer valid updates than
// the quorum (MinParties) the attempt is aborted — nothing is aggregated and
// no coordinator noise is drawn — and retried up to MaxAttempts times.
//
// # Secure aggregation
//
// With CoordinatorConfig.SecureAggregation (and the same setting in every
// PartyConfig; Join refuses a mismatch) the coordinator learns only the
// sum of the surviving parties' updates (package fed/secagg, SecAgg of
// Bonawitz et al. 2017). An algorithm opts in by declaring its update a
// vector of sums: its Learner implements SumLearner and its Aggregator
// SumAggregator, both stating the vector's length, fixed-point grid and
// clip (SumSpec). Each attempt at a round then runs as four sub-rounds,
// each with a fresh token and its own deadline, whose requests travel in
// Task.SecAgg and replies in Submission.Payload: setup (with the
// broadcast; the party learns, charges its ledger, caches its vector and
// advertises keys), keys → shares, forward → masked vector, unmask →
// reveal; then AggregateSum gets the sum and who is in it. The quorum is
// the threshold t; below it the attempt aborts with nothing unmasked and
// is retried with a new session, the parties reusing their cached vector
// (no new noise). A party that answered an unmask request takes part in
// no other attempt at that round. The coordinator checkpoints the
// protocol's state after every stage and resends the pending requests
// after a restart; a party saves its protocol state before each reply
// leaves and answers a resent request with the same bytes. With
// SumSpec.Sigma each party adds its share of discrete Gaussian noise
// before masking and is charged for the worst case, exactly t survivors.
//
// # Durability
//
// With a state directory the coordinator checkpoints at every round boundary
// (temp file, fsync, rename, fsync of the directory; SHA-256 checksum and
// schema version) and a restarted coordinator resumes from it; a corrupted
// checkpoint stops it at once with an error wrapping ErrCheckpoint. A
// party charges its Ledger (durable, fsynced) before an update leaves,
// caches the update's exact bytes with its learner's state keyed by (run,
// party, round), and resends those bytes when the round is retried or after
// a restart: it never draws new noise for the same release. It refuses a
// round its budget cannot pay for — before drawing noise when the Learner
// is a Planner — and says so to the coordinator.
//
// # Usage
//
//	coord, err := fed.NewCoordinator(fed.CoordinatorConfig{Run: "r1", Algorithm: alg.Name,
//		Parties: []string{"p1", "p2", "p3"}, MinParties: 2}, agg, validator, fed.CoordinatorOptions{})
//	net, err := inproc.New(coord, inproc.Faults{})
//	party, err := fed.NewParty(fed.PartyConfig{Run: "r1", ID: "p1", Algorithm: alg.Name},
//		learner, ledger, net.Dial("p1"), fed.PartyOptions{})
//	go party.Run(ctx) // one per party, each joined by its owner
//	result, err := coord.Run(ctx)
//
// See example_test.go for a complete run.
//
// # Determinism and privacy
//
// Aggregate receives updates in party order whatever their arrival order,
// and nothing in the engine draws randomness that reaches a model (round
// tokens come from their own generator), so a seeded run gives the same
// models and ledger entries over every transport. Coordinator.Run is
// synchronous; transports call the coordinator concurrently, and every
// goroutine the engine starts is joined before the call that started it
// returns. The engine never logs payload values. It enforces each party's
// budget at the party; the coordinator's record of what parties declared
// they spent is informational.
package fed
