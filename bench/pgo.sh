#!/usr/bin/env bash
# Regenerates cmd/fedtopic/default.pgo, the CPU profile with which go build
# and go run optimise the fedtopic binary (profile-guided optimisation,
# https://go.dev/doc/pgo: hot calls are inlined and hot interface calls
# devirtualised; results are the same, only faster). Usage:
#
#   bench/pgo.sh
#
# It profiles the workloads users run most — the README's main job (FTM on
# the demo corpus), the non-private federation (AD-LDA), single-party
# training on a corpus of a million tokens (the default MH sampler at K = 50
# and K = 1000, the collapsed Gibbs reference, SentenceLDA), inference and
# evaluation — merges the profiles and writes them without the machine's
# paths (file names become relative to the module, the Go root or the module
# cache). The training corpus is WordNet 3.0's glosses, built from Debian's
# wordnet-base by bench/corpus.sh; set FEDTOPIC_BENCH_CORPUS to use another.
# Run it again after large changes to the hot code: a stale profile only
# optimises less.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

go build -pgo=off -o "$work/fedtopic" ./cmd/fedtopic
demo=demo/wordnet-glosses.jsonl
. bench/corpus.sh
corpus=$(bench_corpus "$work/wordnet.jsonl")
prof() { # prof NAME ARGS...: runs fedtopic ARGS with a CPU profile; shows its output if it fails
  local name=$1; shift
  echo "profiling $name" >&2
  "$work/fedtopic" --cpuprofile "$work/$name.prof" "$@" > "$work/$name.log" 2>&1 ||
    { cat "$work/$name.log" >&2; echo "pgo: fedtopic $* failed" >&2; exit 1; }
}
common=(--corpus "$corpus" --min-df 2 --seed 1 --workers 2)
prof ftm simulate --algorithm ftm --corpus "$demo" --split labels:sizes=1,2,3 --topics 8,10,12 --rounds 5 \
  --max-doc-length 30 --vocab-epsilon 8 --vocab-l0 1 --budget-epsilon 400 --debias output --seed 1 --out "$work/ftm"
prof adlda simulate --algorithm adlda --corpus "$demo" --split sizes=1,2,3 --topics 20 --rounds 100 --seed 1 --out "$work/adlda"
prof mh50 train "${common[@]}" --topics 50 --iterations 150 --out "$work/mh50.model"
prof mh1000 train "${common[@]}" --topics 1000 --iterations 15 --out "$work/mh1000.model"
prof gibbs train "${common[@]}" --topics 50 --iterations 15 --sampler gibbs --out "$work/gibbs.model"
prof slda train "${common[@]}" --topics 50 --iterations 40 --model slda --out "$work/slda.model"
prof infer infer --model "$work/mh50.model" --corpus "$demo" --seed 1 --out "$work/theta.jsonl"
prof eval eval --model "$work/mh50.model" --corpus "$demo" --json

go tool pprof -proto "$work"/*.prof > "$work/merged.pb.gz" 2> /dev/null
python3 - "$work/merged.pb.gz" cmd/fedtopic/default.pgo "$PWD" "$(go env GOROOT)" "$(go env GOMODCACHE)" <<'PY'
# Rewrites the string table of a pprof profile (a gzip-compressed
# perftools.profiles.Profile protocol buffer, field 6) so that no string is a
# path of this machine; the other fields are copied byte for byte.
import gzip, os, sys
src, dst, roots = sys.argv[1], sys.argv[2], sys.argv[3:]
data = gzip.decompress(open(src, "rb").read())

def varint(b, i):
    x = shift = 0
    while True:
        c = b[i]; i += 1
        x |= (c & 0x7F) << shift
        if c < 0x80:
            return x, i
        shift += 7

def put_varint(x):
    out = bytearray()
    while True:
        c = x & 0x7F; x >>= 7
        if x:
            out.append(c | 0x80)
        else:
            out.append(c)
            return bytes(out)

def clean(s):
    for r in roots:
        if r and s.startswith(r + "/"):
            return s[len(r) + 1:]
    return os.path.basename(s) if s.startswith("/") else s

out, i = bytearray(), 0
while i < len(data):
    start = i
    key, i = varint(data, i)
    field, wire = key >> 3, key & 7
    if wire == 0:
        _, i = varint(data, i)
    elif wire == 1:
        i += 8
    elif wire == 5:
        i += 4
    elif wire == 2:
        n, j = varint(data, i)
        i = j + n
        if field == 6:
            s = clean(data[j:i].decode()).encode()
            out += put_varint(key) + put_varint(len(s)) + s
            continue
    else:
        sys.exit(f"pgo: unexpected wire type {wire} in the profile")
    out += data[start:i]
with open(dst, "wb") as f:
    f.write(gzip.compress(bytes(out), mtime=0))
PY
echo "wrote cmd/fedtopic/default.pgo ($(wc -c < cmd/fedtopic/default.pgo) bytes)" >&2
