#!/usr/bin/env python3
"""The benchmark's one judge: Strata's primal objective for every solver's weights.

    P(w) = (1/n) sum_i log(1 + exp(-y_i x_i.w)) + (lambda/2) ||w||^2

(solver/MODELS.md section 1: unit example weights, no intercept anywhere), plus test
logloss and AUC. Weights come from a LIBLINEAR-format model file (strata-train and
liblinear-train both write one) or a .npy vector (scikit-learn's and Snap ML's coef_,
saved by peers.py). Feature k of the svmlight file (1-based, as in LIBLINEAR) is
w[k-1]; a model shorter than the data's width is padded with zeros (LIBLINEAR stores
only up to the largest index it saw).

    objective.py --data train.svm --lambda 1e-6 [--test test.svm] MODEL...

prints one JSON object per model: {"model", "primal", "loss", "reg", "wnorm2",
"test_logloss", "test_auc", "test_accuracy"}.

Parsed svmlight files are cached next to the file as FILE.npz (scipy CSR, float64),
keyed on the file's size and mtime, so repeated evaluations skip the text parsing.
"""

import argparse
import json
import os
import sys

import numpy as np
import scipy.sparse as sp


def load_bin(path):
    """(X csr float64, y in {-1,+1}) from Strata's binary CSR file (solver/st_glm_data_bin.c:
    a 128-byte header, then row pointers, 0-based columns, values, labels; not verified;
    versions 1 and 2 share the layout, and 0/1 classes are stored as +1/-1 in both)."""
    with open(path, "rb") as f:
        h = f.read(128)
    if h[:8] != b"STGLMCSR":
        raise ValueError(f"{path}: not a Strata binary CSR file")
    prec = int.from_bytes(h[16:20], "little")
    rows, cols, nnz = (int.from_bytes(h[o:o + 8], "little") for o in (24, 32, 40))
    off = [int.from_bytes(h[48 + 8 * s:56 + 8 * s], "little") for s in range(4)]
    m = np.memmap(path, dtype=np.uint8, mode="r")
    indptr = np.frombuffer(m, np.int64, rows + 1, off[0])
    indices = np.frombuffer(m, np.uint32, nnz, off[1]).astype(np.int32)
    values = np.frombuffer(m, np.float32 if prec in (4, 32) else np.float64, nnz, off[2])
    y = np.frombuffer(m, np.float64, rows, off[3])
    X = sp.csr_matrix((values.astype(np.float64), indices, np.array(indptr)), shape=(rows, cols))
    return X, np.where(y > 0, 1.0, -1.0)


def load_svm(path, n_features=None):
    """(X csr float64, y in {-1,+1}) from an svmlight file, 1-based indices (or from
    Strata's binary CSR file, by its magic number)."""
    with open(path, "rb") as f:
        binary = (f.read(8) == b"STGLMCSR")
    if binary:
        X, y = load_bin(path)
        return _widen(X, n_features), y
    st = os.stat(path)
    cache = path + ".npz"
    key = np.array([st.st_size, int(st.st_mtime)], dtype=np.int64)
    if os.path.exists(cache):
        try:
            z = np.load(cache)
            if np.array_equal(z["key"], key) and (n_features is None or
                                                    z["shape"][1] >= n_features):
                X = sp.csr_matrix((z["data"], z["indices"], z["indptr"]),
                                  shape=tuple(z["shape"]))
                return _widen(X, n_features), z["y"]
        except Exception:  # a stale or broken cache: parse again
            pass
    from sklearn.datasets import load_svmlight_file

    X, y = load_svmlight_file(path, zero_based=False, dtype=np.float64,
                              n_features=n_features)
    X = sp.csr_matrix(X)
    X.sort_indices()
    y = np.where(y > 0, 1.0, -1.0)
    try:
        np.savez(cache, key=key, data=X.data, indices=X.indices, indptr=X.indptr,
                 shape=np.array(X.shape), y=y)
    except OSError:
        pass
    return X, y


def _widen(X, n_features):
    if n_features is not None and X.shape[1] < n_features:
        X = sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], n_features))
    return X


def read_liblinear_model(path):
    """w (oriented so that w.x > 0 means label +1) from a LIBLINEAR text model."""
    labels, bias, w = None, -1.0, []
    with open(path) as f:
        for line in f:
            tok = line.split()
            if not tok:
                continue
            if tok[0] == "label":
                labels = [float(t) for t in tok[1:]]
            elif tok[0] == "bias":
                bias = float(tok[1])
            elif tok[0] == "nr_class" and int(tok[1]) != 2:
                raise ValueError(f"{path}: not a binary model")
            elif tok[0] == "w":
                break
        for line in f:
            tok = line.split()
            if tok:
                w.append(float(tok[0]))
    if bias > 0:
        raise ValueError(f"{path}: has a bias term; the benchmark uses none")
    w = np.asarray(w, dtype=np.float64)
    # LIBLINEAR's decision value favours labels[0]; flip when that is the negative class.
    if labels is not None and labels[0] <= 0:
        w = -w
    return w


def read_weights(path):
    if path.endswith(".npy"):
        return np.asarray(np.load(path), dtype=np.float64).ravel()
    return read_liblinear_model(path)


def fit_width(w, d):
    if w.shape[0] < d:
        w = np.concatenate([w, np.zeros(d - w.shape[0])])
    elif w.shape[0] > d:
        if np.any(w[d:] != 0):
            raise ValueError("model has nonzero weights beyond the data's columns")
        w = w[:d]
    return w


def logistic_loss_sum(z, y):
    # log(1 + exp(-m)) without overflow: logaddexp(0, -m)
    return float(np.logaddexp(0.0, -y * z).sum())


def primal(X, y, lam, w):
    """(P, mean loss, reg) exactly as Strata defines P (unit weights, no bias)."""
    w = fit_width(w, X.shape[1])
    z = X @ w
    loss = logistic_loss_sum(z, y) / X.shape[0]
    reg = 0.5 * lam * float(w @ w)
    return loss + reg, loss, reg


def gradient_bound(X, y, lam, w):
    """||grad P(w)|| and the certificate P(w) - P* <= ||grad P(w)||^2 / (2 lambda)
    (P is lambda-strongly convex)."""
    w = fit_width(w, X.shape[1])
    m = y * (X @ w)
    # d/dz log(1 + exp(-y z)) = -y sigmoid(-m) = -y / (1 + exp(m))
    g = X.T @ (-y * np.exp(-np.logaddexp(0.0, m))) / X.shape[0] + lam * w
    gn = float(np.linalg.norm(g))
    return gn, gn * gn / (2 * lam)


def test_metrics(X, y, w):
    from sklearn.metrics import roc_auc_score

    w = fit_width(w, X.shape[1])
    z = X @ w
    logloss = logistic_loss_sum(z, y) / X.shape[0]  # = cross-entropy of sigmoid(z)
    auc = float(roc_auc_score(y > 0, z))
    acc = float(np.mean((z > 0) == (y > 0)))
    return logloss, auc, acc


def evaluate(X, y, lam, w, Xt=None, yt=None):
    p, loss, reg = primal(X, y, lam, w)
    out = {"primal": p, "loss": loss, "reg": reg, "wnorm2": 2 * reg / lam}
    if Xt is not None:
        out["test_logloss"], out["test_auc"], out["test_accuracy"] = test_metrics(Xt, yt, w)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", required=True, help="training data (svmlight)")
    ap.add_argument("--lambda", dest="lam", type=float, required=True)
    ap.add_argument("--test", help="held-out data for logloss/AUC")
    ap.add_argument("--cols", type=int, help="data width (default: widest seen)")
    ap.add_argument("--grad", action="store_true",
                    help="also print ||grad P|| and the bound P - P* <= ||grad||^2/(2 lambda)")
    ap.add_argument("models", nargs="+", help="LIBLINEAR model files or .npy vectors")
    a = ap.parse_args(argv)
    X, y = load_svm(a.data, a.cols)
    Xt = yt = None
    if a.test:
        Xt, yt = load_svm(a.test, X.shape[1])
        d = max(X.shape[1], Xt.shape[1])
        X, Xt = _widen(X, d), _widen(Xt, d)
    for m in a.models:
        w = read_weights(m)
        d = max(X.shape[1], w.shape[0])
        r = evaluate(_widen(X, d), y, a.lam, w, None if Xt is None else _widen(Xt, d), yt)
        if a.grad:
            r["grad_norm"], r["subopt_bound"] = gradient_bound(_widen(X, d), y, a.lam, w)
        r["model"] = m
        print(json.dumps(r), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
