// Package inproc is the in-process transport of the federation engine: the
// coordinator and every party in one process, as fedtopic simulate runs
// them, with the very same fed.Coordinator and fed.Party as a deployment.
//
// Every message is encoded to its Protocol Buffers bytes (internal/fedpb)
// and decoded again on the other side, so what the simulator validates and
// the bytes it counts per party and round are exactly what gRPC would carry
// (communication is measured at the transport; docs/experiments.md). A connection
// is authenticated as the party it was dialed for, as a client certificate
// would make it; a message claiming another party is refused by the
// coordinator with fed.ErrPermissionDenied.
//
// Faults replays a seeded schedule of lost requests, lost replies, delays
// and party crashes, for the engine's reliability tests (dropouts,
// stragglers, crashes); a coordinator crash is a fed.CoordinatorOptions.Crash hook plus
// SetService with the restarted coordinator.
//
//	net, _ := inproc.New(coord, inproc.Faults{})
//	party, _ := fed.NewParty(cfg, learner, ledger, net.Dial("p1"), fed.PartyOptions{})
//
// Determinism: each connection draws its faults from its own stream,
// rng.Derive(Seed, "inproc", party, dial), in a fixed order per call, so a
// schedule depends only on the seed and each party's sequence of calls.
// Delays use the clock (time.NewTimer), so tests run them inside
// testing/synctest. See example_test.go.
package inproc
