#!/usr/bin/env bash
# Compares fedtopic's LDA with the topic models practitioners run in Python:
# gensim's LdaMulticore (online variational Bayes) and scikit-learn's
# LatentDirichletAllocation (batch variational Bayes). Every tool reads the
# same tokens (bench/compare_tools.py tokenize; fedtopic with --tokenizer
# whitespace) over the same vocabulary (fedtopic's, min-df 2) with the same
# priors (α = 0.1, β = 0.01 at K = 50), and every model is measured by the
# same code: fedtopic eval's document-completion perplexity on the held-out
# tenth of the documents and NPMI on the training documents. Usage:
#
#   bench/compare.sh [OUT_DIR]
#
# The corpus is WordNet's glosses (see bench/corpus.sh) unless
# FEDTOPIC_BENCH_CORPUS names a JSONL file. Settings, from the environment:
# K (50), SEED (1), GIBBS_ITERS (300, the one-core collapsed Gibbs
# reference), MH_ITERS ("250", the default sampler with 2 workers),
# GENSIM_PASSES ("10 50") and SKLEARN_ITERS ("10 50"), the passes over the
# corpus of the two Python tools, each on both cores. It installs Debian's
# python3-gensim and python3-sklearn when they are missing. Results are
# JSON lines in OUT_DIR/compare.jsonl (default bench/results-compare) and a
# table on standard output; times are of the fit alone, without reading the
# corpus or writing the model.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-bench/results-compare}
mkdir -p "$out"
K=${K:-50}
SEED=${SEED:-1}
GIBBS_ITERS=${GIBBS_ITERS:-300}
MH_ITERS=${MH_ITERS:-250}
GENSIM_PASSES=${GENSIM_PASSES:-"10 50"}
SKLEARN_ITERS=${SKLEARN_ITERS:-"10 50"}
alpha=$(awk -v k="$K" 'BEGIN { printf "%.17g", 5 / k }') # fedtopic's default, 5/K

# Debian's packages belong to Debian's Python, which may not be first on PATH.
py=/usr/bin/python3
if ! "$py" -c 'import gensim, sklearn' 2>/dev/null; then
  echo "installing python3-gensim and python3-sklearn (Debian)" >&2
  apt-get install -y python3-gensim python3-sklearn >/dev/null
fi

. bench/corpus.sh
corpus=$(bench_corpus "$out/wordnet.jsonl")
"$py" bench/compare_tools.py tokenize corpus/stopwords_en.txt < "$corpus" > "$out/tokens.jsonl"
# Every 10th document is held out for evaluation, as in bench/foundation.sh.
awk 'NR % 10 != 0' "$out/tokens.jsonl" > "$out/train.jsonl"
awk 'NR % 10 == 0' "$out/tokens.jsonl" > "$out/test.jsonl"

go build -o "$out/fedtopic" ./cmd/fedtopic
ft="$out/fedtopic"
results="$out/compare.jsonl"
: > "$results"

record() { # record NAME CORES SECONDS MODEL: evaluates MODEL, appends a line to compare.jsonl
  "$ft" eval --model "$4" --corpus "$out/test.jsonl" --reference "$out/train.jsonl" --tokenizer whitespace --json 2>/dev/null |
    python3 -c '
import json, sys
r = json.load(sys.stdin)
print(json.dumps({"run": sys.argv[1], "cores": int(sys.argv[2]), "seconds": float(sys.argv[3]),
                  "perplexity": r["perplexity"]["perplexity"], "npmi": r["npmi"]["mean"],
                  "diversity": r["topic_diversity"]}))' "$1" "$2" "$3" | tee -a "$results"
}

ft_train() { # ft_train FILE LABEL CORES ARGS...: trains with fedtopic and records the model
  local file=$out/$1 label=$2 cores=$3
  shift 3
  "$ft" train --corpus "$out/train.jsonl" --tokenizer whitespace --min-df 2 --topics "$K" --seed "$SEED" "$@" --out "$file.model" > "$file.log" 2>&1 ||
    { cat "$file.log" >&2; exit 1; }
  record "$label" "$cores" "$(sed -n 's/.* iterations in \([0-9.]*\)s.*/\1/p' "$file.log")" "$file.model"
}

py_train() { # py_train FILE LABEL CORES ARGS...: trains with compare_tools.py and records the model
  local file=$out/$1 label=$2 cores=$3
  shift 3
  "$py" bench/compare_tools.py train --corpus "$out/train.jsonl" --vocab "$out/vocab.json" --topics "$K" \
    --alpha "$alpha" --seed "$SEED" "$@" --out "$file.json" > "$file.log" ||
    { cat "$file.log" >&2; exit 1; }
  record "$label" "$cores" "$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["seconds"])' "$file.log")" "$file.json"
}

ft_train gibbs "fedtopic collapsed Gibbs, $GIBBS_ITERS sweeps" 1 --sampler gibbs --iterations "$GIBBS_ITERS" --average 1 --workers 1
for it in $MH_ITERS; do
  ft_train "mh$it" "fedtopic default sampler (mh), $it sweeps" 2 --sampler mh --iterations "$it" --workers 2
done
# The vocabulary every other tool uses: that of the models above.
"$ft" export --model "$out/gibbs.model" --format json --out "$out/vocab.json"
for p in $GENSIM_PASSES; do
  # LdaMulticore's workers are processes besides the one that merges their
  # statistics: one worker keeps both cores busy.
  py_train "gensim$p" "gensim LdaMulticore, $p passes" 2 --tool gensim-multicore --workers 1 --passes "$p"
done
for p in $SKLEARN_ITERS; do
  py_train "sklearn$p" "scikit-learn LatentDirichletAllocation, $p iterations" 2 --tool sklearn --workers 2 --passes "$p"
done

python3 - "$results" <<'PY'
import json, sys
print("| run | cores | seconds | perplexity | NPMI | diversity |")
print("|---|---|---|---|---|---|")
for line in open(sys.argv[1]):
    r = json.loads(line)
    print(f"| {r['run']} | {r['cores']} | {r['seconds']:.1f} | {r['perplexity']:,.0f} | {r['npmi']:.3f} | {r['diversity']:.3f} |")
PY
