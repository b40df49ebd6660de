#!/usr/bin/env python3
"""Exports scikit-learn's bundled data sets to svmlight and writes refs.txt: each
model's optimum found by scikit-learn at the same regularization, in Strata's form

    P(w) = (1/n) sum_i c_i phi(x_i.w, y_i) + lambda (eta ||w||_1 + (1 - eta)/2 ||w||^2)

(solver/MODELS.md 1.1: LogisticRegression / LinearSVC C = 1 / (lambda n), Ridge alpha
= lambda n, Lasso / ElasticNet alpha = lambda, l1_ratio = eta; class_weight = Strata's
--weight-pos/--weight-neg; liblinear's intercept, regularized, = Strata's -B 1).
tests/glm_sklearn.sh trains Strata on the files and compares. Run from this folder:

    python3 make.py     # scikit-learn, numpy, scipy; the files are committed

Every reference is checked here: the smooth models by their gradient (P - P* <=
||grad||^2 / (2 lambda)), the L1 models by their optimality conditions, the hinge by
a duality gap; all within 1e-9 of P relative, so that 1e-6 in the test is Strata's.
"""
import sys
import warnings

import numpy as np
import sklearn
from sklearn import datasets
from sklearn.datasets import load_svmlight_file
from sklearn.linear_model import ElasticNet, Lasso, LogisticRegression, Ridge
from sklearn.svm import LinearSVC

warnings.simplefilter("ignore")
TOL = 1e-9


def write_svm(path, X, y, label_fmt):
    with open(path, "w") as f:
        for xi, yi in zip(X, y):
            ent = " ".join(f"{j + 1}:{float(v)!r}" for j, v in enumerate(xi) if v != 0.0)
            f.write(label_fmt(yi) + (" " + ent if ent else "") + "\n")


def standardize(X):
    return (X - X.mean(axis=0)) / X.std(axis=0)


def export():
    """The files, as Strata and this script will read them."""
    d = datasets.load_breast_cancer()     # 569 x 30, labels 0/1 kept as 0/1
    write_svm("breast_cancer.svm", standardize(d.data), d.target, lambda v: str(int(v)))
    d = datasets.load_digits()            # 1797 x 64, values 0..16 / 16, sparse
    write_svm("digits_parity.svm", d.data / 16.0, np.where(d.target % 2 == 0, 1, -1),
              lambda v: "%+d" % v)
    d = datasets.load_wine()              # 178 x 13, class 0 against the others
    write_svm("wine0.svm", standardize(d.data), np.where(d.target == 0, 1, -1),
              lambda v: "%+d" % v)
    d = datasets.load_diabetes()          # 442 x 10, real targets
    write_svm("diabetes.svm", d.data, d.target, lambda v: repr(float(v)))


def load(name, binary):
    X, y = load_svmlight_file(name + ".svm", zero_based=False, dtype=np.float64)
    X = X.toarray()
    if binary:
        y = np.where(y > 0, 1.0, -1.0)
    return X, y


def loss_of(kind, z, y):
    m = y * z
    if kind in ("logistic", "l1-logistic"):
        return np.logaddexp(0.0, -m), -y / (1.0 + np.exp(m))
    if kind == "sqsvm":
        h = np.maximum(0.0, 1.0 - m)
        return h * h, -2.0 * y * h
    if kind == "svm":
        return np.maximum(0.0, 1.0 - m), None
    return 0.5 * (z - y) ** 2, z - y      # ridge, lasso, elastic-net


def primal(kind, X, y, c, lam, eta, w):
    f, g = loss_of(kind, X @ w, y)
    n = len(y)
    P = (c * f).sum() / n + lam * (eta * np.abs(w).sum() + (1 - eta) / 2 * (w @ w))
    grad = None if g is None else X.T @ (c * g) / n
    return P, grad


def certify(kind, X, y, c, lam, eta, w, P, grad):
    """An upper bound on P - P* (eta 1: the optimality conditions' violation)."""
    n = len(y)
    if kind == "svm":
        # the dual point alpha_i = c_i * (1 if m < 1, t in [0, 1] at m = 1), w(alpha)
        # = (1/(lambda n)) sum alpha_i y_i x_i; D = (1/n) sum alpha_i - lambda/2 ||w||^2
        m = y * (X @ w)
        a = np.where(m < 1 - 1e-9, c, 0.0)
        free = np.abs(m - 1) <= 1e-9
        # fit the free alphas so that w(alpha) = w in least squares, boxed
        if free.any():
            A = (X[free] * y[free, None]).T / (lam * n)
            r = w - (X[~free] * (a[~free] * y[~free])[:, None]).sum(0) / (lam * n)
            t, *_ = np.linalg.lstsq(A, r, rcond=None)
            a[free] = np.clip(t, 0.0, c[free])
        wa = (X * (a * y)[:, None]).sum(0) / (lam * n)
        D = a.sum() / n - lam / 2 * (wa @ wa)
        return P - D
    # the minimal-norm subgradient of the whole objective
    gl = grad + lam * (1 - eta) * w
    s = np.where(w != 0, gl + lam * eta * np.sign(w),
                 np.sign(gl) * np.maximum(np.abs(gl) - lam * eta, 0.0))
    if eta < 1:
        return float(s @ s / (2 * lam * (1 - eta)))   # over the strong convexity
    # eta 1 has none: the KKT violation, scaled by the size of w
    return float(np.abs(s).max() * (np.abs(w).sum() + 1))


def main():
    cases = []
    export()
    X, y = load("breast_cancer", True)
    n = len(y)
    for kind, lam, extra in (("logistic", 1e-3, ""), ("logistic", 1e-3, "-B 1"),
                             ("sqsvm", 1e-3, ""), ("svm", 1e-2, ""),
                             ("l1-logistic", 1e-2, "")):
        cases.append(("breast_cancer", X, y, kind, lam, 0.0 if kind != "l1-logistic" else 1.0,
                      extra, np.ones(n)))
    X, y = load("digits_parity", True)
    cases.append(("digits_parity", X, y, "logistic", 1e-4, 0.0, "", np.ones(len(y))))
    X, y = load("wine0", True)
    cases.append(("wine0", X, y, "logistic", 1e-2, 0.0, "--weight-pos 2",
                  np.where(y > 0, 2.0, 1.0)))
    X, y = load("diabetes", False)
    n = len(y)
    cases.append(("diabetes", X, y, "ridge", 1e-3, 0.0, "", np.ones(n)))
    cases.append(("diabetes", X, y, "lasso", 0.5, 1.0, "", np.ones(n)))
    cases.append(("diabetes", X, y, "elastic-net", 0.05, 0.5, "--eta 0.5", np.ones(n)))

    out = ["# scikit-learn %s, numpy %s: name solver lambda options P* (see make.py)"
           % (sklearn.__version__, np.__version__)]
    for name, X, y, kind, lam, eta, extra, c in cases:
        n = len(y)
        C = 1.0 / (lam * n)
        bias = "-B 1" in extra
        if kind == "logistic":
            est = LogisticRegression(C=C, fit_intercept=bias, solver="liblinear" if bias
                                     else "newton-cg", tol=1e-14, max_iter=100000,
                                     class_weight={1: 2.0, -1: 1.0} if "--weight-pos" in extra
                                     else None)
        elif kind == "l1-logistic":
            est = LogisticRegression(C=C, l1_ratio=1.0, penalty="l1", solver="liblinear",
                                     fit_intercept=False, tol=1e-14, max_iter=100000)
        elif kind == "sqsvm":
            est = LinearSVC(C=C, loss="squared_hinge", dual=False, fit_intercept=False,
                            tol=1e-14, max_iter=100000)
        elif kind == "svm":
            est = LinearSVC(C=C, loss="hinge", dual=True, fit_intercept=False, tol=1e-14,
                            max_iter=10000000)
        elif kind == "ridge":
            est = Ridge(alpha=lam * n, fit_intercept=False, solver="cholesky")
        elif kind == "lasso":
            est = Lasso(alpha=lam, fit_intercept=False, tol=1e-16, max_iter=10000000)
        else:
            est = ElasticNet(alpha=lam, l1_ratio=eta, fit_intercept=False, tol=1e-16,
                             max_iter=10000000)
        est.fit(X, y)
        w = np.ravel(est.coef_)
        Xb = X
        if bias:
            Xb = np.hstack([X, np.ones((n, 1))])
            w = np.append(w, est.intercept_)
        P, grad = primal(kind, Xb, y, c, lam, eta, w)
        bound = certify(kind, Xb, y, c, lam, eta, w, P, grad)
        nnz = int((w != 0).sum())
        print(f"{name:14s} {kind:12s} lambda {lam:g} {extra:15s} P* {P:.15e} "
              f"bound {bound:.1e} ({bound / P:.1e} relative) nonzeros {nnz}/{len(w)}")
        if not bound / P <= TOL:
            sys.exit(f"{name} {kind}: scikit-learn's solution not certified ({bound:.2e})")
        out.append(f"{name} {kind} {lam!r} {extra.replace(' ', ',') or '-'} {P:.15e}")
    with open("refs.txt", "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
