#!/usr/bin/env python3
"""Runs the authors' public FedLDA code (github.com/dingyuan-shi/Federated-LDA,
Python, one process) on fedtopic's tokens, for bench/fedlda.sh.

    fedlda_reference.py --code DIR --corpus train.jsonl --vocab vocab.txt \
        --topics K --epsilon E --protocol krr --sampler gibbs \
        --iterations T --seed S --out model.json

DIR holds the reference code (its ldamodel.py and protocol.py); nothing in it
is changed. --corpus is JSONL whose "text" is tokens joined by single spaces
(bench/compare_tools.py tokenize), --vocab one word per line: the word ids
are the lines, tokens outside the vocabulary are dropped and so are documents
left empty, exactly as fedtopic simulate --tokenizer whitespace --vocab does.

The reference's own configuration is kept (main.py's): α = 50/K + 1 and
β = 0.01 in training (--train-alpha replaces α), padding to --max-len = 100
entries (50 tuples of two entries each; 0 turns padding off), sample ratio 1, every document one user, and the counts
updated once an iteration (batch size = all users). Its protocols under
fedtopic's names: none = "no", krr = "kRR_wo", tkrr = "kRR_trunc", rrp =
"kRRp_tw_wo" (the paper's RRP); --delta is the protocol's δ.

The model written is the reference's final counts as φ_kw = (n_kw + β) /
(n_k + Vβ) (its own _cal_phi) in fedtopic's JSON export format, with
--eval-alpha as the document prior (default 5/K, fedtopic's), so that
fedtopic eval fits θ of held-out documents the same way for both codes. One
JSON line on standard output gives the settings, the number of tuples the
users sent (after padding) and the seconds of the fit.
"""

import argparse
import contextlib
import io
import json
import os
import random
import sys
import time

PROTOCOLS = {"none": "no", "krr": "kRR_wo", "tkrr": "kRR_trunc", "rrp": "kRRp_tw_wo"}
SAMPLERS = {"gibbs": "gibbs", "mh": "light"}


class Docs:
    """The part of the reference's Dictionary that LDAModel reads."""

    def __init__(self, docs, V):
        self.docs, self.V, self.D = docs, V, len(docs)

    def get_documents(self):
        return self.docs

    def get_num_vocab(self):
        return self.V

    def get_num_docs(self):
        return self.D

    def get_pri(self):
        return None


def read(corpus, vocab):
    with open(vocab, encoding="utf-8") as f:
        words = [line.rstrip("\n") for line in f if line.strip()]
    index = {w: i for i, w in enumerate(words)}
    docs = []
    with open(corpus, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            try:
                text = json.loads(line)["text"]
            except (ValueError, KeyError) as e:
                sys.exit(f"fedlda_reference.py: {corpus}:{n}: {e}")
            ids = [index[w] for w in text.split() if w in index]
            if ids:
                docs.append(ids)
    return words, docs


def main():
    p = argparse.ArgumentParser(prog="fedlda_reference.py")
    p.add_argument("--code", required=True, help="directory of the reference code")
    p.add_argument("--corpus", required=True)
    p.add_argument("--vocab", required=True)
    p.add_argument("--topics", type=int, default=10)
    p.add_argument("--epsilon", type=float, default=10)
    p.add_argument("--delta", type=float, default=0.05)
    p.add_argument("--protocol", choices=sorted(PROTOCOLS), default="krr")
    p.add_argument("--sampler", choices=sorted(SAMPLERS), default="gibbs")
    p.add_argument("--iterations", type=int, default=20)
    p.add_argument("--max-len", type=int, default=100, help="the reference's maxL: entries after padding, two a tuple")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--train-alpha", type=float, default=None,
                   help="replace the reference's training prior 50/K + 1 (the Gibbs sampler's; MH's document proposal keeps 0.1·K)")
    p.add_argument("--eval-alpha", type=float, default=None, help="document prior written with the model (default 5/K)")
    p.add_argument("--out", required=True)
    a = p.parse_args()

    sys.path.insert(0, os.path.abspath(a.code))
    import numpy as np
    from ldamodel import LDAModel
    from protocol import Protocol

    words, docs = read(a.corpus, a.vocab)
    V, K = len(words), a.topics

    # Count what the users send: every tuple list the reference perturbs,
    # after its padding and (no-op) sampling.
    sent = {"tuples": 0, "users": 0}
    perturb = Protocol.perturb

    def counting_perturb(self, tuples, paras=None):
        sent["tuples"] += len(tuples) // 2
        sent["users"] += 1
        return perturb(self, tuples, paras)

    Protocol.perturb = counting_perturb

    quiet = io.StringIO()
    with contextlib.redirect_stdout(quiet):
        prot = Protocol(eps=a.epsilon, ratio=1, delta=a.delta, protocol_type=PROTOCOLS[a.protocol], isps=True, V=V)
        model = LDAModel(n_topic=K, model_name="", docs=Docs(docs, V), maxL=a.max_len, spratio=1.0)
        if a.train_alpha is not None:
            model._alpha = a.train_alpha
        t0 = time.perf_counter()
        # fit seeds Python's and NumPy's generators with 0 and draws the
        # initial topics; the iterations then draw from streams seeded
        # with --seed.
        model.fit(protocol=prot, num_iterations=0, method=SAMPLERS[a.sampler], save_freq=10**9, batch_size=-1)
        random.seed(a.seed)
        np.random.seed(a.seed)
        if a.sampler == "gibbs":
            model._gibbs_sample(prot, model._D, a.iterations, 10**9)
        else:
            model._light_sample(prot, model._D, a.iterations, 10**9)
        secs = time.perf_counter() - t0

    nkv = model.get_nkv()
    beta = model._beta
    phi = []
    for k in range(K):
        denom = sum(nkv[k]) + V * beta
        phi.append([(nkv[k][w] + beta) / denom for w in range(V)])
    alpha = a.eval_alpha if a.eval_alpha is not None else 5 / K
    with open(a.out, "w", encoding="utf-8") as f:
        json.dump({"vocab": words, "topic_word": phi, "alpha": [alpha] * K, "beta": beta}, f)
    print(json.dumps({
        "code": "dingyuan-shi/Federated-LDA", "protocol": PROTOCOLS[a.protocol], "sampler": SAMPLERS[a.sampler],
        "epsilon": a.epsilon, "delta": a.delta, "topics": K, "iterations": a.iterations, "max_len": a.max_len,
        "seed": a.seed, "users": len(docs), "tokens": sum(len(d) for d in docs), "vocabulary": V,
        "train_alpha": model._alpha, "eval_alpha": alpha,
        "tuples_per_user_iteration": round(sent["tuples"] / max(sent["users"], 1), 2),
        "seconds": round(secs, 1),
    }))


if __name__ == "__main__":
    main()
