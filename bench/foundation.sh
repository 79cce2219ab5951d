#!/usr/bin/env bash
# Reproduces the foundation's figures on a real corpus: sampler quality
# against a 300-iteration collapsed Gibbs reference, sampler speed, worker
# scaling, inference time. Usage:
#
#   bench/foundation.sh [OUT_DIR]
#
# The corpus is WordNet 3.0's glosses (117,659 documents, about 1.1 million
# tokens after stop words), built from Debian's wordnet-base; set
# FEDTOPIC_BENCH_CORPUS to a JSONL or text file to use another one.
# Results are printed and written to OUT_DIR (default bench/results).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-bench/results}
mkdir -p "$out"
K=${K:-50}
GIBBS_ITERS=${GIBBS_ITERS:-300}
MH_ITERS=${MH_ITERS:-"200 225 250 300 500"}

corpus=${FEDTOPIC_BENCH_CORPUS:-}
if [ -z "$corpus" ]; then
  if [ ! -f /usr/share/wordnet/data.noun ]; then
    echo "installing wordnet-base (Debian) for the WordNet corpus" >&2
    apt-get install -y wordnet-base >/dev/null
  fi
  corpus="$out/wordnet.jsonl"
  [ -s "$corpus" ] || python3 bench/wordnet_glosses.py > "$corpus"
fi
# Every 10th document is held out for evaluation.
awk 'NR % 10 != 0' "$corpus" > "$out/train.jsonl"
awk 'NR % 10 == 0' "$corpus" > "$out/test.jsonl"

go build -o "$out/fedtopic" ./cmd/fedtopic
ft="$out/fedtopic"
common=(--corpus "$out/train.jsonl" --topics "$K" --min-df 2 --seed 1)

timed() { # timed NAME CMD...: runs CMD, prints its wall time in seconds
  local name=$1; shift
  local t0 t1
  t0=$(date +%s.%N)
  "$@" > "$out/$name.log" 2>&1
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f\n", b - a }'
}

evaluate() { # evaluate MODEL: prints perplexity and NPMI on the test documents
  "$ft" eval --model "$1" --corpus "$out/test.jsonl" --reference "$out/train.jsonl" --json 2>/dev/null |
    python3 -c 'import json,sys; r=json.load(sys.stdin); print("perplexity %.2f npmi %.4f umass %.3f" % (r["perplexity"]["perplexity"], r["npmi"]["mean"], r["umass"]["mean"]))'
}

echo "== collapsed Gibbs, $GIBBS_ITERS iterations, 1 worker (reference)"
t=$(timed gibbs "$ft" train "${common[@]}" --sampler gibbs --iterations "$GIBBS_ITERS" --workers 1 --out "$out/gibbs.model")
echo "gibbs: ${t}s  $(evaluate "$out/gibbs.model")" | tee "$out/quality.txt"

for it in $MH_ITERS; do
  t=$(timed "mh$it" "$ft" train "${common[@]}" --sampler mh --iterations "$it" --workers 2 --out "$out/mh$it.model")
  echo "mh $it iterations, 2 workers: ${t}s  $(evaluate "$out/mh$it.model")" | tee -a "$out/quality.txt"
done

# The time-to-quality figure: the fewest MH iterations whose perplexity is
# within 2% of the reference's, and their training time (as train reports
# it, without reading the corpus) against the reference's.
python3 - "$out" $MH_ITERS <<'PY' | tee -a "$out/quality.txt"
import re, sys
out, iters = sys.argv[1], sys.argv[2:]
def train_seconds(name):
    m = re.search(r"iterations in ([0-9.]+)s", open(f"{out}/{name}.log").read())
    return float(m.group(1))
def scores(line):
    return float(re.search(r"perplexity ([0-9.]+)", line).group(1)), float(re.search(r"npmi ([-0-9.]+)", line).group(1))
lines = open(f"{out}/quality.txt").read().splitlines()
ref_ppl, ref_npmi = scores(lines[0])
ref_t = train_seconds("gibbs")
for it, line in zip(iters, lines[1:]):
    ppl, npmi = scores(line)
    if ppl <= 1.02 * ref_ppl:
        t = train_seconds("mh" + it)
        print(f"time to quality: mh reaches perplexity {ppl:.2f} (reference {ref_ppl:.2f}, within 2%) after {it} iterations "
              f"in {t:.1f}s of training = {t / ref_t:.2f} of the reference's {ref_t:.1f}s; npmi {npmi:.4f} (reference {ref_npmi:.4f})")
        break
else:
    print(f"time to quality: no mh run in {' '.join(iters)} iterations came within 2% of the reference perplexity {ref_ppl:.2f}")
PY

echo "== sampler speed (Go benchmarks, tokens/s)"
FEDTOPIC_BENCH_CORPUS="$out/train.jsonl" go test ./lda -run '^$' -bench 'BenchmarkSweep' -benchtime 5x -count 3 | tee "$out/speed.txt"

echo "== inference (Go benchmark)"
go test ./topic -run '^$' -bench 'BenchmarkInfer' -benchtime 3x | tee "$out/infer.txt"
