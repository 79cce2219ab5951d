#!/usr/bin/env bash
# FedLDA beside the authors' public code (github.com/dingyuan-shi/Federated-LDA,
# Python, one process): both train on the same tokens over the same vocabulary
# at the same ε per tuple, K and number of iterations, and both models are
# scored by the same code, fedtopic eval's document-completion perplexity on
# the same held-out documents with the same document prior (5/K) and seed.
# Usage:
#
#   bench/fedlda.sh REFERENCE_DIR [OUT_DIR]
#
# REFERENCE_DIR holds the reference code (a checkout of the repository above;
# nothing in it is changed). The corpus is the demo glosses unless
# FEDTOPIC_BENCH_CORPUS names a JSONL file. Tokens: bench/compare_tools.py
# tokenize (fedtopic reads them with --tokenizer whitespace); every 10th
# document is held out; the vocabulary is the V most frequent words by
# document frequency in the training documents. Settings, from the
# environment: K (10), V (8000), T (20 iterations), EPSILON (10, per tuple),
# SEED (1), RUNS (the mechanism:sampler pairs, default "none:gibbs krr:gibbs
# tkrr:gibbs rrp:gibbs none:mh krr:mh"; empty for none). fedtopic runs in three
# parties with its defaults (M = 20, r = 0.7, δ = 0.05 for t-kRR); its RRP
# needs a δ whose total T·l·2δ is a guarantee, so it runs at RRP_DELTA
# (1.7e-8: a total of 0.95e-5 at the defaults, within simulate's default
# budget of 1e-5), while the reference runs RRP at δ = 0.05 (REF_DELTA).
# VARIANTS (default "alpha nopad alpha,nopad") also runs the reference's
# Gibbs none and krr with fedtopic's prior α = 5/K instead of its 50/K + 1
# (alpha) and without its padding (nopad), to separate their effects. The reference code needs
# NumPy: Debian's python3-numpy, installed when missing. Results are JSON
# lines in OUT_DIR/fedlda.jsonl (default bench/results-fedlda) and a table on
# standard output.
set -euo pipefail
cd "$(dirname "$0")/.."
ref=${1:?usage: bench/fedlda.sh REFERENCE_DIR [OUT_DIR]}
[ -f "$ref/ldamodel.py" ] && [ -f "$ref/protocol.py" ] || {
  echo "bench/fedlda.sh: $ref holds no ldamodel.py and protocol.py of the reference code" >&2
  exit 1
}
out=${2:-bench/results-fedlda}
mkdir -p "$out"
K=${K:-10}
V=${V:-8000}
T=${T:-20}
EPSILON=${EPSILON:-10}
SEED=${SEED:-1}
RUNS=${RUNS-"none:gibbs krr:gibbs tkrr:gibbs rrp:gibbs none:mh krr:mh"}
RRP_DELTA=${RRP_DELTA:-1.7e-8}
REF_DELTA=${REF_DELTA:-0.05}
VARIANTS=${VARIANTS-"alpha nopad alpha,nopad"}

# Debian's packages belong to Debian's Python, which may not be first on PATH.
py=/usr/bin/python3
if ! "$py" -c 'import numpy' 2>/dev/null; then
  echo "installing python3-numpy (Debian)" >&2
  apt-get install -y python3-numpy >/dev/null
fi

corpus=${FEDTOPIC_BENCH_CORPUS:-demo/wordnet-glosses.jsonl}
"$py" bench/compare_tools.py tokenize corpus/stopwords_en.txt < "$corpus" > "$out/tokens.jsonl"
awk 'NR % 10 != 0' "$out/tokens.jsonl" > "$out/train.jsonl"
awk 'NR % 10 == 0' "$out/tokens.jsonl" > "$out/test.jsonl"
"$py" - "$out/train.jsonl" "$V" > "$out/vocab.txt" <<'PY'
import collections, json, sys
df = collections.Counter()
for line in open(sys.argv[1], encoding="utf-8"):
    df.update(set(json.loads(line)["text"].split()))
words = sorted(df, key=lambda w: (-df[w], w))[: int(sys.argv[2])]
print("\n".join(words))
PY

go build -o "$out/fedtopic" ./cmd/fedtopic
ft="$out/fedtopic"
results="$out/fedlda.jsonl"
: > "$results"

record() { # record CODE MECHANISM SAMPLER DELTA SECONDS MODEL: scores MODEL, appends a line
  "$ft" eval --model "$6" --corpus "$out/test.jsonl" --tokenizer whitespace --seed 1 --json 2>/dev/null |
    "$py" -c '
import json, sys
r = json.load(sys.stdin)
code, mech, sampler, delta, secs = sys.argv[1:6]
print(json.dumps({"code": code, "mechanism": mech, "sampler": sampler, "epsilon": float(sys.argv[6]),
                  "delta": float(delta), "k": int(sys.argv[7]), "iterations": int(sys.argv[8]),
                  "seconds": float(secs), "perplexity": r["perplexity"]["perplexity"]}))' \
      "$1" "$2" "$3" "$4" "$5" "$EPSILON" "$K" "$T" | tee -a "$results"
}

for run in $RUNS; do
  mech=${run%:*} sampler=${run#*:}
  name=$mech-$sampler
  delta=0.05
  [ "$mech" = rrp ] && delta=$RRP_DELTA
  "$ft" simulate --algorithm fedlda --corpus "$out/train.jsonl" --tokenizer whitespace --vocab "$out/vocab.txt" \
    --topics "$K" --rounds "$T" --epsilon "$EPSILON" --mechanism "$mech" --sampler "$sampler" --truncation "$delta" \
    --seed "$SEED" --out "$out/fedtopic-$name" --force > "$out/fedtopic-$name.log" 2>&1 ||
    { cat "$out/fedtopic-$name.log" >&2; exit 1; }
  secs=$(sed -n 's/.* rounds in \([0-9.]*\)s.*/\1/p' "$out/fedtopic-$name.log")
  record fedtopic "$mech" "$sampler" "$delta" "$secs" "$out/fedtopic-$name/model"

  delta=$REF_DELTA
  "$py" bench/fedlda_reference.py --code "$ref" --corpus "$out/train.jsonl" --vocab "$out/vocab.txt" \
    --topics "$K" --iterations "$T" --epsilon "$EPSILON" --protocol "$mech" --sampler "$sampler" --delta "$delta" \
    --seed "$SEED" --out "$out/reference-$name.json" > "$out/reference-$name.log" ||
    { cat "$out/reference-$name.log" >&2; exit 1; }
  secs=$("$py" -c 'import json, sys; print(json.load(open(sys.argv[1]))["seconds"])' "$out/reference-$name.log")
  record reference "$mech" "$sampler" "$delta" "$secs" "$out/reference-$name.json"
done

for variant in $VARIANTS; do
  for mech in none krr; do
    args=()
    case ,$variant, in *,alpha,*) args+=(--train-alpha "$(awk -v k="$K" 'BEGIN { printf "%.17g", 5 / k }')") ;; esac
    case ,$variant, in *,nopad,*) args+=(--max-len 0) ;; esac
    name=$mech-gibbs-${variant/,/-}
    "$py" bench/fedlda_reference.py --code "$ref" --corpus "$out/train.jsonl" --vocab "$out/vocab.txt" \
      --topics "$K" --iterations "$T" --epsilon "$EPSILON" --protocol "$mech" --sampler gibbs --delta "$REF_DELTA" \
      --seed "$SEED" "${args[@]}" --out "$out/reference-$name.json" > "$out/reference-$name.log" ||
      { cat "$out/reference-$name.log" >&2; exit 1; }
    secs=$("$py" -c 'import json, sys; print(json.load(open(sys.argv[1]))["seconds"])' "$out/reference-$name.log")
    record "reference ($variant)" "$mech" gibbs "$REF_DELTA" "$secs" "$out/reference-$name.json"
  done
done

"$py" - "$results" <<'PY'
import json, sys
rows = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    rows.setdefault((r["mechanism"], r["sampler"]), {})[r["code"]] = r
codes = []
for c in rows.values():
    codes += [k for k in c if k not in codes]
print("| mechanism | sampler | " + " | ".join(f"{c}: perplexity (s)" for c in codes) + " |")
print("|---|---|" + "---|" * len(codes))
for (mech, sampler), c in rows.items():
    cell = lambda r: f"{r['perplexity']:,.0f} ({r['seconds']:.1f})" if r else "–"
    print(f"| {mech} | {sampler} | " + " | ".join(cell(c.get(k)) for k in codes) + " |")
PY
