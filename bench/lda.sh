#!/usr/bin/env bash
# Produces the lda package's figures (issue 2): sampler speed at K = 50 and
# K = 1000 with one and two workers, memory of the training state, and the
# quality of the MH sampler against 300 sweeps of collapsed Gibbs at K = 50.
# Results are JSON lines in $OUT (default bench-lda.jsonl). Run it on a quiet
# machine: it takes about half an hour on two cores.
#
#   FEDTOPIC_BENCH_CORPUS=corpus.jsonl bench/lda.sh
set -euo pipefail
corpus=${FEDTOPIC_BENCH_CORPUS:?set FEDTOPIC_BENCH_CORPUS to a corpus file (one document per line, JSONL or a directory)}
out=${OUT:-bench-lda.jsonl}
cd "$(dirname "$0")/.."
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
bin="$dir/ldabench"
go build -o "$bin" ./bench/ldabench
: >"$out"
"$bin" -corpus "$corpus" -mode speed -k 50,1000 -workers 1,2 -iters 20 -warmup 3 >>"$out"
"$bin" -corpus "$corpus" -mode quality -k 50 -workers 2 -samplers gibbs,mh -gibbs-iters 300 -mh-iters 1000 -every 100 >>"$out"
FEDTOPIC_BENCH_CORPUS="$corpus" go test -run '^$' -bench 'MH|Collapsed|Gibbs|Sweep|DrawPhi' -benchtime 10x ./lda/ | tee -a "${out%.jsonl}.bench.txt"
echo "wrote $out"
