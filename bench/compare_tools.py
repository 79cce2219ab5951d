#!/usr/bin/env python3
"""Trains the topic models of other tools on fedtopic's corpora, for
bench/compare.sh.

    compare_tools.py tokenize STOPWORDS < corpus.jsonl > tokens.jsonl
    compare_tools.py train --tool TOOL --corpus tokens.jsonl \
        --vocab model.json --topics K --seed S [options] --out model.json

tokenize reads JSONL documents (field "text"; other fields are kept) and
writes them with their text as tokens joined by single spaces: words by
Unicode letters and digits, case-folded, stop words (one per line in
STOPWORDS) and tokens of one character or of digits only dropped, so that
every tool reads exactly the same tokens (fedtopic with --tokenizer
whitespace).

train fits a model with TOOL on the tokens of --corpus, over exactly the
vocabulary of the fedtopic JSON export --vocab (other tokens are dropped),
and writes it in fedtopic's JSON export format (vocab, topic_word with rows
p(w|k) in the vocabulary's order, alpha), which fedtopic eval reads. It
prints one JSON line: the tool, its settings and the seconds the fit took
(without reading the corpus or writing the model). Tools:

    gensim            gensim's LdaModel (online variational Bayes, one core)
    gensim-multicore  gensim's LdaMulticore (--workers worker processes)
    sklearn           scikit-learn's LatentDirichletAllocation (batch
                      variational Bayes, --workers jobs)

gensim and scikit-learn are Debian's python3-gensim and python3-sklearn;
run this with the Python those packages belong to (/usr/bin/python3).
"""

import argparse
import json
from collections import Counter
import re
import sys
import time

WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")


def tokenize(stopwords_path):
    with open(stopwords_path, encoding="utf-8") as f:
        stop = {line.strip().casefold() for line in f if line.strip() and not line.startswith("#")}
    for line in sys.stdin:
        doc = json.loads(line)
        words = []
        for w in WORD.findall(doc["text"].casefold()):
            w = w.replace("’", "'")
            if len(w) < 2 or w.isdigit() or w in stop:
                continue
            words.append(w)
        doc["text"] = " ".join(words)
        sys.stdout.write(json.dumps(doc, ensure_ascii=False) + "\n")


def read_docs(path, index):
    """The documents of path as lists of vocabulary ids (tokens outside the
    vocabulary dropped)."""
    docs = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            ids = [index[w] for w in json.loads(line)["text"].split() if w in index]
            docs.append(ids)
    return docs


def fit_gensim(docs, vocab, a, multicore):
    import gensim
    from gensim.corpora import Dictionary
    from gensim.models import LdaModel, LdaMulticore

    d = Dictionary()
    d.token2id = {w: i for i, w in enumerate(vocab)}
    d.id2token = dict(enumerate(vocab))
    bow = [sorted(Counter(ids).items()) for ids in docs]
    common = dict(
        corpus=bow, id2word=d, num_topics=a.topics, alpha=a.alpha, eta=a.beta,
        passes=a.passes, iterations=a.iterations, chunksize=a.chunksize,
        random_state=a.seed, eval_every=None,
    )
    t0 = time.perf_counter()
    if multicore:
        m = LdaMulticore(workers=a.workers, **common)
    else:
        m = LdaModel(**common)
    secs = time.perf_counter() - t0
    # get_topics: the rows of λ normalised, p(w|k) in id (vocabulary) order.
    return m.get_topics(), secs, "gensim " + gensim.__version__


def fit_sklearn(docs, vocab, a):
    import numpy as np
    import sklearn
    from scipy.sparse import csr_matrix
    from sklearn.decomposition import LatentDirichletAllocation

    rows, cols = [], []
    for r, ids in enumerate(docs):
        rows.extend([r] * len(ids))
        cols.extend(ids)
    x = csr_matrix((np.ones(len(cols)), (rows, cols)), shape=(len(docs), len(vocab)))
    x.sum_duplicates()
    m = LatentDirichletAllocation(
        n_components=a.topics, doc_topic_prior=a.alpha, topic_word_prior=a.beta,
        learning_method="batch", max_iter=a.passes, max_doc_update_iter=a.iterations,
        n_jobs=a.workers, random_state=a.seed,
    )
    t0 = time.perf_counter()
    m.fit(x)
    secs = time.perf_counter() - t0
    phi = m.components_ / m.components_.sum(axis=1, keepdims=True)
    return phi, secs, "scikit-learn " + sklearn.__version__


def train(a):
    with open(a.vocab, encoding="utf-8") as f:
        vocab = json.load(f)["vocab"]
    index = {w: i for i, w in enumerate(vocab)}
    docs = read_docs(a.corpus, index)
    if a.tool == "sklearn":
        phi, secs, version = fit_sklearn(docs, vocab, a)
    else:
        phi, secs, version = fit_gensim(docs, vocab, a, a.tool == "gensim-multicore")
    with open(a.out, "w", encoding="utf-8") as f:
        json.dump({
            "vocab": vocab,
            "topic_word": [[float(x) for x in row] for row in phi],
            "alpha": [a.alpha] * a.topics,
            "beta": a.beta,
        }, f)
    tokens = sum(len(d) for d in docs)
    print(json.dumps({
        "tool": a.tool, "version": version, "topics": a.topics, "passes": a.passes, "iterations": a.iterations,
        "workers": a.workers, "seed": a.seed, "documents": len(docs), "tokens": tokens,
        "seconds": round(secs, 2),
    }))


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "tokenize":
        tokenize(sys.argv[2])
        return
    if len(sys.argv) < 2 or sys.argv[1] != "train":
        sys.exit(__doc__)
    p = argparse.ArgumentParser(prog="compare_tools.py train")
    p.add_argument("--tool", required=True, choices=["gensim", "gensim-multicore", "sklearn"])
    p.add_argument("--corpus", required=True)
    p.add_argument("--vocab", required=True, help="a fedtopic JSON export whose vocabulary to use")
    p.add_argument("--topics", type=int, default=50)
    p.add_argument("--alpha", type=float, default=0.1)
    p.add_argument("--beta", type=float, default=0.01)
    p.add_argument("--passes", type=int, default=10, help="passes over the corpus (sklearn: max_iter)")
    p.add_argument("--iterations", type=int, default=50, help="E-step iterations per document")
    p.add_argument("--chunksize", type=int, default=2000, help="documents per gensim update")
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", required=True)
    train(p.parse_args(sys.argv[2:]))


if __name__ == "__main__":
    main()
