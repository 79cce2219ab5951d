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
# SEEDS (default 1) lists the seeds of the quality runs: each seed trains
# the reference and every MH length, and the summary gives the mean over
# seeds and the worst seed's time to quality, since one chain's perplexity
# varies by about ±1%. REPEATS (default 1) runs every training that many
# times, the reference and the MH lengths in turn, and takes the median of
# each one's times: on a shared machine one run's time can be off by a
# third, and slow spells last minutes. The reference is plain collapsed
# Gibbs: its model is the posterior mean of its final state. The default
# sampler's model averages those of its last tenth of sweeps (fedtopic
# train --average); GIBBS_AVERAGE=N averages the reference's last N too.
# Results are printed and written to OUT_DIR (default bench/results).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-bench/results}
mkdir -p "$out"
K=${K:-50}
GIBBS_ITERS=${GIBBS_ITERS:-300}
MH_ITERS=${MH_ITERS:-"200 225 250 300 500"}
GIBBS_AVERAGE=${GIBBS_AVERAGE:-1}
SEEDS=${SEEDS:-1}
REPEATS=${REPEATS:-1}

. bench/corpus.sh
corpus=$(bench_corpus "$out/wordnet.jsonl")
# Every 10th document is held out for evaluation.
awk 'NR % 10 != 0' "$corpus" > "$out/train.jsonl"
awk 'NR % 10 == 0' "$corpus" > "$out/test.jsonl"

go build -o "$out/fedtopic" ./cmd/fedtopic
ft="$out/fedtopic"
common=(--corpus "$out/train.jsonl" --topics "$K" --min-df 2)

run() { # run NAME R CMD...: runs CMD (log NAME-rR.log) and adds its wall time in seconds to NAME.times
  local name=$1 r=$2; shift 2
  local t0 t1
  t0=$(date +%s.%N)
  "$@" > "$out/$name-r$r.log" 2>&1
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f\n", b - a }' >> "$out/$name.times"
}

median() { # median FILE: the (lower) median of the numbers in FILE
  sort -n "$1" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

evaluate() { # evaluate MODEL: prints perplexity and NPMI on the test documents
  "$ft" eval --model "$1" --corpus "$out/test.jsonl" --reference "$out/train.jsonl" --json 2>/dev/null |
    python3 -c 'import json,sys; r=json.load(sys.stdin); print("perplexity %.2f npmi %.4f umass %.3f" % (r["perplexity"]["perplexity"], r["npmi"]["mean"], r["umass"]["mean"]))'
}

: > "$out/quality.txt"
for seed in $SEEDS; do
  echo "== seed $seed: collapsed Gibbs, $GIBBS_ITERS iterations, 1 worker (reference), and MH, $MH_ITERS iterations, 2 workers; $REPEATS repeat(s), interleaved"
  rm -f "$out"/*-s"$seed"-r*.log "$out"/*-s"$seed".times
  # Each repeat runs the reference and every MH length in turn, so a slow
  # spell of a shared machine falls on both sides.
  for r in $(seq "$REPEATS"); do
    run "gibbs-s$seed" "$r" "$ft" train "${common[@]}" --seed "$seed" --sampler gibbs --iterations "$GIBBS_ITERS" --average "$GIBBS_AVERAGE" --workers 1 --out "$out/gibbs-s$seed.model"
    for it in $MH_ITERS; do
      run "mh$it-s$seed" "$r" "$ft" train "${common[@]}" --seed "$seed" --sampler mh --iterations "$it" --workers 2 --out "$out/mh$it-s$seed.model"
    done
  done
  echo "seed $seed gibbs: $(median "$out/gibbs-s$seed.times")s  $(evaluate "$out/gibbs-s$seed.model")" | tee -a "$out/quality.txt"
  for it in $MH_ITERS; do
    echo "seed $seed mh $it iterations, 2 workers: $(median "$out/mh$it-s$seed.times")s  $(evaluate "$out/mh$it-s$seed.model")" | tee -a "$out/quality.txt"
  done
done

# The time-to-quality figure: per seed, the fewest MH iterations whose
# perplexity is within 2% of that seed's reference, and their training time
# (as train reports it, without reading the corpus) against the
# reference's; then the fewest iterations within 2% on every seed.
python3 - "$out" "$MH_ITERS" $SEEDS <<'PY' | tee -a "$out/quality.txt"
import glob, re, statistics, sys
out, iters, seeds = sys.argv[1], sys.argv[2].split(), sys.argv[3:]
def train_seconds(name):  # the median over the repeats
    ts = [float(re.search(r"iterations in ([0-9.]+)s", open(f).read()).group(1))
          for f in glob.glob(f"{out}/{name}-r*.log")]
    return statistics.median_low(ts)
runs = {}
for line in open(f"{out}/quality.txt"):
    m = re.match(r"seed (\S+) (gibbs|mh (\d+) iterations).*perplexity ([0-9.]+) npmi ([-0-9.]+)", line)
    if m:
        runs[(m.group(1), m.group(3) or "gibbs")] = (float(m.group(4)), float(m.group(5)))
ratio = {}
for s in seeds:
    ref_ppl, ref_npmi = runs[(s, "gibbs")]
    ref_t = train_seconds(f"gibbs-s{s}") or float("nan")  # 0.0s: too short to time
    for it in iters:
        ppl, npmi = runs[(s, it)]
        ratio[(s, it)] = (ppl <= 1.02 * ref_ppl, train_seconds(f"mh{it}-s{s}") / ref_t)
    first = next((it for it in iters if ratio[(s, it)][0]), None)
    if first is None:
        print(f"seed {s}: no mh run in {' '.join(iters)} iterations came within 2% of the reference perplexity {ref_ppl:.2f}")
        continue
    ppl, npmi = runs[(s, first)]
    print(f"seed {s}: time to quality: mh reaches perplexity {ppl:.2f} (reference {ref_ppl:.2f}, within 2%) after {first} iterations "
          f"in {ratio[(s, first)][1]:.2f} of the reference's {ref_t:.1f}s of training; npmi {npmi:.4f} (reference {ref_npmi:.4f})")
mean = lambda xs: sum(xs) / len(xs)
ref = mean([runs[(s, "gibbs")][0] for s in seeds])
print(f"mean over seeds {' '.join(seeds)}: reference perplexity {ref:.2f}, npmi {mean([runs[(s, 'gibbs')][1] for s in seeds]):.4f}")
for it in iters:
    ppl = mean([runs[(s, it)][0] for s in seeds])
    print(f"  mh {it}: perplexity {ppl:.2f} ({100 * (ppl / ref - 1):+.2f}%), npmi {mean([runs[(s, it)][1] for s in seeds]):.4f}, "
          f"training time {max(ratio[(s, it)][1] for s in seeds):.2f} of the reference's at most")
every = next((it for it in iters if all(ratio[(s, it)][0] for s in seeds)), None)
if every is None:
    print(f"no mh length came within 2% of the reference on every seed")
else:
    print(f"within 2% on every seed from {every} iterations: at most {max(ratio[(s, every)][1] for s in seeds):.2f} of the reference's training time")
PY

echo "== sampler speed (Go benchmarks, tokens/s)"
FEDTOPIC_BENCH_CORPUS="$out/train.jsonl" go test ./lda -run '^$' -bench 'BenchmarkSweep' -benchtime 5x -count 3 | tee "$out/speed.txt"

echo "== inference (Go benchmark)"
go test ./topic -run '^$' -bench 'BenchmarkInfer' -benchtime 3x | tee "$out/infer.txt"
