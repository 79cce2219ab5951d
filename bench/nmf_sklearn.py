#!/usr/bin/python3
"""scikit-learn's NMF on a document matrix written by bench/nmfbench.

Usage: nmf_sklearn.py MATRIX.mtx K SEED MAX_ITER [MAX_ITER ...]

For each MAX_ITER, fits sklearn.decomposition.NMF(n_components=K,
init='random', solver='cd', random_state=SEED, max_iter=MAX_ITER, tol=0)
to the matrix (documents as rows) and prints a JSON line with the
iterations run, the fit's wall and CPU time in seconds (the initialization
included, the reading of the matrix not) and the objective
1/2 ||X - WH||_F^2, the one fednmf.TrainMatrix reports. Run it on one core
(OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1), as bench/nmf.sh does.
"""
import json
import sys
import time
import warnings

import numpy as np
import scipy.io
import sklearn
from sklearn.decomposition import NMF
from sklearn.exceptions import ConvergenceWarning


def main():
    path, k, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    x = scipy.io.mmread(path).tocsr().astype(np.float64)
    for max_iter in map(int, sys.argv[4:]):
        model = NMF(n_components=k, init="random", solver="cd", beta_loss="frobenius",
                    random_state=seed, max_iter=max_iter, tol=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            start, cpu = time.perf_counter(), time.process_time()
            model.fit_transform(x)
            secs, cpu = time.perf_counter() - start, time.process_time() - cpu
        print(json.dumps({"tool": "scikit-learn " + sklearn.__version__, "iter": model.n_iter_,
                          "seconds": secs, "cpu_seconds": cpu, "objective": 0.5 * model.reconstruction_err_ ** 2}), flush=True)


if __name__ == "__main__":
    main()
