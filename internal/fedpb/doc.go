// Package fedpb holds the Protocol Buffers form of the protocol between a
// fedtopic coordinator and its parties (fed.proto), the code protoc generates
// from it (committed, so builds need no protoc), and the conversions between
// these wire messages and the Go types of package fed.
//
// The conversions are the only way bytes become protocol messages: decoding
// checks the wire format, converts ranges (uint32/uint64 to int), and then
// runs the message's own Validate, so a message that decodes is well formed.
// Both transports use them — fed/inproc encodes and decodes every message
// with them, fed/fedgrpc hands the same messages to gRPC — so byte counts and
// validation are identical in simulation and deployment.
//
//	b, err := fedpb.Marshal(fedpb.FromSubmission(s)) // fed → wire bytes
//	s2, err := fedpb.UnmarshalSubmission(b)          // wire bytes → validated fed message
//
// Encoding is deterministic (proto.MarshalOptions{Deterministic: true}); the
// package holds no state and draws no randomness.
//
// Regenerate after editing fed.proto with gen.sh (needs protoc from Debian's
// protobuf-compiler; the plugins are pinned as tools in go.mod);
// TestGeneratedFresh fails when the generated files do not match fed.proto.
package fedpb

//go:generate sh gen.sh
