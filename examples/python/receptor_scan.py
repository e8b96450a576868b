#!/usr/bin/python3
"""A parameter scan of the receptor-recycling model (models/receptor_recycling.yaml):
the ligand-receptor binding rate at 3 values x 3 seeds, and a plot of the free
receptors on the cell over time, mean and range over the seeds for each rate.

    PYTHONPATH=build/cpu/python /usr/bin/python3 examples/python/receptor_scan.py

writes receptor_scan.png (and receptor_scan.csv) to the current directory; --steps
sets the length of each run (default 2,000 steps of 2 ns: under a minute for the nine
runs on 2 CPU cores).
"""
import argparse
import os
import sys
import time

import numpy as np

import nestsim

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL = os.path.join(HERE, "..", "..", "models", "receptor_recycling.yaml")
RATES = [1.0, 5.0, 20.0]  # per us per ligand-receptor pair within 12 nm (the model: 20)
SEEDS = [1, 2, 3]


def free_receptors_on_cell(sim, every, steps):
    """Runs `steps` steps; the free receptors on the cell every `every` steps."""
    times, counts = [], []
    while True:
        times.append(sim.time)
        counts.append(sim.counts()["receptor"].get("on cell", 0))
        if sim.step >= steps:
            return np.array(times), np.array(counts)
        sim.run(min(every, steps - sim.step), progress=False)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--every", type=int, default=100, help="steps between samples")
    parser.add_argument("--out", default="receptor_scan", help="output name (.png, .csv)")
    args = parser.parse_args()

    model = nestsim.Model.load(MODEL)
    print("nestsim %s, backend %s" % (nestsim.__version__, nestsim.backend()))
    series = {}
    for rate in RATES:
        model["reactions.binding.rate"] = rate
        for seed in SEEDS:
            start = time.monotonic()
            sim = nestsim.Simulation(model, seed=seed, steps=args.steps)
            series[rate, seed] = free_receptors_on_cell(sim, args.every, args.steps)
            print("binding rate %5.1f /us, seed %d: %d -> %d free receptors on the cell "
                  "(%d bindings) in %.1f s" % (
                      rate, seed, series[rate, seed][1][0], series[rate, seed][1][-1],
                      sim.events()["binding"], time.monotonic() - start))
            sys.stdout.flush()

    with open(args.out + ".csv", "w") as f:
        f.write("rate,seed,time_us,free_receptors_on_cell\n")
        for (rate, seed), (t, n) in sorted(series.items()):
            for ti, ni in zip(t, n):
                f.write("%g,%d,%g,%d\n" % (rate, seed, ti, ni))

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6, 4))
    for rate in RATES:
        t = series[rate, SEEDS[0]][0]
        n = np.array([series[rate, s][1] for s in SEEDS])
        line, = ax.plot(t, n.mean(axis=0), label="binding rate %g /us" % rate)
        ax.fill_between(t, n.min(axis=0), n.max(axis=0), color=line.get_color(), alpha=0.25)
    ax.set_xlabel("time (us)")
    ax.set_ylabel("free receptors on the cell")
    ax.set_title("Receptor recycling: %d seeds per rate" % len(SEEDS))
    ax.legend()
    fig.tight_layout()
    fig.savefig(args.out + ".png", dpi=120)
    print("wrote %s.png and %s.csv" % (args.out, args.out))


if __name__ == "__main__":
    main()
