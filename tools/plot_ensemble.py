#!/usr/bin/python3
"""Plots `nestsim analyze ENSEMBLE_DIR --csv DIR`'s ensemble_means.csv.

usage: plot_ensemble.py CSV_DIR [PLOT_DIR]

Writes PLOT_DIR/ensemble.png (default CSV_DIR): one panel per observable that changes
over time (at most 16, those that change most first), one line per scan point: the mean
over its replicas, shaded with its 95% confidence interval. Observables that never change
are listed under the plot. Only the standard library and matplotlib (Debian:
python3-matplotlib).
"""
import csv
import math
import os
import sys
from collections import OrderedDict, defaultdict

try:
    import matplotlib

    matplotlib.use("Agg")  # files only, no display needed
    import matplotlib.pyplot as plt
except ImportError:
    sys.exit("plot_ensemble.py: matplotlib is missing (Debian: apt install python3-matplotlib)")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    csv_dir = sys.argv[1]
    plot_dir = sys.argv[2] if len(sys.argv) > 2 else csv_dir
    with open(os.path.join(csv_dir, "ensemble_means.csv"), newline="") as f:
        reader = csv.reader(f)
        header = next(reader)
        rows = list(reader)
    time_col = next(i for i, h in enumerate(header) if h.startswith("time_"))
    keys = header[1:header.index("replicas")]
    obs_col = header.index("observable")
    # series[observable][point label] = (times, means, lows, highs)
    series = defaultdict(lambda: OrderedDict())
    for r in rows:
        label = " ".join(f"{k}={v}" for k, v in zip(keys, r[1:1 + len(keys)])) or "mean"
        t, m, lo, hi = (float(r[time_col]), float(r[obs_col + 1]), float(r[obs_col + 2]),
                        float(r[obs_col + 3]))
        s = series[r[obs_col]].setdefault(label, ([], [], [], []))
        for lst, v in zip(s, (t, m, lo, hi)):
            lst.append(v)

    def change(obs):
        values = [v for s in series[obs].values() for v in s[1]]
        span = max(values) - min(values)
        return span / max(1.0, abs(max(values)))

    varying = sorted((o for o in series if change(o) > 0), key=change, reverse=True)[:16]
    constant = [o for o in series if change(o) == 0]
    if not varying:
        varying = list(series)[:1]
    cols = min(4, len(varying))
    nrows = math.ceil(len(varying) / cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(4 * cols, 3 * nrows + 0.6), squeeze=False)
    for ax, obs in zip(axes.flat, varying):
        for label, (t, m, lo, hi) in series[obs].items():
            line, = ax.plot(t, m, label=label)
            ax.fill_between(t, lo, hi, color=line.get_color(), alpha=0.25, linewidth=0)
        ax.set_title(obs, fontsize=9)
        ax.set_xlabel(header[time_col].replace("time_", "time / "), fontsize=8)
    for ax in list(axes.flat)[len(varying):]:
        ax.axis("off")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper right", fontsize=7)
    if constant:
        fig.text(0.01, 0.005, "constant: " + ", ".join(constant)[:400], fontsize=6)
    fig.suptitle("ensemble means with 95% intervals", fontsize=10)
    fig.tight_layout(rect=(0, 0.03, 0.85, 0.97))
    os.makedirs(plot_dir, exist_ok=True)
    out = os.path.join(plot_dir, "ensemble.png")
    fig.savefig(out, dpi=110)
    print(f"plot_ensemble.py: wrote {out}")


if __name__ == "__main__":
    main()
