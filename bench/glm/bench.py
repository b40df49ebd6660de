#!/usr/bin/env python3
"""Strata's GLM solver against LIBLINEAR, scikit-learn and Snap ML.

Subcommands (run.sh calls them in order; every one appends JSON lines to
OUT/runs.jsonl, so a partial run still reports what it did):

  reference   LIBLINEAR -s 0 (trust-region Newton) to a very tight -e: P*'s first value
  strata      strata-train traces (1 or 2 ranks, threads, -E), time to the target
  liblinear   LIBLINEAR -s 0 / -s 7 at decreasing -e (ll_bench: train() timed alone)
  python      scikit-learn / Snap ML at increasing max_iter (fit() timed alone)
  throughput  Strata's SDCA nonzeros per second per core (-E 3 minus -E 1)
  testeval    each solver's model at its budget on the held-out rows: logloss, AUC
  report      P* = the best P of any run; tables (results.md, results.json), plot

Timing excludes data loading for every solver: strata-train's per-round clock starts
after the data are read; ll_bench times LIBLINEAR's train() only; the Python peers
time fit() on data already in memory. P(w) is always objective.py's, on the saved
weights (each solver's own printed objective is used only to pick the run).
"""

import argparse
import json
import math
import os
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import objective as ob  # noqa: E402

SUBOPT = 1e-3          # the target: (P - P*)/P* <= SUBOPT


def log(*a):
    print("[bench %s]" % time.strftime("%H:%M:%S"), *a, file=sys.stderr, flush=True)


def record(out, rec):
    rec.setdefault("load", os.getloadavg()[0])
    with open(os.path.join(out, "runs.jsonl"), "a") as f:
        f.write(json.dumps(rec) + "\n")


def read_runs(out):
    path = os.path.join(out, "runs.jsonl")
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def pstar_ref(out, tag):
    with open(os.path.join(out, f"ref-{tag}.json")) as f:
        return json.load(f)["primal"]


def n_rows(path):
    X, _ = ob.load_svm(path)
    return X.shape[0], X.nnz


# --------------------------------------------------------------------------- reference

def cmd_reference(a):
    n, _ = n_rows(a.data)
    C = 1.0 / (a.lam * n)
    model = os.path.join(a.out, f"ref-{a.tag}.model")
    cmd = [a.ll_bench, "-s", "0", "-c", repr(C), "-e", repr(a.eps), "-l", repr(a.lam),
           a.data, model]
    log("reference:", " ".join(cmd))
    t = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True, check=True)
    log(p.stdout.strip().replace("\n", " | "))
    X, y = ob.load_svm(a.data, a.cols)
    w = ob.read_weights(model + ".0")
    P = ob.primal(X, y, a.lam, w)[0]
    gn, bound = ob.gradient_bound(X, y, a.lam, w)
    rec = {"kind": "reference", "tag": a.tag, "lambda": a.lam, "C": C, "eps": a.eps,
           "primal": P, "grad_norm": gn, "subopt_bound": bound,
           "wall": time.time() - t, "cmd": " ".join(cmd)}
    with open(os.path.join(a.out, f"ref-{a.tag}.json"), "w") as f:
        json.dump(rec, f, indent=1)
    record(a.out, rec)
    log(f"P_ref = {P:.12e}, ||grad|| = {gn:.3e}, P - P* <= {bound:.3e} "
        f"(relative {bound / P:.2e})")


# --------------------------------------------------------------------------- strata

ROUND_RE = re.compile(r"^round\s+(\d+)\s+primal\s+(\S+)\s+dual\s+(\S+)\s+gap\s+(\S+)\s+"
                      r"rel\s+(\S+)\s+time\s+(\S+) s \(allreduce (\S+) s\)")


def strata_cmd(a, rounds, model, gap="1"):
    base = [a.strata_train, "-s", "logistic", "-l", repr(a.lam), "-e", "1e-12",
            "-r", str(rounds), "--gap-every", gap, "-E", str(a.epochs), "-t", str(a.threads),
            model]
    if a.thread_mode != "replicas":
        base[-1:-1] = ["--thread-mode", a.thread_mode]
    # always named: strata-train's default (auto) may pick another method
    base[-1:-1] = ["--method", a.method]
    base.insert(-1, a.data)
    if a.ranks == 1:
        return base
    return [a.mpirun, "-np", str(a.ranks), "--bind-to", "core", a.strata_run] + base


def run_strata(a, rounds, model, stop_subopt=None, pstar=None, cap=None, gap="1"):
    """Runs strata-train, returns the trace (the rounds that computed the gap: every
    round, or with gap="auto" a few and the last); with stop_subopt, ends the run (its
    own process) once the primal is that close to pstar, or after cap seconds."""
    cmd = strata_cmd(a, rounds, model, gap)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, env=env)
    trace, head, stopped = [], "", False
    for line in proc.stdout:
        m = ROUND_RE.match(line)
        if not m:
            head += line
            continue
        r = [float(x) for x in m.groups()]
        trace.append({"round": int(r[0]), "primal": r[1], "dual": r[2], "gap": r[3],
                      "seconds": r[5], "allreduce": r[6]})
        if (stop_subopt is not None and (r[1] - pstar) / pstar <= stop_subopt) or \
                (cap is not None and r[5] > cap):
            proc.terminate()
            stopped = True
            break
    proc.stdout.close()
    rc = proc.wait()
    if rc != 0 and not stopped:
        raise RuntimeError(f"{' '.join(cmd)}: exit {rc}\n{head}")
    return trace, " ".join(cmd), head


def cmd_strata(a):
    P0 = pstar_ref(a.out, a.tag)
    target = P0 * (1 + SUBOPT)
    # the variant in the name: the thread mode (cd), or the method
    variant = a.method if a.method != "cd" else ("shared" if a.thread_mode == "shared" else "")
    name = (f"strata {a.ranks}r x {a.threads}t {a.method}" if a.method != "cd" else
            f"strata {a.ranks}r x {a.threads}t{' ' + variant if variant else ''} E{a.epochs}")
    model = os.path.join(a.out, f"strata-{a.tag}-{a.ranks}r{a.threads}t{variant}"
                                f"-E{a.epochs}.model")
    log(f"{name}: trace run (up to {a.max_rounds} rounds, ended at subopt {a.stop_subopt})")
    trace, cmd, head = run_strata(a, a.max_rounds, model, stop_subopt=a.stop_subopt,
                                  pstar=P0, cap=a.cap)
    hit = next((t for t in trace if t["primal"] <= target), None)
    record(a.out, {"kind": "strata-trace", "tag": a.tag, "solver": name, "lambda": a.lam,
                   "ranks": a.ranks, "threads": a.threads, "epochs": a.epochs,
                   "cmd": cmd, "trace": trace, "rep": 0})
    if hit is None:
        best = min(t["primal"] for t in trace)
        log(f"{name}: target not reached in {len(trace)} rounds "
            f"({trace[-1]['seconds']:.1f} s); best subopt {(best - P0) / P0:.2e}")
        record(a.out, {"kind": "result", "tag": a.tag, "solver": name, "reached": False,
                       "budget": f"{len(trace)} rounds", "cmd": cmd,
                       "best_primal": best,
                       "seconds_max": trace[-1]["seconds"] if trace else None})
        return
    k = hit["round"]
    times = []
    log(f"{name}: first reaches the target at round {k}, {hit['seconds']:.3f} s with the gap "
        f"every round")
    # the timed runs: -r k, the gap (a pass over the rows) only where --gap-every auto
    # computes it (rounds 1, 2, a few more and the last), not every round as the trace
    for rep in range(1, a.repeats + 1):
        tr, cmd_k, _ = run_strata(a, k, model, gap="auto")
        times.append(tr[-1]["seconds"])
        record(a.out, {"kind": "strata-trace", "tag": a.tag, "solver": name,
                       "lambda": a.lam, "cmd": cmd_k, "trace": tr, "rep": rep})
        if tr[-1]["round"] != k or (a.thread_mode == "replicas" and
                                     tr[-1]["primal"] != hit["primal"]):
            log(f"{name}: WARNING round {k} primal differs from the trace's")
    # the judge: the model written after round k, evaluated independently
    X, y = ob.load_svm(a.data, a.cols)
    P = ob.primal(X, y, a.lam, ob.read_weights(model))[0]
    record(a.out, {"kind": "result", "tag": a.tag, "solver": name, "reached": True,
                   "budget": f"-r {k}", "rounds": k, "times": times,
                   "seconds": statistics.median(times), "primal_eval": P,
                   "primal_printed": hit["primal"], "cmd": cmd_strata_str(a, k),
                   "weights": model})
    log(f"{name}: median {statistics.median(times):.3f} s over {len(times)} runs "
        f"{[round(t, 3) for t in times]}; objective.py P = {P:.10e} "
        f"(printed {hit['primal']:.10e})")


def cmd_strata_str(a, k):
    return " ".join(strata_cmd(a, k, "MODEL", "auto"))


# --------------------------------------------------------------------------- liblinear

def cmd_liblinear(a):
    P0 = pstar_ref(a.out, a.tag)
    target = P0 * (1 + SUBOPT)
    n, _ = n_rows(a.data)
    C = 1.0 / (a.lam * n)
    name = f"liblinear -s {a.solver}"
    model = os.path.join(a.out, f"ll{a.solver}-{a.tag}.model")
    eps = [10 ** (math.log10(a.eps_max) - k / 4.0) for k in range(a.eps_steps)]
    epss = ",".join("%.6g" % e for e in eps)
    cmd = [a.ll_bench, "-s", str(a.solver), "-c", repr(C), "-e", epss, "-l", repr(a.lam),
           "-T", repr(target), "-R", str(a.repeats), a.data, model]
    log(name, ":", " ".join(cmd))
    p = subprocess.run(cmd, capture_output=True, text=True, check=True,
                       timeout=a.timeout)
    runs = []
    for line in p.stdout.splitlines():
        m = re.match(r"eps (\S+) rep (\d+) train_seconds (\S+) primal (\S+)", line)
        if m:
            runs.append((float(m.group(1)), int(m.group(2)), float(m.group(3)),
                         float(m.group(4))))
    X, y = ob.load_svm(a.data, a.cols)
    k = 0
    for e, rep, secs, pw in runs:
        if rep == 0:
            P = ob.primal(X, y, a.lam, ob.read_weights(f"{model}.{k}"))[0]
            record(a.out, {"kind": "point", "tag": a.tag, "solver": name, "budget": f"-e {e:g}",
                           "seconds": secs, "primal": P, "primal_own": pw})
            k += 1
    last = [r for r in runs if r[0] == runs[-1][0]]
    reached = runs and runs[-1][3] <= target
    times = [r[2] for r in last]
    rec = {"kind": "result", "tag": a.tag, "solver": name, "reached": bool(reached),
           "budget": f"-e {runs[-1][0]:g}" if runs else None,
           "cmd": f"ll_bench -s {a.solver} -c {C!r} -e {runs[-1][0]:g} TRAIN MODEL "
                  f"(= liblinear-train -s {a.solver} -c {C!r} -e {runs[-1][0]:g})"}
    if reached:
        rec.update(times=times, seconds=statistics.median(times), primal_eval=P,
                   weights=f"{model}.{k - 1}")
    record(a.out, rec)
    log(f"{name}: {'reached' if reached else 'NOT reached'} at {rec['budget']}: "
        f"{[round(t, 3) for t in times]}")


# --------------------------------------------------------------------------- python

def make_estimator(kind, lam, n, k, threads):
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    warnings.filterwarnings("ignore", category=ConvergenceWarning)
    warnings.filterwarnings("ignore", category=FutureWarning)
    warnings.filterwarnings("ignore", category=UserWarning)
    C = 1.0 / (lam * n)
    if kind.startswith("sklearn-"):
        from sklearn.linear_model import LogisticRegression

        solver = kind.split("-", 1)[1]
        return LogisticRegression(C=C, solver=solver, fit_intercept=False, tol=1e-12,
                                  max_iter=k, random_state=0)
    if kind == "snapml":
        import snapml

        # Snap ML minimizes sum_i loss_i + (regularizer/2) ||w||^2: regularizer = lambda n
        return snapml.LogisticRegression(regularizer=lam * n, fit_intercept=False,
                                         dual=True, max_iter=k, tol=1e-12, n_jobs=threads,
                                         random_state=0)
    raise ValueError(kind)


def cmd_python(a):
    import numpy as np

    P0 = pstar_ref(a.out, a.tag)
    target = P0 * (1 + SUBOPT)
    X, y = ob.load_svm(a.data, a.cols)
    n = X.shape[0]
    name = a.kind if a.kind != "snapml" else f"snapml {a.threads}t"
    spent = 0.0
    cache = {}

    def run(k):
        nonlocal spent
        est = make_estimator(a.kind, a.lam, n, k, a.threads)
        t = time.perf_counter()
        est.fit(X, y)
        secs = time.perf_counter() - t
        spent += secs
        w = np.asarray(est.coef_, dtype=np.float64).ravel()
        if list(est.classes_) != [-1.0, 1.0]:
            raise RuntimeError(f"unexpected classes {est.classes_}")
        P = ob.primal(X, y, a.lam, w)[0]
        record(a.out, {"kind": "point", "tag": a.tag, "solver": name,
                       "budget": f"max_iter={k}", "seconds": secs, "primal": P})
        log(f"{name}: max_iter={k}: {secs:.3f} s, subopt {(P - P0) / P0:.3e}")
        cache[k] = (secs, P, w)
        return P <= target

    # doubling, then bisection towards the smallest sufficient max_iter
    k, lo, hi = 1, 0, None
    while hi is None:
        if run(k):
            hi = k
        else:
            lo = k
            # the next run costs about twice this one: stop before the cap is passed
            if spent + 2 * cache[k][0] > a.cap or k >= a.max_iter:
                break
            k *= 2
    if hi is None:
        record(a.out, {"kind": "result", "tag": a.tag, "solver": name, "reached": False,
                       "budget": f"max_iter={lo}", "seconds_max": cache[lo][0],
                       "best_primal": min(v[1] for v in cache.values()),
                       "cmd": repr(make_estimator(a.kind, a.lam, n, lo, a.threads))})
        log(f"{name}: target not reached (max_iter {lo}, {spent:.0f} s spent)")
        return
    # bisection until the budgets are adjacent or their times within 20 % (an
    # iteration's cost can grow a lot near the optimum, e.g. Newton's CG steps)
    while hi - lo > 1 and (lo == 0 or cache[hi][0] > 1.2 * cache[lo][0]):
        mid = (lo + hi) // 2
        if run(mid):
            hi = mid
        else:
            lo = mid
    times = [cache[hi][0]]
    for _ in range(1, a.repeats):
        est = make_estimator(a.kind, a.lam, n, hi, a.threads)
        t = time.perf_counter()
        est.fit(X, y)
        times.append(time.perf_counter() - t)
    weights = os.path.join(a.out, f"{a.kind}{a.threads}-{a.tag}.npy")
    np.save(weights, cache[hi][2])
    record(a.out, {"kind": "result", "tag": a.tag, "solver": name, "reached": True,
                   "budget": f"max_iter={hi}", "times": times,
                   "seconds": statistics.median(times), "primal_eval": cache[hi][1],
                   "cmd": repr(make_estimator(a.kind, a.lam, n, hi, a.threads)),
                   "weights": weights})
    log(f"{name}: max_iter={hi}: median {statistics.median(times):.3f} s {times}")


# --------------------------------------------------------------------------- throughput

def cmd_throughput(a):
    _, nnz = n_rows(a.data)
    per = {}
    for E in (1, 3):
        a.epochs = E
        vals = []
        for rep in range(a.repeats):
            tr, cmd, _ = run_strata(a, a.rounds, os.path.join(a.out, "tp.model"))
            # per-round time without round 1 (first touch of the data and the model)
            vals.append((tr[-1]["seconds"] - tr[0]["seconds"]) / (len(tr) - 1))
        per[E] = vals
        log(f"throughput: {a.ranks}r x {a.threads}t E{E}: seconds/round {vals}")
    e1, e3 = statistics.median(per[1]), statistics.median(per[3])
    cores = a.ranks * a.threads
    epoch = (e3 - e1) / 2
    rec = {"kind": "throughput", "tag": a.tag, "ranks": a.ranks, "threads": a.threads,
           "thread_mode": a.thread_mode, "nnz": nnz, "round_E1": per[1], "round_E3": per[3], "epoch_seconds": epoch,
           "nnz_per_s_per_core": nnz / epoch / cores,
           "round_E1_nnz_per_s_per_core": nnz / e1 / cores,
           "cmd": " ".join(strata_cmd(a, a.rounds, "MODEL"))}
    record(a.out, rec)
    log(f"throughput: SDCA epoch {epoch:.4f} s, {rec['nnz_per_s_per_core'] / 1e6:.1f} "
        f"M nnz/s/core ({cores} core(s))")


# --------------------------------------------------------------------------- testeval

def latest_results(R):
    """The last result of each configuration (one run again replaces its earlier)."""
    latest = {}
    for r in R:
        if r["kind"] == "result":
            latest[r["solver"]] = r
    return list(latest.values())


def weights_of(out, tag, r):
    """The weights file of result @r (runs before the "weights" key: by the names
    cmd_strata, cmd_liblinear and cmd_python give them)."""
    if r.get("weights"):
        return r["weights"]
    m = re.match(r"strata (\d+)r x (\d+)t(?: (shared|lbfgs))?(?: E(\d+))?$", r["solver"])
    if m:
        return os.path.join(out, f"strata-{tag}-{m[1]}r{m[2]}t{m[3] or ''}-E{m[4] or 1}.model")
    m = re.match(r"liblinear -s (\d+)$", r["solver"])
    if m:
        stem = f"ll{m[1]}-{tag}.model."   # .0, .1, ...: one per -e tried, the last reached
        ks = [int(f[len(stem):]) for f in os.listdir(out)
              if f.startswith(stem) and f[len(stem):].isdigit()]
        return os.path.join(out, stem + str(max(ks))) if ks else None
    m = re.match(r"snapml (\d+)t$", r["solver"])
    kind, threads = (("snapml", m[1]) if m else (r["solver"], 1))
    return os.path.join(out, f"{kind}{threads}-{tag}.npy")


def cmd_testeval(a):
    """The model each solver reached the target with, on the held-out rows."""
    R = [r for r in read_runs(a.out) if r.get("tag") == a.tag]
    Xt, yt = ob.load_svm(a.test, a.cols)
    for r in latest_results(R):
        w = weights_of(a.out, a.tag, r) if r.get("reached") else None
        if w is None or not os.path.exists(w):
            continue
        ll, auc, acc = ob.test_metrics(Xt, yt, ob.read_weights(w))
        record(a.out, {"kind": "test", "tag": a.tag, "solver": r["solver"],
                       "weights": w, "test": a.test, "test_logloss": ll,
                       "test_auc": auc, "test_accuracy": acc})
        log(f"{r['solver']}: test logloss {ll:.5f}, AUC {auc:.5f}, accuracy {acc:.5f}")


# --------------------------------------------------------------------------- report

def cmd_report(a):
    runs = read_runs(a.out)
    tags = sorted({r["tag"] for r in runs if r.get("tag")}, key=lambda t: t)
    res = {"tags": {}}
    md = []
    for tag in tags:
        R = [r for r in runs if r.get("tag") == tag]
        ref = next((r for r in R if r["kind"] == "reference"), None)
        if ref is None:
            continue
        ps = [ref["primal"]]
        for r in R:
            if r["kind"] == "point":
                ps.append(r["primal"])
            elif r["kind"] == "strata-trace":
                ps.extend(t["primal"] for t in r["trace"])
            elif r["kind"] == "result" and r.get("primal_eval"):
                ps.append(r["primal_eval"])
        pstar = min(ps)
        results = latest_results(R)
        tests = {r["solver"]: r for r in R if r["kind"] == "test"}
        base = next((r for r in results if r["solver"] == "strata 1r x 1t E1"
                     and r.get("reached")), None)
        md.append(f"\n### {tag}: lambda {ref['lambda']:g} (C = {ref['C']:.6g})\n")
        md.append(f"P* = {pstar:.10e} (reference LIBLINEAR -s 0 -e {ref['eps']:g}: "
                  f"{ref['primal']:.10e}, certified within {ref['subopt_bound']:.2e} of the "
                  f"optimum by its gradient; P* - P_ref = "
                  f"{(pstar - ref['primal']) / ref['primal']:.1e} relative)\n")
        md.append("| solver | budget reaching 1e-3 | time to 1e-3, median (s) | runs (s) "
                  "| ratio to Strata 1r x 1t E1 | subopt of that run | test logloss | "
                  "test AUC | load avg |")
        md.append("|---|---|---|---|---|---|---|---|---|")
        rows = []
        loads = {}
        for r in R:
            if "solver" in r and "load" in r and r["kind"] != "test":
                lo, hi = loads.get(r["solver"], (r["load"], r["load"]))
                loads[r["solver"]] = (min(lo, r["load"]), max(hi, r["load"]))
        for r in results:
            ld = loads.get(r["solver"])
            ld = f"{ld[0]:.1f}-{ld[1]:.1f}" if ld else ""
            if r.get("reached"):
                ts = r["times"]
                ratio = (r["seconds"] / base["seconds"]) if base else float("nan")
                so = (r["primal_eval"] - pstar) / pstar
                te = tests.get(r["solver"])
                te = (f"{te['test_logloss']:.5f} | {te['test_auc']:.5f}"
                      if te and te["weights"] == weights_of(a.out, tag, r) else " | ")
                rows.append((r["seconds"], f"| {r['solver']} | {r['budget']} | "
                             f"{r['seconds']:.2f} | {', '.join('%.2f' % t for t in ts)} | "
                             f"{ratio:.2f} | {so:.1e} | {te} | {ld} |"))
            else:
                mx = r.get("seconds_max")
                bp = r.get("best_primal")
                so = f"best {(bp - pstar) / pstar:.1e}" if bp else ""
                rows.append((1e18, f"| {r['solver']} | not reached ({r['budget']}) | "
                             f"> {mx:.1f} | | | {so} | | | {ld} |" if mx else
                             f"| {r['solver']} | not reached | | | | {so} | | | {ld} |"))
        md.extend(x[1] for x in sorted(rows, key=lambda x: x[0]))
        res["tags"][tag] = {"pstar": pstar, "reference": ref, "results": results}
    tp = {}
    for r in runs:   # a configuration measured again replaces its earlier result
        if r["kind"] == "throughput":
            tp[(r["tag"], r["ranks"], r["threads"], r.get("thread_mode", "replicas"))] = r
    tp = list(tp.values())
    if tp:
        md.append("\n### Strata SDCA throughput\n")
        md.append("| data | ranks x threads | nnz | s/round -E 1 (median) | s/round -E 3 "
                  "(median) | s per SDCA epoch | M nnz/s/core (SDCA) | M nnz/s/core "
                  "(whole -E 1 round) |")
        md.append("|---|---|---|---|---|---|---|---|")
        for r in tp:
            shared = " shared" if r.get("thread_mode") == "shared" else ""
            md.append(f"| {r['tag']} | {r['ranks']} x {r['threads']}{shared} | {r['nnz']} | "
                      f"{statistics.median(r['round_E1']):.4f} "
                      f"({min(r['round_E1']):.4f}-{max(r['round_E1']):.4f}) | "
                      f"{statistics.median(r['round_E3']):.4f} "
                      f"({min(r['round_E3']):.4f}-{max(r['round_E3']):.4f}) | "
                      f"{r['epoch_seconds']:.4f} | {r['nnz_per_s_per_core'] / 1e6:.1f} | "
                      f"{r['round_E1_nnz_per_s_per_core'] / 1e6:.1f} |")
    with open(os.path.join(a.out, "results.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    with open(os.path.join(a.out, "results.json"), "w") as f:
        json.dump(res, f, indent=1, default=str)
    print("\n".join(md))
    plot(runs, res, a.plot)


def plot(runs, res, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tags = list(res["tags"])
    if not tags:
        return
    fig, axes = plt.subplots(1, len(tags), figsize=(7.5 * len(tags), 5.5), squeeze=False)
    for ax, tag in zip(axes[0], tags):
        pstar = res["tags"][tag]["pstar"]
        lam = res["tags"][tag]["reference"]["lambda"]
        series = {}
        for r in runs:
            if r.get("tag") != tag:
                continue
            if r["kind"] == "strata-trace" and r.get("rep") == 0:
                series[r["solver"]] = [(t["seconds"], t["primal"]) for t in r["trace"]]
            elif r["kind"] == "point":
                series.setdefault(r["solver"], []).append((r["seconds"], r["primal"]))
        colors = plt.get_cmap("tab20").colors
        for ci, name in enumerate(sorted(series)):
            pts = sorted(series[name])
            xs = [p[0] for p in pts]
            ys = [max((p[1] - pstar) / pstar, 1e-7) for p in pts]
            col = colors[(2 * ci) % 20 if ci < 10 else (2 * ci + 1) % 20]
            if name.startswith("strata"):
                # the primal of w(alpha) is not monotone: raw per round (faint) and
                # the best so far (solid)
                best, run = [], float("inf")
                for v in ys:
                    run = min(run, v)
                    best.append(run)
                ax.plot(xs, ys, "-", color=col, linewidth=0.5, alpha=0.35)
                ax.plot(xs, best, "-", color=col, linewidth=1.6, label=name + " (best so far)")
            else:
                ax.plot(xs, ys, "o--", color=col, label=name, markersize=3, linewidth=1.2)
        ax.axhline(SUBOPT, color="k", linewidth=0.8, linestyle=":")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("seconds (training only, data loading excluded)")
        ax.set_ylabel("(P(w) - P*) / P*")
        ax.set_title(f"{tag}: logistic, lambda {lam:g}\n(peers: one point per run from "
                     f"scratch; Strata: one run, every round)", fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    log("plot written to", path)


# --------------------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)

    def common(p):
        p.add_argument("--out", required=True)
        p.add_argument("--tag", required=True)
        p.add_argument("--data", required=True)
        p.add_argument("--lambda", dest="lam", type=float, required=True)
        p.add_argument("--cols", type=int)
        p.add_argument("--repeats", type=int, default=3)

    p = sub.add_parser("reference")
    common(p)
    p.add_argument("--ll-bench", required=True)
    p.add_argument("--eps", type=float, default=1e-7)
    p.set_defaults(fn=cmd_reference)

    for nm, fn in (("strata", cmd_strata), ("throughput", cmd_throughput)):
        p = sub.add_parser(nm)
        common(p)
        p.add_argument("--strata-train", required=True)
        p.add_argument("--strata-run", required=True)
        p.add_argument("--mpirun", default="mpirun")
        p.add_argument("--ranks", type=int, default=1)
        p.add_argument("--threads", type=int, default=1)
        p.add_argument("--thread-mode", default="replicas", choices=["replicas", "shared"])
        p.add_argument("--method", default="cd", choices=["cd", "lbfgs", "newton"])
        p.add_argument("--epochs", type=int, default=1)
        p.add_argument("--max-rounds", type=int, default=1000)
        p.add_argument("--rounds", type=int, default=6)
        p.add_argument("--stop-subopt", type=float, default=2e-4)
        p.add_argument("--cap", type=float, default=600,
                       help="end a trace run after this many seconds")
        p.set_defaults(fn=fn)

    p = sub.add_parser("liblinear")
    common(p)
    p.add_argument("--ll-bench", required=True)
    p.add_argument("--solver", type=int, default=0)
    p.add_argument("--eps-max", type=float, default=100.0)
    p.add_argument("--eps-steps", type=int, default=41)
    p.add_argument("--timeout", type=float, default=3600)
    p.set_defaults(fn=cmd_liblinear)

    p = sub.add_parser("python")
    common(p)
    p.add_argument("--kind", required=True,
                   choices=["sklearn-liblinear", "sklearn-lbfgs", "sklearn-saga", "snapml"])
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--cap", type=float, default=600, help="seconds of fits before giving up")
    p.add_argument("--max-iter", type=int, default=4096)
    p.set_defaults(fn=cmd_python)

    p = sub.add_parser("testeval")
    p.add_argument("--out", required=True)
    p.add_argument("--tag", required=True)
    p.add_argument("--test", required=True)
    p.add_argument("--cols", type=int)
    p.set_defaults(fn=cmd_testeval)

    p = sub.add_parser("report")
    p.add_argument("--out", required=True)
    p.add_argument("--plot", required=True)
    p.set_defaults(fn=cmd_report)

    a = ap.parse_args()
    if getattr(a, "out", None):
        os.makedirs(a.out, exist_ok=True)
    a.fn(a)


if __name__ == "__main__":
    main()
