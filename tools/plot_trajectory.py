#!/usr/bin/python3
"""Plots the tables of `nestsim analyze OUT.h5 --csv DIR`.

usage: plot_trajectory.py CSV_DIR [PLOT_DIR] [--title TEXT]

Reads counts.csv, msd.csv, contacts.csv and reactions.csv from CSV_DIR and writes to
PLOT_DIR (default CSV_DIR):
  counts.png    bodies of each kind over time, one panel per kind, one line per
                location ("outside", "in K": in the lumen of a K, "on K": in its membrane)
  msd.png       mean squared displacement of each kind from the first frame, with the
                free-diffusion slope 6 D t where D can be estimated
  contacts.png  contacts per frame: hollow spheres (HSX) against solid spheres (SSX),
                and the pairs in the run's own neighbour lists where it stored them
  reactions.png cumulative events of each reaction rule over time (only when the model
                has reaction rules: reactions.csv holds the events per output interval)

Only the standard library and matplotlib (Debian: python3-matplotlib). Copy it and
change what you like; the CSV columns are documented by `nestsim analyze --help`.
"""
import argparse
import csv
import os
import sys
from collections import OrderedDict

try:
    import matplotlib

    matplotlib.use("Agg")  # files only, no display needed
    import matplotlib.pyplot as plt
except ImportError:
    sys.exit("plot_trajectory.py: matplotlib is missing (Debian: apt install python3-matplotlib)")


def read_table(path):
    """Rows of a CSV file as dicts, and its column names."""
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        return list(reader), reader.fieldnames or []


def column(fields, prefix):
    """The column whose name starts with PREFIX_, and the unit after it."""
    for name in fields:
        if name.startswith(prefix + "_"):
            return name, name[len(prefix) + 1 :]
    sys.exit("plot_trajectory.py: no column %s_<unit> in %s" % (prefix, fields))


def plot_counts(csv_dir, out_dir, title):
    rows, fields = read_table(os.path.join(csv_dir, "counts.csv"))
    time, unit = column(fields, "time")
    series = OrderedDict()  # kind -> location -> ([t], [count])
    for r in rows:
        t, n = series.setdefault(r["kind"], OrderedDict()).setdefault(r["location"], ([], []))
        t.append(float(r[time]))
        n.append(int(r["count"]))
    kinds = list(series) or ["(no bodies)"]
    fig, axes = plt.subplots(len(kinds), 1, sharex=True, squeeze=False,
                             figsize=(7, 1.2 + 2.2 * len(kinds)))
    for ax, kind in zip(axes[:, 0], kinds):
        for location, (t, n) in series.get(kind, {}).items():
            ax.plot(t, n, marker="." if len(t) < 50 else None, label=location)
        ax.set_title(kind, fontsize="medium", loc="left")
        ax.set_ylabel("bodies")
        ax.set_ylim(bottom=0)
        if series.get(kind):
            ax.legend(fontsize="small", loc="best")
    axes[-1, 0].set_xlabel("time (%s)" % unit)
    fig.suptitle("%s: bodies by kind and location" % title)
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "counts.png"), dpi=120)
    plt.close(fig)


def plot_msd(csv_dir, out_dir, title):
    rows, fields = read_table(os.path.join(csv_dir, "msd.csv"))
    time, unit = column(fields, "time")
    msd, length = column(fields, "msd")
    length = length[:-1] if length.endswith("2") else length
    series = OrderedDict()
    for r in rows:
        t, m = series.setdefault(r["kind"], ([], []))
        t.append(float(r[time]))
        m.append(float(r[msd]))
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for kind, (t, m) in series.items():
        ax.plot(t, m, marker="." if len(t) < 50 else None, label=kind)
    ax.set_xlabel("time (%s)" % unit)
    ax.set_ylabel("mean squared displacement (%s$^2$)" % length)
    ax.set_title("%s: mean squared displacement from the first frame\n"
                 "(free diffusion in 3D: MSD = 6 D t)" % title, fontsize="medium")
    if series:
        ax.legend(fontsize="small", title="kind", loc="upper left")
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "msd.png"), dpi=120)
    plt.close(fig)


def plot_contacts(csv_dir, out_dir, title):
    rows, fields = read_table(os.path.join(csv_dir, "contacts.csv"))
    time, unit = column(fields, "time")
    t = [float(r[time]) for r in rows]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    marker = "." if len(t) < 50 else None
    ax.plot(t, [int(r["ssx"]) for r in rows], marker=marker,
            label="solid spheres (SSX): also a body inside a compartment")
    ax.plot(t, [int(r["hsx"]) for r in rows], marker=marker,
            label="hollow spheres (HSX): touching membranes and proteins")
    # The run's neighbour lists (-1: not stored for that frame).
    lists = [(x, int(r["lists"])) for x, r in zip(t, rows) if int(r.get("lists") or -1) >= 0]
    if lists:
        ax.plot([x for x, _ in lists], [n for _, n in lists], marker=marker, linestyle="--",
                label="the run's neighbour lists (with skin)")
    ax.set_xlabel("time (%s)" % unit)
    ax.set_ylabel("contacting pairs")
    ax.set_ylim(bottom=0)
    ax.set_title("%s: contacts per frame" % title)
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "contacts.png"), dpi=120)
    plt.close(fig)


def plot_reactions(csv_dir, out_dir, title):
    """Cumulative events per rule: the running sum of the per-interval counts."""
    path = os.path.join(csv_dir, "reactions.csv")
    if not os.path.exists(path):
        return
    rows, fields = read_table(path)
    time, unit = column(fields, "time")
    rules = [f for f in fields if f not in ("frame", "step", time)]
    if not rules or not rows:
        return  # the model has no reaction rules
    t = [float(r[time]) for r in rows]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for rule in rules:
        total, cumulative = 0, []
        for r in rows:
            total += int(r[rule])
            cumulative.append(total)
        ax.plot(t, cumulative, marker="." if len(t) < 50 else None, label=rule)
    ax.set_xlabel("time (%s)" % unit)
    ax.set_ylabel("events since the start")
    ax.set_ylim(bottom=0)
    ax.set_title("%s: reaction events per rule" % title)
    ax.legend(fontsize="small", title="rule", loc="upper left")
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "reactions.png"), dpi=120)
    plt.close(fig)


def main():
    parser = argparse.ArgumentParser(description="Plot the tables of `nestsim analyze --csv`.")
    parser.add_argument("csv_dir")
    parser.add_argument("plot_dir", nargs="?")
    parser.add_argument("--title", default="trajectory")
    args = parser.parse_args()
    out_dir = args.plot_dir or args.csv_dir
    os.makedirs(out_dir, exist_ok=True)
    plot_counts(args.csv_dir, out_dir, args.title)
    plot_msd(args.csv_dir, out_dir, args.title)
    plot_contacts(args.csv_dir, out_dir, args.title)
    plot_reactions(args.csv_dir, out_dir, args.title)


if __name__ == "__main__":
    main()
