// Package fedgrpc is the network transport of the federation engine: the
// coordinator serves fed.Protocol over gRPC, parties dial out to it, and
// every connection is mutual TLS 1.3 with certificates from the
// federation's CA (fed/certs makes a development one).
//
// Security: the server requires and verifies a
// client certificate (tls.RequireAndVerifyClientCert); a peer without one,
// with a self-signed, foreign, expired or not-yet-valid one, or speaking
// plaintext fails its first call with Unavailable and never reaches the
// coordinator. The certificate's common name is the party's identity: it
// must be in the allow-list (else PermissionDenied) and equal the party
// every message claims (the coordinator checks, PermissionDenied). Parties
// verify the coordinator's certificate and name before anything is sent.
// Message sizes are bounded explicitly — received updates by the
// algorithm's MaxUpdateSize (V × K based) plus MessageOverhead, sent
// broadcasts likewise — so an oversized message is refused with
// ResourceExhausted without being buffered. Keepalive pings run both ways
// and the standard gRPC health service reports whether the federation is
// serving.
//
// Status codes live only here: protocol errors map to codes and back
// (fed.ErrBudgetExhausted ↔ ResourceExhausted, fed.ErrStaleRound ↔
// FailedPrecondition, fed.ErrInvalidUpdate ↔ InvalidArgument, …), with a
// google.rpc.ErrorInfo naming the exact error, so errors.Is works on the
// party's side as it does in process.
//
//	tc, _ := fedgrpc.LoadServerTLS("certs/ca.pem", "certs/coordinator.pem", "certs/coordinator-key.pem")
//	srv, _ := fedgrpc.NewServer(coord, fedgrpc.ServerConfig{TLS: tc, Parties: ids,
//		MaxUpdateSize: val.MaxUpdateSize(), MaxBroadcastSize: val.MaxBroadcastSize()})
//	go srv.Serve(lis) // the caller owns and joins this goroutine; srv.Stop ends it
//
//	cc, _ := fedgrpc.LoadClientTLS("certs/ca.pem", "certs/p1.pem", "certs/p1-key.pem", "coordinator")
//	conn, _ := fedgrpc.Dial("coordinator:7443", fedgrpc.ClientConfig{TLS: cc, ...})
//	party, _ := fed.NewParty(cfg, learner, ledger, conn, fed.PartyOptions{})
//
// Bytes per party and round are the encoded sizes of the protocol messages,
// exactly as fed/inproc counts them, so a seeded run gives the same models,
// ledgers and byte counts over both transports. See example_test.go.
//
// A party whose network fails is dropped from the round it misses as soon
// as the coordinator loses its connection (at the latest at the round's
// deadline); its connection retries with backoff capped at
// ReconnectMaxDelay and the party rejoins the next round it reaches
// (tested through a TCP proxy that cuts and heals the network).
package fedgrpc
