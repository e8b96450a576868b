#!/usr/bin/python3
"""nestsim.pairs on a scene file's arrays against `nestsim pairs --bench` on the file.

    PYTHONPATH=build/cpu/python /usr/bin/python3 python/bench/pairs_vs_cli.py \\
        build/cpu/nestsim SCENE.csv [REPEATS]

Makes a scene with build/cpu/examples/make_scene (e.g. `make_scene cell 1000000 >
cell1e6.csv`). Prints the CLI's search time (--bench: median of REPEATS finds, pairs
sorted on the device, no file input or output), its whole run (`-o /dev/null`: reading
the CSV, searching, writing), and nestsim.pairs' wall time per call (median of REPEATS:
checks, one copy into structure of arrays, upload, search, pairs into numpy) and with
count_only=True.
"""
import subprocess
import sys
import time

import numpy as np

import nestsim


def median_wall(call, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        result = call()
        times.append(time.perf_counter() - start)
    return float(np.median(times)), result


def main():
    binary, scene = sys.argv[1], sys.argv[2]
    repeats = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    bench = subprocess.run([binary, "pairs", scene, "--bench", str(repeats)],
                           capture_output=True, text=True, check=True).stdout.strip()
    start = time.perf_counter()
    subprocess.run([binary, "pairs", scene, "-o", "/dev/null"], check=True)
    cli_whole = time.perf_counter() - start
    try:
        import pandas
        table = pandas.read_csv(scene).to_numpy(dtype=np.float64)
    except ImportError:
        table = np.loadtxt(scene, delimiter=",", skiprows=1)
    centres, radius, thickness = table[:, :-2], table[:, -2], table[:, -1]
    nestsim.pairs(centres, radius, thickness)  # warm-up, as --bench does
    wall, pairs = median_wall(lambda: nestsim.pairs(centres, radius, thickness), repeats)
    count_wall, count = median_wall(
        lambda: nestsim.pairs(centres, radius, thickness, count_only=True), repeats)
    print("backend %s, %d bodies (%s)" % (nestsim.backend(), len(radius), scene))
    print("nestsim pairs --bench %d: %s" % (repeats, bench))
    print("nestsim pairs -o /dev/null (read CSV, search, write): %.1f ms" % (1e3 * cli_whole))
    print("nestsim.pairs: median %.1f ms per call, %d pairs" % (1e3 * wall, len(pairs)))
    print("nestsim.pairs(count_only=True): median %.1f ms per call, %d pairs" % (
        1e3 * count_wall, count))
    assert "pairs=%d" % len(pairs) in bench and count == len(pairs)


if __name__ == "__main__":
    main()
