#!/usr/bin/env python3
"""Plot bench/cluster/run.sh's results: time and bus bandwidth against message size,
Strata vs Open MPI tuned vs HAN, one column per link rate.

    bench/cluster/plot.py [OUT_DIR] [PNG]     (defaults: bench/cluster/out, cluster.png)
"""
import csv
import glob
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

here = os.path.dirname(os.path.abspath(__file__))
out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "out")
png = sys.argv[2] if len(sys.argv) > 2 else os.path.join(here, "cluster.png")

runs = {}   # (layout, rate) -> {label: [(bytes, us, busbw)]}
for path in sorted(glob.glob(os.path.join(out, "*.csv"))):
    layout, rate, comp = os.path.basename(path)[:-4].split("-")
    series = runs.setdefault((layout, rate), {})
    for r in csv.DictReader(open(path)):
        label = f"Strata (vs {comp} run)" if r["impl"] == "strata" else \
            ("Open MPI tuned" if comp == "tuned" else "Open MPI HAN")
        series.setdefault(label, []).append((int(r["bytes"]), float(r["time_us_median"]),
                                             float(r["busbw_GBps"])))
if not runs:
    sys.exit(f"plot.py: no results in {out}")
keys = sorted(runs)
fig, axes = plt.subplots(2, len(keys), figsize=(6.5 * len(keys), 9), squeeze=False)
for col, key in enumerate(keys):
    for label, pts in sorted(runs[key].items()):
        pts.sort()
        style = "-" if label.startswith("Strata") else "--"
        axes[0][col].plot([p[0] for p in pts], [p[1] for p in pts], style, marker="o",
                          markersize=3, label=label)
        axes[1][col].plot([p[0] for p in pts], [p[2] for p in pts], style, marker="o",
                          markersize=3, label=label)
    layout, rate = key
    for row, name in ((0, "time per call (us)"), (1, "bus bandwidth (GB/s)")):
        ax = axes[row][col]
        ax.set_xscale("log", base=2)
        if row == 0:
            ax.set_yscale("log")
        ax.set_xlabel("message (bytes)")
        ax.set_ylabel(name)
        ax.set_title(f"{layout} ranks (hosts x ranks), links: {rate}", fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
fig.tight_layout()
fig.savefig(png, dpi=100)
print("plot written to", png)
