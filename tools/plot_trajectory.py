#!/usr/bin/python3
"""Plots the tables of `nestsim analyze OUT.h5 --csv DIR`.

usage: plot_trajectory.py CSV_DIR [PLOT_DIR] [--title TEXT]

Reads counts.csv, msd.csv, contacts.csv and reactions.csv from CSV_DIR and writes to
PLOT_DIR (default CSV_DIR):
  counts.png    which bodies change in number, and where: one line per kind and
                location ("outside", "in K": in the lumen of a K, "on K": in its
                membrane), compartments and proteins apart, each panel one order of
                magnitude; counts that never change are listed under the plot
  msd.png       does each kind diffuse as the model says: one log-log panel per kind,
                the mean squared displacement from the first frame and free diffusion
                with the model's D (6 D t, 4 D t for membrane kinds; msd.csv's
                diffusion column)
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
    from matplotlib.ticker import MaxNLocator
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


def series_by_kind_location(rows, time):
    """kind -> location -> ([t], [count]), in the file's order."""
    series = OrderedDict()
    for r in rows:
        t, n = series.setdefault(r["kind"], OrderedDict()).setdefault(r["location"], ([], []))
        t.append(float(r[time]))
        n.append(int(r["count"]))
    return series


def magnitude_groups(curves, ratio=8):
    """Curves (label, t, values, ...) split so that within a group every curve's peak is
    at least 1/ratio of the group's highest: small counts are not flattened by large."""
    groups = []
    for curve in sorted(curves, key=lambda c: -max(c[2])):
        if groups and max(curve[2]) * ratio >= max(groups[-1][0][2]):
            groups[-1].append(curve)
        else:
            groups.append([curve])
    return groups


def kind_styles(kinds):
    """One colour per kind, kept across panels and plots."""
    palette = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    return {kind: palette[i % len(palette)] for i, kind in enumerate(kinds)}


def plot_counts(csv_dir, out_dir, title):
    """Which bodies change in number, and where? Compartments and proteins in panels of
    their own, each panel's series of one order of magnitude; series that never change
    are listed under the plot instead of drawn."""
    rows, fields = read_table(os.path.join(csv_dir, "counts.csv"))
    time, unit = column(fields, "time")
    series = series_by_kind_location(rows, time)
    compartments = compartment_kinds(rows)
    colours = kind_styles(list(series))
    constant, varying = [], {"compartments": [], "proteins": []}
    for kind, by_location in series.items():
        for i, (location, (t, n)) in enumerate(by_location.items()):
            if min(n) == max(n):
                constant.append("%s %s: %d" % (kind, location, n[0]))
                continue
            group = "compartments" if kind in compartments else "proteins"
            varying[group].append(("%s %s" % (kind, location), t, n, colours[kind], i))
    panels = []
    for group in ("compartments", "proteins"):
        for curves in magnitude_groups(varying[group]):
            panels.append((group, curves))
    columns = 1 if len(panels) <= 1 else 2
    rows_of_panels = max(1, (len(panels) + columns - 1) // columns)
    fig, axes = plt.subplots(rows_of_panels, columns, squeeze=False, sharex=True,
                             figsize=(6.2 * columns, 1.6 + 2.9 * rows_of_panels))
    styles = ["-", "--", ":", "-."]
    for ax, (group, curves) in zip(axes.flat, panels):
        for label, t, n, colour, i in curves:
            ax.plot(t, n, color=colour, linestyle=styles[i % len(styles)],
                    marker="." if len(t) < 50 else None, label=label)
        ax.set_title(group, fontsize="medium", loc="left")
        ax.set_ylabel("bodies")
        ax.set_ylim(bottom=0)
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))  # counts: whole ticks
        ax.legend(fontsize="small", loc="best")
    for ax in axes.flat[len(panels):]:
        ax.axis("off")
    if not panels:
        axes[0, 0].text(0.5, 0.5, "no count changes during the run", ha="center",
                        transform=axes[0, 0].transAxes)
    for ax in axes[-1, :]:
        ax.set_xlabel("time (%s)" % unit)
        ax.xaxis.set_tick_params(labelbottom=True)
    note = ("unchanged over the run: " + "; ".join(constant)) if constant else ""
    fig.suptitle("%s: bodies by kind and location ('in K': in a K's lumen, 'on K': in its "
                 "membrane)" % title, fontsize="medium")
    fig.tight_layout(rect=(0, 0.06 if note else 0, 1, 1))
    if note:
        fig.text(0.01, 0.01, wrap_text(note, 150 if columns == 2 else 80), fontsize="small",
                 va="bottom")
    fig.savefig(os.path.join(out_dir, "counts.png"), dpi=120)
    plt.close(fig)


def wrap_text(text, width):
    import textwrap
    return "\n".join(textwrap.wrap(text, width))


def compartment_kinds(count_rows):
    """Kinds that hold other bodies: the K of locations 'in K' and 'on K'."""
    kinds = set()
    for r in count_rows:
        location = r["location"]
        if location.startswith("in ") or location.startswith("on "):
            kinds.add(location[3:])
    return kinds


def membrane_kinds(count_rows):
    """Kinds all of whose bodies are in a membrane ('on K') in every frame."""
    where = {}
    for r in count_rows:
        if int(r["count"]) > 0:
            where.setdefault(r["kind"], set()).add(r["location"].startswith("on "))
    return {kind for kind, on in where.items() if on == {True}}


def plot_msd(csv_dir, out_dir, title):
    """Does each kind diffuse as the model says? One panel per kind on log-log axes: the
    measured MSD and, dashed, free diffusion with the model's D (6 D t; 4 D t in a
    membrane). Below the line: confinement (a lumen, a crowd); above: carried along."""
    rows, fields = read_table(os.path.join(csv_dir, "msd.csv"))
    counts, _ = read_table(os.path.join(csv_dir, "counts.csv"))
    time, unit = column(fields, "time")
    msd, length = column(fields, "msd")
    length = length[:-1] if length.endswith("2") else length
    diffusion = next((f for f in fields if f.startswith("diffusion_")), None)
    series = OrderedDict()
    for r in rows:
        t, m, d = series.setdefault(r["kind"], ([], [], []))
        if float(r[time]) > 0:
            t.append(float(r[time]))
            m.append(float(r[msd]))
            d.append(float(r[diffusion]) if diffusion else None)
    immobile = [k for k, (t, m, d) in series.items() if not any(x > 0 for x in m)]
    moving = [k for k in series if k not in immobile]
    membrane = membrane_kinds(counts)
    colours = kind_styles(list(series))
    columns = min(3, max(1, len(moving)))
    rows_of_panels = max(1, (len(moving) + columns - 1) // columns)
    fig, axes = plt.subplots(rows_of_panels, columns, squeeze=False, sharex=True,
                             figsize=(3.6 * columns + 0.6, 1.3 + 2.6 * rows_of_panels))
    for ax, kind in zip(axes.flat, moving):
        t, m, d = series[kind]
        points = [(x, y) for x, y in zip(t, m) if y > 0]
        ax.loglog([x for x, _ in points], [y for _, y in points], color=colours[kind],
                  marker="." if len(t) < 50 else None, label="measured")
        text = kind
        if d and d[0]:
            dim = 2 if kind in membrane else 3
            ax.loglog(t, [2 * dim * d[0] * x for x in t], color="black", linestyle="--",
                      linewidth=1, label="%d D t" % (2 * dim))
            text += "  (D = %.3g %s$^2$/%s%s)" % (d[0], length, unit,
                                               ", membrane" if dim == 2 else "")
        ax.set_title(text, fontsize="small", loc="left")
        ax.legend(fontsize="x-small", loc="upper left")
    for ax in axes.flat[len(moving):]:
        ax.axis("off")
    for ax in axes[:, 0]:
        ax.set_ylabel("MSD (%s$^2$)" % length)
    for ax in axes[-1, :]:
        ax.set_xlabel("time (%s)" % unit)
        ax.xaxis.set_tick_params(labelbottom=True)
    note = "dashed: free diffusion with the model's D"
    if not diffusion:
        note = "the CSV holds no diffusion coefficients: no theory lines"
    if immobile:
        note += "; not moving: " + ", ".join(immobile)
    fig.suptitle("%s: mean squared displacement from the first frame\n(%s)" % (title, note),
                 fontsize="medium")
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "msd.png"), dpi=120)
    plt.close(fig)


def plot_contacts(csv_dir, out_dir, title):
    """How many pairs touch, as hollow spheres (HSX) and as solid spheres (SSX)?"""
    rows, fields = read_table(os.path.join(csv_dir, "contacts.csv"))
    time, unit = column(fields, "time")
    t = [float(r[time]) for r in rows]
    fig, ax = plt.subplots(figsize=(7, 5))
    marker = "." if len(t) < 50 else None
    ax.plot(t, [int(r["ssx"]) for r in rows], marker=marker,
            label="solid spheres (SSX): also every body inside a compartment")
    ax.plot(t, [int(r["hsx"]) for r in rows], marker=marker,
            label="hollow spheres (HSX): touching membranes and proteins")
    # The run's neighbour lists (-1: not stored for that frame).
    lists = [(x, int(r["lists"])) for x, r in zip(t, rows) if int(r.get("lists") or -1) >= 0]
    if lists:
        ax.plot([x for x, _ in lists], [n for _, n in lists], marker=marker, linestyle="--",
                label="pairs in the run's neighbour lists")
    ax.set_xlabel("time (%s)" % unit)
    ax.set_ylabel("pairs")
    ax.set_ylim(bottom=0)
    ax.set_title("%s: contacts per frame" % title)
    # Below the axes: a legend inside would cover the lines.
    ax.legend(fontsize="small", loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=1,
              frameon=False)
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
    ax.set_title("%s: reaction events per rule since the start" % title)
    ax.legend(fontsize="small", title="rule", loc="upper left", bbox_to_anchor=(1.01, 1),
              frameon=False)
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
