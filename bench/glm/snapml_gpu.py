#!/usr/bin/env python3
"""Snap ML's logistic regression on the GPU beside strata-train --gpu (issue 6).

    snapml_gpu.py --data TRAIN.svm --lambda L [--model NAME=FILE]... [--cap S] [--threads T]

Loads the svmlight data once (objective.load_svm: float64 CSR, cached as .npz),
then fits snapml.LogisticRegression(use_gpu=True, dual=True, no intercept,
regularizer = lambda * n: the same objective as strata-train -l lambda) at
max_iter 1, 2, 4, ... until its primal reaches the best given model's or the
fits have taken --cap seconds. Each fit is timed alone (fit() on data already in
memory, as bench.py times the Python peers); each model given with --model
(strata-train's output) is judged by the same objective.primal. Prints one line
per point and a closing line: the first max_iter whose primal is within 1e-3
(relative) of the best model's, and its seconds. --threads T fits on the CPU
with T threads instead.
"""

import argparse
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import objective as ob  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--lambda", dest="lam", type=float, required=True)
    ap.add_argument("--model", action="append", default=[], help="NAME=FILE")
    ap.add_argument("--cap", type=float, default=120.0)
    ap.add_argument("--max-iter", type=int, default=1024)
    ap.add_argument("--threads", type=int, default=0,
                    help="run on the CPU with this many threads instead of the GPU")
    a = ap.parse_args()

    t = time.perf_counter()
    X, y = ob.load_svm(a.data)
    n = X.shape[0]
    print(f"snapml_gpu: {a.data}: {n} rows, {X.shape[1]} cols, {X.nnz} nnz, loaded in "
          f"{time.perf_counter() - t:.1f} s", flush=True)
    best = None
    for spec in a.model:
        name, path = spec.split("=", 1)
        w = ob.fit_width(ob.read_weights(path), X.shape[1])
        P = ob.primal(X, y, a.lam, w)[0]
        print(f"model {name}: primal {P:.10g}", flush=True)
        best = P if best is None else min(best, P)

    import snapml

    X32 = X.astype(np.float32)
    who = f"snapml {a.threads}t" if a.threads else "snapml gpu"
    spent, k, hit = 0.0, 1, None
    while k <= a.max_iter and spent < a.cap:
        est = snapml.LogisticRegression(regularizer=a.lam * n, fit_intercept=False, dual=True,
                                        max_iter=k, tol=1e-12, random_state=0,
                                        **({"n_jobs": a.threads} if a.threads else
                                           {"use_gpu": True, "device_ids": [0]}))
        t = time.perf_counter()
        est.fit(X32, y)
        secs = time.perf_counter() - t
        spent += secs
        w = np.asarray(est.coef_, dtype=np.float64).ravel()
        P = ob.primal(X, y, a.lam, ob.fit_width(w, X.shape[1]))[0]
        rel = (P - best) / best if best else float("nan")
        print(f"{who}: max_iter={k}: {secs:.3f} s, primal {P:.10g}, "
              f"relative to the best model {rel:.3e}", flush=True)
        if best is not None and rel <= 1e-3:
            hit = (k, secs)
            break
        k *= 2
    if hit:
        print(f"{who}: within 1e-3 of the best model at max_iter={hit[0]}, {hit[1]:.3f} s")
    else:
        print(f"{who}: not within 1e-3 of the best model after {spent:.1f} s of fits")


if __name__ == "__main__":
    main()
