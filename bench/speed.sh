#!/usr/bin/env bash
# Measures the speed of whole training chains, the command users run
# (fedtopic train with the default sampler), with one and with two workers:
# tokens per second per core, and how much faster two workers are than one.
# Usage:
#
#   bench/speed.sh [OUT_DIR]
#
# The corpora are WordNet 3.0's glosses (built from Debian's wordnet-base,
# as in bench/foundation.sh) or the files FEDTOPIC_BENCH_CORPUS lists,
# space-separated. KS (default "50 1000") lists the numbers of topics,
# ITERS (default 300) the sweeps of each chain, MIN_DF (default 5) the
# vocabulary's minimum document frequency, SEED (default 1) the seed.
# REPEATS (default 3) runs every chain that many times, one worker and two
# in turn, so a slow spell of a shared machine falls on both; the summary
# gives each setting's runs, their median and best, and the speed-up of
# two workers over one within each repeat. The speed is the one train
# reports: tokens sampled per second of training, without reading the
# corpus. Results are printed and written to OUT_DIR/speed.txt (default
# bench/results/speed.txt).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-bench/results}
mkdir -p "$out"
KS=${KS:-"50 1000"}
ITERS=${ITERS:-300}
MIN_DF=${MIN_DF:-5}
SEED=${SEED:-1}
REPEATS=${REPEATS:-3}

if [ -n "${FEDTOPIC_BENCH_CORPUS:-}" ]; then
  corpora=$FEDTOPIC_BENCH_CORPUS
else
  . bench/corpus.sh
  corpora=$(bench_corpus "$out/wordnet.jsonl")
fi

go build -o "$out/fedtopic" ./cmd/fedtopic
ft="$out/fedtopic"
runs="$out/speed-runs.txt"
: > "$runs"
for corpus in $corpora; do
  for k in $KS; do
    for r in $(seq "$REPEATS"); do
      for w in 1 2; do
        log="$out/speed-$(basename "$corpus")-k$k-w$w-r$r.log"
        "$ft" train --corpus "$corpus" --topics "$k" --min-df "$MIN_DF" --iterations "$ITERS" --seed "$SEED" \
          --workers "$w" --out "$out/speed.model" > "$log" 2>&1 || { cat "$log" >&2; exit 1; }
        tps=$(grep -o '([0-9.e+]* tokens/s)' "$log" | tr -d '(' | cut -d' ' -f1)
        echo "$(basename "$corpus") $k $r $w $tps" | tee -a "$runs"
      done
    done
  done
done

python3 - "$runs" <<'PY' | tee "$out/speed.txt"
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
runs = {}
for corpus, k, r, w, tps in rows:
    runs.setdefault((corpus, int(k)), {}).setdefault(int(w), {})[int(r)] = float(tps)
print("corpus K: million tokens/s per core with one worker (runs; median, best), with two workers, and two workers' speed-up within each repeat")
for (corpus, k), by in runs.items():
    one, two = by[1], by[2]
    per_core = lambda xs: " ".join(f"{x / 1e6:.2f}" for x in xs)
    ups = [two[r] / one[r] for r in sorted(one) if r in two]
    print(f"{corpus} K={k}: one worker {per_core(one.values())}; median {statistics.median(one.values()) / 1e6:.2f}, best {max(one.values()) / 1e6:.2f}")
    print(f"{corpus} K={k}: two workers, per core {per_core(x / 2 for x in two.values())}; median {statistics.median(two.values()) / 2e6:.2f}, best {max(two.values()) / 2e6:.2f}")
    print(f"{corpus} K={k}: speed-up {' '.join(f'{u:.2f}' for u in ups)}; median {statistics.median(ups):.2f}")
PY
