#!/bin/sh
# Regenerates the Go code of fed.proto with protoc (Debian: protobuf-compiler)
# and the protoc-gen-go and protoc-gen-go-grpc versions pinned as tools in
# go.mod, then records the checksums that TestGeneratedFresh verifies.
# With --check it regenerates into a scratch directory and fails if the
# committed files differ.
set -eu
cd "$(dirname "$0")"
out=.
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
if [ "${1:-}" = "--check" ]; then
	out="$bin/out"
	mkdir "$out"
fi
go build -o "$bin/protoc-gen-go" google.golang.org/protobuf/cmd/protoc-gen-go
go build -o "$bin/protoc-gen-go-grpc" google.golang.org/grpc/cmd/protoc-gen-go-grpc
protoc --plugin=protoc-gen-go="$bin/protoc-gen-go" --plugin=protoc-gen-go-grpc="$bin/protoc-gen-go-grpc" \
	--go_out="$out" --go_opt=paths=source_relative \
	--go-grpc_out="$out" --go-grpc_opt=paths=source_relative \
	fed.proto
(cd "$out" && sha256sum fed.pb.go fed_grpc.pb.go) >"$bin/gen.sum.tmp"
sha256sum fed.proto >>"$bin/gen.sum.tmp"
if [ "$out" = . ]; then
	mv "$bin/gen.sum.tmp" gen.sum
	exit 0
fi
for f in fed.pb.go fed_grpc.pb.go; do
	cmp -s "$f" "$out/$f" || { echo "internal/fedpb/$f is stale: run internal/fedpb/gen.sh" >&2; exit 1; }
done
cmp -s gen.sum "$bin/gen.sum.tmp" || { echo "internal/fedpb/gen.sum is stale: run internal/fedpb/gen.sh" >&2; exit 1; }
