// Package fedtest holds helpers for testing the federation engine and the
// algorithms plugged into it, as net/http/httptest does for HTTP: a trivial
// algorithm (Sum: parties send Laplace-noised count matrices, the
// coordinator adds them), a small durable pure-ε Ledger, synthetic local
// corpora, and Run, which plays a whole federation over a chosen transport
// so the same scenario can be compared across transports.
//
//	sc := fedtest.Scenario{Parties: 3, Rounds: 4, Epsilon: 1, Seed: 7}
//	want := fedtest.Run(t, fedtest.InProc(inproc.Faults{}), sc)
//
// Sum follows Laplace's mechanism (Dwork and Roth 2014, §3.3) with
// sensitivity 1 per word occurrence, drawn by inversion from a seeded
// ChaCha8 stream: fine for tests, not for production noise (it has the
// floating-point weakness Mironov 2012 describes). Everything is
// deterministic given the scenario's seed; see example_test.go.
package fedtest
