#!/usr/bin/env bash
# Every federated method at its defaults on the demo corpus, beside each
# party alone and the pooled data, on one shared vocabulary so that
# held-out perplexities compare. Usage:
#
#   bench/methods.sh [OUT_DIR]
#
# The demo corpus's glosses are shuffled (seed 1): 2,415 are held out, the
# other 27,000 go to three equal parties. The shared vocabulary is the one
# the private vocabulary round keeps on the whole demo corpus at its
# defaults (about 440 words); it is given to every run with --vocab, so
# the ε below leave the vocabulary round out. K = 10. A party alone and
# the pooled data train LDA for 300 sweeps. Perplexity is held-out
# document completion of each global model (lower is better); FedNMF has
# no likelihood and is left out of it. Results are printed and written to
# OUT_DIR (default bench/results/methods).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-bench/results/methods}
mkdir -p "$out"
go build -o "$out/fedtopic" ./cmd/fedtopic
ft="$out/fedtopic"

python3 - "$out" <<'EOF'
import random, sys
out = sys.argv[1]
lines = open('demo/wordnet-glosses.jsonl').read().splitlines()
random.Random(1).shuffle(lines)
open(f'{out}/test.jsonl', 'w').write('\n'.join(lines[:2415]) + '\n')
train = lines[2415:]
n = len(train) // 3
for i in range(3):
    open(f'{out}/p{i+1}.jsonl', 'w').write('\n'.join(train[i*n:(i+1)*n]) + '\n')
open(f'{out}/train.jsonl', 'w').write('\n'.join(train) + '\n')
EOF

"$ft" simulate --corpus demo/wordnet-glosses.jsonl --topics 10 --rounds 1 --seed 1 --out "$out/vocab-run" --force >/dev/null 2>&1
cp "$out/vocab-run/vocab.txt" "$out/vocab.txt"

perplexity() { "$ft" eval --model "$1" --corpus "$out/test.jsonl" --json 2>/dev/null |
  python3 -c 'import json,sys; d=json.load(sys.stdin); p=d["perplexity"]; print("%.1f" % (p["perplexity"] if isinstance(p, dict) else p))'; }

printf '%-14s %14s %12s %8s\n' model "ε per document" perplexity seconds
for a in adlda ftm pctd fedlda fednmf; do
  start=$(date +%s.%N)
  "$ft" simulate --algorithm "$a" --corpus "$out/p1.jsonl,$out/p2.jsonl,$out/p3.jsonl" --split files \
    --vocab "$out/vocab.txt" --topics 10 --seed 1 --out "$out/run-$a" --force > "$out/$a.txt" 2>&1
  secs=$(python3 -c "import time; print('%.1f' % (time.time() - $start))")
  eps=$(grep -o 'ε = [0-9.e+]* per document' "$out/$a.txt" | head -1 | awk '{print $3}' || true)
  pp=$([ "$a" = fednmf ] && echo — || perplexity "$out/run-$a/model")
  printf '%-14s %14s %12s %8s\n' "$a" "${eps:-none}" "$pp" "$secs"
done
"$ft" train --corpus "$out/train.jsonl" --vocab "$out/vocab.txt" --topics 10 --iterations 300 --seed 1 --out "$out/pooled.model" --force >/dev/null 2>&1
printf '%-14s %14s %12s\n' pooled none "$(perplexity "$out/pooled.model")"
for i in 1 2 3; do
  "$ft" train --corpus "$out/p$i.jsonl" --vocab "$out/vocab.txt" --topics 10 --iterations 300 --seed 1 --out "$out/alone-p$i.model" --force >/dev/null 2>&1
  printf '%-14s %14s %12s\n' "p$i alone" none "$(perplexity "$out/alone-p$i.model")"
done
