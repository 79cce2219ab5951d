// Package layout holds the tests that keep the repository's shape: every
// package has a doc.go with a package comment, and imports point only in the
// directions docs/packages.md states (method packages and lda do no I/O,
// fed knows nothing of the network, nothing below cmd imports cmd or sim).
//
// The package has no exported API; its tests read the source tree with
// go/parser and need no build tags or network.
package layout
