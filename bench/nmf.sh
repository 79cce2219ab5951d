#!/bin/sh
# Centralized NMF beside scikit-learn's, on one core each: the same tf-idf
# matrix (written by bench/nmfbench exactly as `fedtopic train --model nmf`
# builds it), K topics, random starts, fedtopic's HALS against
# sklearn.decomposition.NMF(init='random', solver='cd'), both on
# ½‖A − WHᵀ‖². Prints JSON lines (each solver's objective, wall and CPU
# seconds) and, last, for each of scikit-learn's runs the time fedtopic
# took to reach the objective scikit-learn reached.
#
#   bench/nmf.sh                    # WordNet's glosses, K = 50, seeds 1 and 2
#   FEDTOPIC_BENCH_CORPUS=c.jsonl NMF_K=50 NMF_SEEDS="1 2 3" bench/nmf.sh
#
# Needs Debian's python3-sklearn (apt-get install python3-sklearn) and,
# for the default corpus, wordnet-base.
set -eu
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
k=${NMF_K:-50}
seeds=${NMF_SEEDS:-1 2}
iters=${NMF_ITERS:-200}
sk_iters=${NMF_SKLEARN_ITERS:-25 50 100 200}
corpus=${FEDTOPIC_BENCH_CORPUS:-}
if [ -z "$corpus" ]; then
	corpus=$work/wordnet.jsonl
	python3 bench/wordnet_glosses.py >"$corpus"
fi
go build -o "$work/nmfbench" ./bench/nmfbench
"$work/nmfbench" -corpus "$corpus" -min-df 2 -iters 0 -mtx "$work/a.mtx"
out=$work/runs.jsonl
for seed in $seeds; do
	GOMAXPROCS=1 "$work/nmfbench" -corpus "$corpus" -min-df 2 -k "$k" -iters "$iters" -seed "$seed" |
		sed "s/^{/{\"seed\":$seed,/" | tee -a "$out" | tail -1
	# shellcheck disable=SC2086
	OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 \
		/usr/bin/python3 bench/nmf_sklearn.py "$work/a.mtx" "$k" "$seed" $sk_iters |
		sed "s/^{/{\"seed\": $seed, /" | tee -a "$out"
done
/usr/bin/python3 - "$out" <<'PY'
import json, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
fed = {}
for r in runs:
    if r["tool"] == "fedtopic":
        fed.setdefault(r["seed"], []).append(r)
for r in runs:
    if r["tool"] == "fedtopic":
        continue
    hit = next((f for f in fed[r["seed"]] if f["objective"] <= r["objective"]), None)
    row = {"seed": r["seed"], "sklearn_iter": r["iter"], "objective": r["objective"],
           "sklearn_seconds": r["seconds"], "sklearn_cpu_seconds": r["cpu_seconds"]}
    if hit:
        row.update(fedtopic_iter=hit["iter"], fedtopic_seconds=hit["seconds"], fedtopic_cpu_seconds=hit["cpu_seconds"],
                   cpu_ratio=hit["cpu_seconds"] / r["cpu_seconds"])
    else:
        best = fed[r["seed"]][-1]
        row.update(fedtopic_best=best["objective"], fedtopic_iter=best["iter"], fedtopic_cpu_seconds=best["cpu_seconds"])
    print(json.dumps({"summary": row}))
PY
