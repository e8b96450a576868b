#!/usr/bin/python3
"""Plots the CSVs of bench/bench_figures (HSX paper, section 5, Figs 5-12).

    /usr/bin/python3 tools/plot_bench.py DIR [--family NAME]

Reads DIR/fig_<family>.csv and writes DIR/fig_<family>.png for every family found (or
the one named). Needs only matplotlib and numpy. Skipped points are listed under the
plots with their reasons.
"""
import argparse
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

FAMILIES = ["size", "density", "uniform", "thickness", "pairs", "concentric"]
STYLE = {
    "hsx": dict(color="tab:red", marker="o"),
    "grid_aabb": dict(color="tab:blue", marker="s"),
    "grid_uniform": dict(color="tab:green", marker="^"),
    "brute": dict(color="tab:gray", marker="x"),
}
LABEL = {
    "hsx": "HSX",
    "grid_aabb": "AABB grid (chrono-style)",
    "grid_uniform": "uniform grid",
    "brute": "brute force",
}


def read(path):
    meta, lines = {}, []
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                text = line[1:].strip()
                if text.startswith("device="):
                    meta["device"] = text[len("device="):]
                elif text.startswith("precision="):
                    meta["params"] = text
                elif not text.startswith("nestsim"):
                    meta.setdefault("notes", []).append(text)
            else:
                lines.append(line)
    rows = list(csv.DictReader(lines))
    return meta, rows


def num(v):
    return float(v) if v not in ("", None) else float("nan")


def select(rows, **kw):
    out = []
    for r in rows:
        if all(r[k] == v for k, v in kw.items()):
            out.append(r)
    return out


def series(rows, x, y, **kw):
    sel = [r for r in select(rows, **kw) if r["status"] == "ok" and r[y] != ""]
    xs = np.array([num(r[x]) for r in sel])
    ys = np.array([num(r[y]) for r in sel])
    order = np.argsort(xs)
    return xs[order], ys[order]


def method_label(r_method, overlap):
    base = LABEL.get(r_method, r_method)
    if r_method == "hsx" and overlap == "hollow":
        return base
    return f"{base} ({'HSX' if overlap == 'hollow' else 'SSX'})"


def skipped_text(rows):
    seen, out = set(), []
    for r in rows:
        if r["status"] != "skipped" or "already skipped" in r["note"]:
            continue
        key = (r["series"], r["method"], r["overlap"], r["note"].split(" s per")[0][:12])
        if key in seen:
            continue
        seen.add(key)
        out.append(f"skipped {r['series']}/{r['method']} ({r['overlap']}) from N={r['n']}, "
                   f"phi={r['volume_fraction']}: "
                   f"{r['note']}")
    return out


def finish(fig, meta, rows, title, path):
    fig.suptitle(f"{title}\n{meta.get('device', '?')}\n{meta.get('params', '')}",
                 fontsize=9)
    notes = skipped_text(rows)
    if len(notes) > 6:
        notes = notes[:6] + [f"... and {len(notes) - 6} more (see the CSV)"]
    bottom = 0.04 + 0.025 * len(notes)
    if notes:
        fig.text(0.01, 0.01, "\n".join(notes), fontsize=7, va="bottom", family="monospace")
    fig.tight_layout(rect=(0, bottom, 1, 0.9))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print("wrote", path)


def time_vs_n(ax, rows, series_name, methods, title):
    for m in methods:
        for ov in ("hollow", "solid"):
            x, y = series(rows, "n", "median_ms", series=series_name, method=m, overlap=ov)
            if len(x):
                ax.plot(x, y, label=method_label(m, ov), **STYLE.get(m, {}))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("number of spheres N")
    ax.set_ylabel("time per call [ms] (median)")
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)


def plot_size(meta, rows, path):
    fig, axes = plt.subplots(1, 3, figsize=(16, 5.5))
    methods = ["hsx", "grid_aabb", "grid_uniform"]
    time_vs_n(axes[0], rows, "dense", methods, "dense, volume fraction 0.3 (Fig 5)")
    time_vs_n(axes[1], rows, "sparse", methods, "sparse, volume fraction 0.03 (Fig 6)")
    ax = axes[2]
    for dim, ls in (("3d", "-"), ("2d", "--")):
        for m in ("hsx", "grid_aabb"):
            for ov in ("hollow", "solid"):
                x, y = series(rows, "n", "median_ms", series="semidense_" + dim, method=m,
                              overlap=ov)
                if len(x):
                    ax.plot(x, 1e3 * y / x, linestyle=ls,
                            label=f"{method_label(m, ov)} {dim.upper()}", **STYLE[m])
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("number of spheres N")
    ax.set_ylabel("time per sphere [µs]")
    ax.set_title("2D / 3D scaling, volume fraction 0.1 (Fig 11)", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    finish(fig, meta, rows, "Time vs N, exponential radii (HSX paper Figs 5, 6, 11)", path)


def plot_density(meta, rows, path):
    fig, ax = plt.subplots(figsize=(10, 6))
    n = rows[0]["n"] if rows else "?"
    for m in ("hsx", "grid_aabb", "grid_uniform"):
        for ov in ("hollow", "solid"):
            x, y = series(rows, "volume_fraction", "median_ms", method=m, overlap=ov)
            if len(x):
                ax.plot(x, y, label=method_label(m, ov), **STYLE[m])
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("volume fraction (sum of sphere volumes / box volume)")
    ax.set_ylabel("time per call [ms] (median)")
    ax.set_title(f"exponential radii, N = {n}", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    finish(fig, meta, rows, "Time vs density (HSX paper Fig 7)", path)


def plot_uniform(meta, rows, path):
    fig, axes = plt.subplots(1, 2, figsize=(12, 5.5))
    methods = ["hsx", "grid_aabb", "grid_uniform"]
    time_vs_n(axes[0], rows, "dense", methods, "equal radii, volume fraction 0.3")
    time_vs_n(axes[1], rows, "sparse", methods, "equal radii, volume fraction 0.03")
    finish(fig, meta, rows, "Time vs N, equal radii (HSX paper Fig 8)", path)


def plot_thickness(meta, rows, path):
    fig, axes = plt.subplots(1, 2, figsize=(12, 5.5))
    n = rows[0]["n"] if rows else "?"
    ax = axes[0]
    for m, ov, ls in (("hsx", "hollow", "-"), ("grid_aabb", "hollow", "--"),
                      ("grid_aabb", "solid", "-")):
        x, y = series(rows, "thickness_ratio", "median_ms", series="time", method=m, overlap=ov)
        if len(x):
            ax.plot(x, y, linestyle=ls, label=method_label(m, ov), **STYLE[m])
    ax.set_xlabel("thickness ratio q / r")
    ax.set_ylabel("time per call [ms] (median)")
    ax.set_ylim(bottom=0)
    ax.set_title(f"time, N = {n}, volume fraction 0.3", fontsize=10)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    ax = axes[1]
    for m, ov, lab, st in (("hsx", "hollow", "HSX pairs", STYLE["hsx"]),
                           ("hsx", "solid", "SSX pairs", STYLE["grid_uniform"]),
                           ("aabb_host", "aabb", "AABB overlaps", STYLE["grid_aabb"])):
        x, y = series(rows, "thickness_ratio", "pairs", series="count", method=m, overlap=ov)
        if len(x):
            ax.plot(x, y, label=lab, **st)
    ax.set_xlabel("thickness ratio q / r")
    ax.set_ylabel("number of pairs")
    ax.set_ylim(bottom=0)
    ax.set_title(f"pairs, N = {n}", fontsize=10)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    finish(fig, meta, rows, "Thickness sweep, exponential radii (HSX paper Fig 9)", path)


def plot_pairs(meta, rows, path):
    fig, axes = plt.subplots(1, 2, figsize=(12, 5.5))
    for ax, name, phi in zip(axes, ("dense", "sparse"), ("0.3", "0.03")):
        for m, ov, lab, st in (("hsx", "hollow", "HSX (hollow)", STYLE["hsx"]),
                               ("hsx", "solid", "SSX (solid)", STYLE["grid_uniform"]),
                               ("aabb_host", "aabb", "AABB overlaps", STYLE["grid_aabb"])):
            x, y = series(rows, "n", "pairs", series=name, method=m, overlap=ov)
            if len(x):
                ax.plot(x, y, label=lab, **st)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("number of spheres N")
        ax.set_ylabel("number of pairs")
        ax.set_title(f"exponential radii, volume fraction {phi}", fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    finish(fig, meta, rows, "Pairs reported: HSX, SSX, AABB (HSX paper Fig 10)", path)


def plot_concentric(meta, rows, path):
    fig, axes = plt.subplots(1, 2, figsize=(12, 5.5))
    methods = ["hsx", "grid_aabb", "grid_uniform", "brute"]
    time_vs_n(axes[0], rows, "concentric", methods, "concentric shells: time")
    ax = axes[1]
    xh, yh = series(rows, "n", "median_ms", series="concentric", method="hsx", overlap="hollow")
    hsx = dict(zip(xh, yh))
    for m in methods[1:]:
        for ov in ("hollow", "solid"):
            x, y = series(rows, "n", "median_ms", series="concentric", method=m, overlap=ov)
            keep = [(a, b / hsx[a]) for a, b in zip(x, y) if a in hsx and hsx[a] > 0]
            if keep:
                a, s = zip(*keep)
                ax.plot(a, s, label=f"{method_label(m, ov)} / HSX", **STYLE[m])
    ax.axhline(1.0, color="black", lw=0.8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("number of shells N")
    ax.set_ylabel("speed-up of HSX (time of method / time of HSX)")
    ax.set_title("concentric shells: speed-up of HSX", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    finish(fig, meta, rows, "Highly nested case: concentric shells (HSX paper Fig 12)", path)


PLOTS = {
    "size": plot_size,
    "density": plot_density,
    "uniform": plot_uniform,
    "thickness": plot_thickness,
    "pairs": plot_pairs,
    "concentric": plot_concentric,
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir", help="folder with fig_<family>.csv")
    ap.add_argument("--family", choices=FAMILIES + ["all"], default="all")
    args = ap.parse_args()
    done = 0
    for fam in FAMILIES:
        if args.family not in ("all", fam):
            continue
        path = os.path.join(args.dir, f"fig_{fam}.csv")
        if not os.path.exists(path):
            if args.family == fam:
                print("missing", path, file=sys.stderr)
            continue
        meta, rows = read(path)
        PLOTS[fam](meta, rows, os.path.join(args.dir, f"fig_{fam}.png"))
        done += 1
    if done == 0:
        print("no CSV found in", args.dir, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
