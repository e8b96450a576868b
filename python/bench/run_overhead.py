#!/usr/bin/python3
"""The per-call cost of Simulation.run: run(1) called N times against run(N) on the
default model (two simulations with the same seed, so the same final state, checked),
in interleaved blocks of B steps so that a changing machine load hits both alike; and
run(0) calls (the binding alone, no step).

    PYTHONPATH=build/cpu/python /usr/bin/python3 python/bench/run_overhead.py [N [B]]
"""
import os
import sys
import time

import numpy as np

import nestsim

MODEL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "models",
                     "default.yaml")
model = nestsim.Model.load(MODEL)
N = int(sys.argv[1]) if len(sys.argv) > 1 else 10000
B = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
single = nestsim.Simulation(model, seed=7)  # run(1) calls
whole = nestsim.Simulation(model, seed=7)   # run(B) calls
t_single = t_whole = 0.0
for _ in range(N // B):
    start = time.perf_counter()
    for _ in range(B):
        single.run(1, progress=False)
    middle = time.perf_counter()
    whole.run(B, progress=False)
    t_single += middle - start
    t_whole += time.perf_counter() - middle
a, b = single.frame(), whole.frame()
same = np.array_equal(a.position, b.position) and np.array_equal(a.id, b.id)
steps = B * (N // B)
print("backend %s, default model (%d bodies), %d steps" % (nestsim.backend(), len(a), steps))
print("run(1) x %d: %.2f s; run(%d) x %d: %.2f s; difference %.2f s = %.1f us per run(1) "
      "call (%.1f%% of a step); same final state: %s" % (
          steps, t_single, B, N // B, t_whole, t_single - t_whole,
          1e6 * (t_single - t_whole) / steps, 100 * (t_single - t_whole) / t_whole, same))
start = time.perf_counter()
for _ in range(100000):
    single.run(0, progress=False)
elapsed = time.perf_counter() - start
print("run(0) x 100000: %.3f s = %.2f us per call (the binding alone)" % (elapsed,
                                                                          10 * elapsed))
