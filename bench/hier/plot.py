#!/usr/bin/env python3
"""Plot bench/hier/run.sh's results: relative duality gap against time, flat vs
hierarchical CoCoA+, every run; print the time each run took to the target gap and
the ratio of the medians.

    bench/hier/plot.py OUT_DIR PNG TITLE TOL
"""
import csv
import os
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

out, png, title, tol = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
runs = {}   # (schedule, run) -> [(seconds, rel_gap, round)]
for r in csv.DictReader(open(os.path.join(out, "times.csv"))):
    runs.setdefault((r["schedule"], int(r["run"])), []).append(
        (float(r["seconds"]), float(r["rel_gap"]), int(r["round"])))
if not runs:
    sys.exit(f"plot.py: no rounds in {out}/times.csv")

levels = sorted({1e-1, 1e-2, 5e-3, 2e-3, tol} - {x for x in (1e-1, 1e-2, 5e-3, 2e-3)
                                                if x < tol}, reverse=True)
at = {}        # (schedule, level) -> [seconds]
for (sched, run), pts in runs.items():
    for lv in levels:
        hit = next((p for p in sorted(pts) if p[1] <= lv), None)
        if hit is not None:
            at.setdefault((sched, lv), []).append(hit[0])
reached = {}   # schedule -> [seconds to tol]
fig, ax = plt.subplots(figsize=(7.5, 5))
colors = {"flat": "tab:blue", "hierarchical": "tab:red"}
for (sched, run), pts in sorted(runs.items()):
    pts.sort()
    ax.loglog([p[0] for p in pts], [p[1] for p in pts], color=colors.get(sched, "k"),
                alpha=1.0 if run == 1 else 0.5, label=sched if run == 1 else None)
    hit = next((p for p in pts if p[1] <= tol), None)
    if hit is None:
        print(f"{sched}, run {run}: did not reach {tol:g} "
              f"(last: {pts[-1][1]:.3e} after {pts[-1][0]:.1f} s)")
    else:
        print(f"{sched}, run {run}: relative gap {tol:g} after {hit[0]:.1f} s, "
              f"{hit[2]} rounds over all ranks")
        reached.setdefault(sched, []).append(hit[0])
ax.axhline(tol, color="gray", linestyle=":", linewidth=1)
ax.set_xlabel("time (s, log scale)")
ax.set_ylabel("relative duality gap")
ax.set_title(title, fontsize=9)
ax.legend()
ax.grid(True, which="both", alpha=0.3)
fig.tight_layout()
fig.savefig(png, dpi=110)
print("relative gap:  " + "  ".join(f"{lv:>9g}" for lv in levels))
for sched in ("flat", "hierarchical"):
    print(f"{sched:>12}:  " + "  ".join(
        f"{statistics.median(at[(sched, lv)]):8.1f}s" if (sched, lv) in at else "        -"
        for lv in levels))
print("       ratio:  " + "  ".join(
    f"{statistics.median(at[('flat', lv)]) / statistics.median(at[('hierarchical', lv)]):8.2f}x"
    if ("flat", lv) in at and ("hierarchical", lv) in at else "        -" for lv in levels))
if "flat" in reached and "hierarchical" in reached:
    f, h = statistics.median(reached["flat"]), statistics.median(reached["hierarchical"])
    print(f"time to {tol:g}: flat {f:.1f} s, hierarchical {h:.1f} s (medians): "
          f"hierarchical {f / h:.2f}x faster")
print(f"plot: {png}")
