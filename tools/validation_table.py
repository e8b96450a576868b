#!/usr/bin/python3
"""The validation suite's table (docs/validation.md) from its machine-readable lines.

    tools/validation_table.py --run            # runs: ctest --preset cpu -L validation -V -j 2
    tools/validation_table.py LOG [LOG ...]    # reads saved output (ctest -V, or a test's own)
    ctest --preset cpu -L validation -V | tools/validation_table.py

The tests (tests/validation/) print, per check and seed,
    VALIDATION|name|measured|theory|se|z|seed
    INVARIANT|name|violations|samples|worst|seed
    TIME|what|seconds|seed
(ctest -V puts "N: " before each line). Prints markdown: the statistics with both seeds'
measured value, standard error and z, and the verdict of the suite's rule (fail when any
|z| > 4, or |z| > 3 for every seed); the invariants; the run times. Standard library only.
"""
import argparse
import os
import re
import subprocess
import sys

# name -> (statistic, theory), for the table; docs/validation.md explains each check.
DESCRIPTIONS = {
    "free_msd": ("D_eff = <|dx|^2> / (2 d tau), free bodies", "D"),
    "membrane_cos_3d": ("<cos theta(t)> on a membrane sphere, R = 9.5", "exp(-2 D t / R^2)"),
    "membrane_cos_2d": ("<cos theta(t)> on a membrane circle, R = 9.5", "exp(-D t / R^2)"),
    "confinement_inner_fraction": ("fraction of samples within rho/2 of the lumen's centre", "1/8"),
    "confinement_r3": ("<(r / rho)^3>, rho = r_C - q_C - r_i", "1/2"),
    "compartment_D_loaded": ("D_eff of vesicles with 10 + 4 proteins", "D_vesicle = 2"),
    "compartment_D_empty": ("D_eff of empty vesicles", "D_vesicle = 2"),
    "decay_survival": ("surviving fraction of A -> 0 at k t = 1", "exp(-k t)"),
    "doi_rate": ("steady Doi rate k from reactions in [0.5, 2] sigma^2/D", "4 pi D sigma (1 - tanh g / g)"),
    "kon_measured": ("kon measured back (M^-1 s^-1), rule given kon: 1e8 /M/s", "kon"),
    "equilibrium_K": ("V <N_C> / <N_A N_B>, A + B <-> C", "lambda V_sigma / k_off"),
    "contact_pairs_per_frame": ("overlapping pairs per frame, dilute, dt = dt_max", "N^2/(2V) int 4 pi r^2 g(r)"),
    "contact_energy_per_pair": ("energy per overlapping pair (kT), dilute, dt = dt_max", "int U g r^2 / int g r^2"),
    "crowded_energy": ("soft energy per body (kT), phi = 0.3", "same at dt_max/4"),
    "crowded_D": ("long-time D_eff (tau = 5), phi = 0.3", "same at dt_max/4"),
}

# TIME| names in the docs' order.
TIME_ORDER = ["free_msd", "membrane_cos", "confinement", "compartment_D", "decay", "doi", "kon",
              "equilibrium", "contacts", "crowded"]

LINE = re.compile(r"^(?:\d+: )?(VALIDATION|INVARIANT|TIME)\|(.*)$")


def describe(name):
    for key in sorted(DESCRIPTIONS, key=len, reverse=True):
        if name.startswith(key):
            return DESCRIPTIONS[key]
    return ("", "")


def order(name):
    """Rows in the order of DESCRIPTIONS (the docs' order), then by name."""
    keys = list(DESCRIPTIONS)
    for key in sorted(keys, key=len, reverse=True):
        if name.startswith(key):
            return (keys.index(key), name)
    return (len(keys), name)


def cell(text):
    return text.replace("|", "\\|")


def parse(lines):
    stats, invariants, times = {}, {}, {}
    for line in lines:
        m = LINE.match(line.rstrip("\n"))
        if not m:
            continue
        kind, rest = m.group(1), m.group(2).split("|")
        if kind == "VALIDATION" and len(rest) == 6:
            name, measured, theory, se, z, seed = rest
            stats.setdefault(name, {})[seed] = (float(measured), float(theory), float(se), float(z))
        elif kind == "INVARIANT" and len(rest) == 5:
            name, violations, samples, worst, seed = rest
            invariants.setdefault(name, {})[seed] = (int(violations), int(samples), float(worst))
        elif kind == "TIME" and len(rest) == 3:
            what, seconds, seed = rest
            times.setdefault(what, {}).setdefault(seed, 0.0)
            times[what][seed] += float(seconds)
    return stats, invariants, times


def verdict(zs):
    over3 = sum(1 for z in zs if abs(z) > 3)
    if any(not abs(z) <= 4 for z in zs) or (len(zs) >= 2 and over3 == len(zs)):
        return "FAIL"
    return "pass"


def fmt(x):
    return "%.5g" % x


def table(stats, invariants, times):
    out = []
    seeds = sorted({s for per in stats.values() for s in per} |
                   {s for per in invariants.values() for s in per}, key=int)
    head = "| check | statistic | theory | value |"
    rule = "|---|---|---|---|"
    for s in seeds:
        head += " seed %s: measured ± se | z |" % s
        rule += "---|---|"
    out += [head + " verdict |", rule + "---|"]
    for name in sorted(stats, key=order):
        per = stats[name]
        statistic, formula = describe(name)
        theories = {per[s][1] for s in per}
        theory = next(iter(per.values()))[1]
        # A theory that is itself measured (crowded_*: the run at dt_max/4) differs per seed.
        varies = len(theories) > 1
        row = "| `%s` | %s | %s | %s |" % (name, cell(statistic), cell(formula), "per seed" if varies else fmt(theory))
        zs = []
        for s in seeds:
            if s in per:
                measured, their, se, z = per[s]
                against = " (vs %s)" % fmt(their) if varies else ""
                row += " %s ± %s%s | %+.2f |" % (fmt(measured), "%.2g" % se, against, z)
                zs.append(z)
            else:
                row += " – | – |"
        out.append(row + " %s |" % verdict(zs))
    if invariants:
        out += ["", "| invariant | " + " | ".join("seed %s: violations / samples (worst excess)" % s for s in seeds) + " | verdict |",
                "|---|" + "---|" * len(seeds) + "---|"]
        for name, per in invariants.items():
            cells, bad = [], False
            for s in seeds:
                if s in per:
                    v, n, worst = per[s]
                    bad = bad or v > 0
                    cells.append("%d / %d (%.3g)" % (v, n, worst))
                else:
                    cells.append("–")
            out.append("| `%s` | %s | %s |" % (name, " | ".join(cells), "FAIL" if bad else "pass"))
    if times:
        out += ["", "| run time (s) | " + " | ".join("seed %s" % s for s in seeds) + " |",
                "|---|" + "---|" * len(seeds)]
        total = {s: sum(per.get(s, 0.0) for per in times.values()) for s in seeds}
        def time_order(what):
            for i, key in enumerate(TIME_ORDER):
                if what.startswith(key):
                    return (i, what)
            return (len(TIME_ORDER), what)
        for what in sorted(times, key=time_order):
            per = times[what]
            out.append("| %s | %s |" % (what, " | ".join("%.1f" % per[s] if s in per else "–" for s in seeds)))
        out.append("| all (one process each, summed) | %s |" % " | ".join("%.1f" % total[s] for s in seeds))
    return "\n".join(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("logs", nargs="*", help="saved output; none: standard input")
    parser.add_argument("--run", action="store_true", help="run ctest --preset cpu -L validation -V first")
    parser.add_argument("--preset", default="cpu", help="the ctest preset of --run (cpu or cuda)")
    parser.add_argument("-j", "--jobs", default="2", help="ctest -j of --run (default 2)")
    args = parser.parse_args()
    if args.run:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        env = dict(os.environ)
        env.setdefault("OMP_WAIT_POLICY", "passive")
        done = subprocess.run(["ctest", "--preset", args.preset, "-L", "validation", "-V", "-j", args.jobs], cwd=root,
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        lines = done.stdout.splitlines()
        if done.returncode != 0:
            sys.stderr.write("ctest exited with %d\n" % done.returncode)
    elif args.logs:
        lines = []
        for path in args.logs:
            with open(path, encoding="utf-8", errors="replace") as f:
                lines += f.read().splitlines()
    else:
        lines = sys.stdin.read().splitlines()
    stats, invariants, times = parse(lines)
    if not stats and not invariants:
        sys.stderr.write("no VALIDATION| or INVARIANT| lines found\n")
        return 1
    print(table(stats, invariants, times))
    return 0


if __name__ == "__main__":
    sys.exit(main())
