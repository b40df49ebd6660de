#!/usr/bin/env python3
"""Strata's one-rank lasso and elastic net against scikit-learn's coordinate descent.

    [STRATA_TRAIN=PATH] bench/glm/lasso.py [--reps 3] [--tol 1e-6] [--gap-every N|auto]
        SET.svm:LAMBDA[:ETA] ...

For each set and lambda (and elastic net's eta, scikit-learn's l1_ratio), in turns
(Strata, scikit-learn, Strata, ...) so that both see the same phases of a shared
machine:
  - strata-train -s lasso|elastic-net -l LAMBDA [--eta ETA] -e TOL -r 10000, one rank,
    one thread [--gap-every: its certificate every N epochs, or auto]; its time is the
    one it prints (its clock starts after reading the file: the column copy of the
    rows and the certificates are in it);
  - scikit-learn Lasso(alpha=LAMBDA) / ElasticNet(alpha, l1_ratio=ETA),
    fit_intercept=False, tol=TOL, on a CSC matrix made before the clock starts (its
    fastest input: fit() makes one from CSR otherwise), fit() timed alone.
Both objectives are P(w) = (1/2n) ||Xw - y||^2 + lambda (eta ||w||_1 + (1-eta)/2
||w||^2), recomputed here from each one's weights. scikit-learn's tol is on its own
gap (duality gap <= tol ||y||^2 / n), looser than Strata's relative gap; the table
gives both objectives, so a faster but farther stop shows.
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import time

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file
from sklearn.linear_model import ElasticNet, Lasso

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TRAIN = os.environ.get("STRATA_TRAIN", os.path.join(ROOT, "tools", "strata-train"))


def objective(X, y, w, lam, eta):
    r = X @ w - y
    return 0.5 * float(r @ r) / X.shape[0] + lam * (eta * np.abs(w).sum() +
                                                    0.5 * (1 - eta) * float(w @ w))


def read_model(path, d):
    with open(path) as f:
        lines = f.read().split("\n")
    start = lines.index("w") + 1
    w = np.array([float(v) for v in lines[start:] if v.strip()])
    out = np.zeros(d)
    out[:min(d, len(w))] = w[:d]
    return out


def run_strata(path, lam, eta, tol, model, gap_every):
    cmd = [TRAIN, "-s", "lasso" if eta == 1.0 else "elastic-net", "-l", repr(lam),
           "-e", repr(tol), "-r", "10000", "-t", "1"]
    if eta != 1.0:
        cmd += ["--eta", repr(eta)]
    if gap_every:
        cmd += ["--gap-every", gap_every]
    cmd += [path, model]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    m = re.search(r"^(converged|stopped) after (\d+) rounds: .* ([0-9.]+) s \(allreduce",
                  out, re.M)
    if m is None:
        sys.exit("strata-train printed no final line:\n" + out)
    return float(m.group(3)), int(m.group(2))


def run_sklearn(Xc, y, lam, eta, tol):
    est = (Lasso(alpha=lam, fit_intercept=False, tol=tol, max_iter=100000)
           if eta == 1.0 else
           ElasticNet(alpha=lam, l1_ratio=eta, fit_intercept=False, tol=tol,
                      max_iter=100000))
    t = time.perf_counter()
    est.fit(Xc, y)
    return time.perf_counter() - t, int(est.n_iter_), est.coef_.copy()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--tol", type=float, default=1e-6)
    ap.add_argument("--gap-every", default=None)
    ap.add_argument("runs", nargs="+", help="SET.svm:LAMBDA[:ETA]")
    a = ap.parse_args()
    model = "/tmp/strata-lasso-bench.%d.model" % os.getpid()
    print("| set | n x d, nnz | lambda, eta | Strata s (epochs) | scikit-learn s (iters) "
          "| sklearn / Strata | P Strata | P scikit-learn |")
    print("|---|---|---|---|---|---|---|---|")
    for spec in a.runs:
        parts = spec.split(":")
        path, lam = parts[0], float(parts[1])
        eta = float(parts[2]) if len(parts) > 2 else 1.0
        X, y = load_svmlight_file(path)
        Xc = sp.csc_matrix(X)
        ts, tk = [], []
        for _ in range(a.reps):
            t, ep = run_strata(path, lam, eta, a.tol, model, a.gap_every)
            ts.append(t)
            t, it, coef = run_sklearn(Xc, y, lam, eta, a.tol)
            tk.append(t)
        ws = read_model(model, X.shape[1])
        ps, pk = objective(X, y, ws, lam, eta), objective(X, y, coef, lam, eta)
        s, k = statistics.median(ts), statistics.median(tk)
        print(f"| {os.path.basename(path)} | {X.shape[0]} x {X.shape[1]}, {X.nnz} | "
              f"{lam:g}, {eta:g} | {s:.3f} ({ep}) | {k:.3f} ({it}) | {k / s:.2f} | "
              f"{ps:.10e} | {pk:.10e} |", flush=True)
    os.unlink(model)


if __name__ == "__main__":
    main()
