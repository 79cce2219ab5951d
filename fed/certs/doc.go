// Package certs makes the certificates of a development federation: a
// private certificate authority, a server certificate for the coordinator
// and a client certificate per party, all ECDSA P-256, as PEM files that
// fedtopic coordinator and fedtopic party read (fed/fedgrpc uses them for
// mutual TLS 1.3).
//
// A party's identity is its certificate's common name, which is also its
// DNS subject alternative name; the coordinator accepts a party only when
// that identity is in the federation's allow-list and equals the party the
// message claims. Party certificates are usable only for client
// authentication and the coordinator's only for server authentication, so
// neither can stand in for the other.
//
//	err := certs.WriteDir("certs", certs.Options{Parties: []string{"p1", "p2", "p3"}})
//	// certs/ca.pem, certs/coordinator.pem, certs/coordinator-key.pem,
//	// certs/p1.pem, certs/p1-key.pem, …
//
// The CA's private key is not written: to add a party, make a new set. A
// production federation should use its own PKI; this is for development,
// tests and demonstrations. Keys come from crypto/rand; nothing here is
// deterministic, and nothing about the data or privacy of a run depends on
// it. See example_test.go.
package certs
