#!/usr/bin/env python3
"""The CPU benchmark gate: HEAD's bench_hsx against the committed baseline's.

    bench/gate.py [--head-build DIR | --head-bin BIN] [--base-bin BIN] [--work DIR]
                  [--rounds R] [--repeats K] [--threads T] [--precisions float,double]
                  [--ir-limit X] [--wall-limit Y] [--wall-only | --ir-only]

The baseline is the commit named in bench/baseline/commit. Its bench_hsx is built once
from `git archive` of that commit in a directory outside the tree (--work, default
$NESTSIM_GATE_WORK or ~/.cache/nestsim-gate) and reused after; HEAD's is built in
--head-build (default build/cpu, the CPU preset's). The scenes: exponential radii, 1e5
bodies, volume fraction 0.1 and 0.3, float and double, pairs sorted (hsx) and in any
order (hsx-any) -- the rows of bench_hsx's table that both commits print.

Two measures, one ratio (HEAD / baseline) per scene each:
  instructions  callgrind's count of each scene's searches (Broadphase::time: one
                warm-up call and one timed call), one thread. Deterministic, so the
                decision also on a shared or loaded machine: fails above --ir-limit
                (1.08; the 2eed142 regression was 1.12-1.16 in float, 1.59-1.74 in
                double, for 1.3-1.7x the wall clock; HEAD at issue 45's end
                0.962-0.981).
  wall clock    --rounds rounds of the two binaries interleaved (A B, then B A, ...),
                each timing --repeats calls per scene; per round the ratio of the two
                fastest calls, and the median of the rounds' ratios. Printed; fails
                only above --wall-limit where one is given (a quiet machine: on 2
                shared cores the same binary against itself read 0.90-1.47x).
docs/performance.md ("The benchmark gate") gives the noise and the 2eed142 regression
measured with both. Exit status: 0 passed, 1 a ratio above its limit, 2 a usage or
setup error (a missing tool, a baseline that does not build).
"""
import argparse
import csv
import glob
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BASELINE_COMMIT = os.path.join(ROOT, "bench", "baseline", "commit")
SIZE = "1e5"
PHIS = "0.1,0.3"


def die(message):
    print(f"gate: {message}", file=sys.stderr)
    sys.exit(2)


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, **kw)


def baseline_commit():
    try:
        with open(BASELINE_COMMIT) as f:
            lines = [l.split("#")[0].strip() for l in f]
    except OSError as e:
        die(f"{BASELINE_COMMIT}: cannot read ({e.strerror})")
    commits = [l for l in lines if l]
    if len(commits) != 1:
        die(f"{BASELINE_COMMIT}: expected one commit hash, found {len(commits)} lines")
    return commits[0]


def build_baseline(commit, work):
    """bench_hsx of `commit`, built from git archive in work/<commit> (reused)."""
    full = subprocess.run(["git", "-C", ROOT, "rev-parse", "--verify", "-q", commit + "^{commit}"],
                          capture_output=True, text=True)
    if full.returncode != 0:
        die(f"{BASELINE_COMMIT}: commit {commit} is not in this clone "
            f"(a shallow clone? git fetch --unshallow)")
    full = full.stdout.strip()
    home = os.path.join(work, full)
    binary = os.path.join(home, "build", "bench", "bench_hsx")
    if os.access(binary, os.X_OK):
        return binary
    src = os.path.join(home, "src")
    shutil.rmtree(home, ignore_errors=True)
    os.makedirs(src)
    archive = subprocess.Popen(["git", "-C", ROOT, "archive", full], stdout=subprocess.PIPE)
    run(["tar", "-x", "-C", src], stdin=archive.stdout)
    if archive.wait() != 0:
        die(f"git archive {full} failed")
    print(f"gate: building the baseline's bench_hsx ({full[:10]}) in {home}", flush=True)
    try:
        run(["cmake", "--preset", "cpu", "-S", src, "-B", os.path.join(home, "build")],
            stdout=subprocess.DEVNULL)
        run(["cmake", "--build", os.path.join(home, "build"), f"-j{os.cpu_count() or 2}",
             "--target", "bench_hsx"], stdout=subprocess.DEVNULL)
    except subprocess.CalledProcessError:
        die(f"the baseline {full[:10]} did not build in {home}")
    return binary


def build_head(build_dir):
    if not os.path.isfile(os.path.join(build_dir, "CMakeCache.txt")):
        die(f"{build_dir}: not a configured build (cmake --preset cpu -B {build_dir})")
    try:
        run(["cmake", "--build", build_dir, f"-j{os.cpu_count() or 2}", "--target", "bench_hsx"],
            stdout=subprocess.DEVNULL)
    except subprocess.CalledProcessError:
        die(f"HEAD's bench_hsx did not build in {build_dir}")
    return os.path.join(build_dir, "bench", "bench_hsx")


def bench_args(binary, precision, repeats, csv_path):
    """The common table: exponential scenes only (--shells off where the binary has it)."""
    args = [binary, "--sizes", SIZE, "--phis", PHIS, "--precision", precision, "--repeats",
            str(repeats), "--brute-max-n", "0", "--csv", csv_path]
    usage = subprocess.run([binary, "--help"], capture_output=True, text=True)
    if "--shells" in usage.stdout + usage.stderr:
        args += ["--shells", ""]
    return args


def env_threads(threads):
    env = dict(os.environ)
    env["OMP_NUM_THREADS"] = str(threads)
    return env


def read_rows(csv_path, precision):
    """{(precision, scene, method): row} for the exponential scenes."""
    rows = {}
    with open(csv_path) as f:
        lines = [l for l in f if not l.startswith("#")]
    for r in csv.DictReader(lines):
        if r["scene"].startswith("exponential"):
            rows[(precision, r["scene"], r["method"])] = r
    return rows


def instructions(binary, precision, tmp, tag):
    """{key: instructions of one scene's Broadphase::time} from callgrind's dumps."""
    out = os.path.join(tmp, f"cg.{tag}.{precision}")
    csv_path = out + ".csv"
    real = "float" if precision == "float" else "double"
    fn = f"nestsim::Broadphase<{real}>::time(int, bool)"
    cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", "--collect-atstart=no",
           f"--toggle-collect={fn}", f"--dump-after={fn}"] + bench_args(binary, precision, 1,
                                                                         csv_path)
    run(cmd, env=env_threads(1), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    totals = []
    for dump in sorted(glob.glob(out + ".*[0-9]"), key=lambda p: int(p.rsplit(".", 1)[1])):
        with open(dump) as f:
            for line in f:
                if line.startswith("totals:") or line.startswith("summary:"):
                    totals.append(int(line.split()[1]))
                    break
    # The rows in the order bench_hsx measured them: one dump per Broadphase::time.
    with open(csv_path) as f:
        order = [r for r in csv.DictReader(l for l in f if not l.startswith("#"))]
    result = {}
    for r, total in zip(order, totals):
        if r["scene"].startswith("exponential"):
            result[(precision, r["scene"], r["method"])] = total
    if len(result) != 4:
        die(f"callgrind of {binary}: {len(totals)} dumps for {len(order)} rows (expected 4 "
            f"exponential rows)")
    return result


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--head-build", default=os.path.join(ROOT, "build", "cpu"))
    p.add_argument("--head-bin")
    p.add_argument("--base-bin")
    p.add_argument("--work", default=os.environ.get("NESTSIM_GATE_WORK") or
                   os.path.join(os.path.expanduser("~"), ".cache", "nestsim-gate"))
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--repeats", type=int, default=10)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--precisions", default="float,double")
    p.add_argument("--ir-limit", type=float, default=1.08)
    p.add_argument("--wall-limit", type=float, default=None)
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--wall-only", action="store_true")
    mode.add_argument("--ir-only", action="store_true")
    a = p.parse_args()
    precisions = a.precisions.split(",")
    if any(x not in ("float", "double") for x in precisions):
        die(f"--precisions: float and/or double, not '{a.precisions}'")
    if a.rounds < 1 or a.repeats < 1 or a.threads < 1:
        die("--rounds, --repeats and --threads must be positive")
    if not a.wall_only and shutil.which("valgrind") is None:
        die("valgrind is missing (apt-get install valgrind), and the instruction counts "
            "need it; --wall-only measures wall clock alone")

    commit = baseline_commit()
    base = a.base_bin or build_baseline(commit, a.work)
    head = a.head_bin or build_head(a.head_build)
    for b in (base, head):
        if not os.access(b, os.X_OK):
            die(f"{b}: no such program")
    print(f"gate: baseline {commit[:10]} ({base}) against HEAD ({head})", flush=True)

    failed = []
    with tempfile.TemporaryDirectory(prefix="nestsim-gate-") as tmp:
        ir = {}
        if not a.wall_only:
            for prec in precisions:
                ir[prec] = (instructions(base, prec, tmp, "base"),
                            instructions(head, prec, tmp, "head"))
        wall = {}  # key -> [per-round ratio], and the fastest times
        best = {}
        if not a.ir_only:
            for rnd in range(a.rounds):
                for prec in precisions:
                    order = [("base", base), ("head", head)]
                    if rnd % 2:
                        order.reverse()
                    rows = {}
                    for tag, b in order:
                        path = os.path.join(tmp, f"wall.{tag}.{prec}.{rnd}.csv")
                        run(bench_args(b, prec, a.repeats, path), env=env_threads(a.threads),
                            stdout=subprocess.DEVNULL)
                        rows[tag] = read_rows(path, prec)
                    for key, rb in rows["base"].items():
                        rh = rows["head"].get(key)
                        if rh is None:
                            die(f"HEAD's bench_hsx has no row {key}")
                        if rh["pairs"] != rb["pairs"]:
                            die(f"{key}: HEAD found {rh['pairs']} pairs, the baseline "
                                f"{rb['pairs']}")
                        tb, th = float(rb["min_ms"]), float(rh["min_ms"])
                        wall.setdefault(key, []).append(th / tb)
                        best.setdefault(key, [[], []])
                        best[key][0].append(tb)
                        best[key][1].append(th)

    print(f"gate: exponential scenes of {SIZE} bodies; wall clock at {a.threads} thread(s), "
          f"{a.rounds} rounds of {a.repeats} calls; instructions at 1 thread")
    print(f"{'precision':9} {'scene':20} {'method':8} {'base ms':>9} {'HEAD ms':>9} "
          f"{'wall':>6} {'base Ir':>13} {'HEAD Ir':>13} {'Ir':>6}")
    keys = sorted(set(wall) | {k for prec in ir for k in ir[prec][0]})
    for key in keys:
        prec, scene, method = key
        line = f"{prec:9} {scene:20} {method:8}"
        if key in wall:
            ratio = statistics.median(wall[key])
            line += (f" {statistics.median(best[key][0]):9.3f} "
                     f"{statistics.median(best[key][1]):9.3f} {ratio:6.3f}")
            if a.wall_limit is not None and ratio > a.wall_limit:
                failed.append(f"{prec} {scene} {method}: wall clock {ratio:.3f}x > "
                              f"{a.wall_limit}")
        else:
            line += f" {'':9} {'':9} {'':6}"
        if prec in ir:
            ib, ih = ir[prec][0][key], ir[prec][1][key]
            line += f" {ib:13d} {ih:13d} {ih / ib:6.3f}"
            if ih / ib > a.ir_limit:
                failed.append(f"{prec} {scene} {method}: instructions {ih / ib:.3f}x > "
                              f"{a.ir_limit}")
        print(line)
    if failed:
        print("gate: FAILED, HEAD is slower than the baseline " + commit[:10] + ":")
        for f in failed:
            print("  " + f)
        return 1
    limits = [] if a.wall_only else [f"instructions <= {a.ir_limit}x"]
    if a.wall_limit is not None and not a.ir_only:
        limits.append(f"wall clock <= {a.wall_limit}x")
    print(f"gate: passed ({', '.join(limits) or 'wall clock printed, no limit'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
