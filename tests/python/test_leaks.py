"""Reference counting: 10,000 calls of each entry point leave neither Python objects
(tracemalloc) nor native memory (the process's resident size) behind."""
import gc
import tracemalloc

import numpy as np
import pytest

import nestsim

TINY = {
    "nestsim": 1,
    "units": {"length": "nm", "time": "us"},
    "box": {"size": [200, 200, 200], "boundary": "periodic"},
    "simulation": {"dt": 0.002, "steps": 10 ** 6, "seed": 1, "output": {"every": 1000}},
    "medium": {"temperature": 310, "viscosity": 0.003},
    "compartments": {"cell": {"radius": 60, "thickness": 6, "diffusion": 0}},
    "species": {"ligand": {"radius": 2, "diffusion": 45},
                "receptor": {"radius": 3, "diffusion": 1, "membrane": True}},
    "interactions": {"repulsion": 0.5},
    "place": [{"compartment": "cell", "at": [100, 100, 100]},
              {"species": "receptor", "count": 20, "on": "cell"},
              {"species": "ligand", "count": 30, "outside": "cell"}],
    "reactions": [{"name": "binding", "rule": "ligand outside cell + receptor on cell -> 0",
                   "rate": 5, "radius": 8}],
}
CALLS = 10_000


def resident_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def assert_no_leak(call, calls=CALLS):
    for _ in range(200):  # warm-up: caches, arenas, lazily built state
        call()
    gc.collect()
    rss = resident_bytes()
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    for _ in range(calls):
        call()
    gc.collect()
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    grown = sum(s.size_diff for s in after.compare_to(before, "filename"))
    rss_grown = resident_bytes() - rss
    # A leaked object per call would be >= 10,000 x 16 bytes; a leaked frame or array,
    # megabytes.
    assert grown < 64 * 1024, "Python objects grew by %d bytes over %d calls" % (grown, calls)
    assert rss_grown < 8 * 1024 * 1024, "resident size grew by %d bytes" % rss_grown


@pytest.fixture(scope="module")
def sim():
    return nestsim.Simulation(nestsim.Model.from_dict(TINY))


def test_run_step_time(sim):
    assert_no_leak(lambda: (sim.run(1, progress=False), sim.step, sim.time))


def test_frame_counts_events(sim):
    assert_no_leak(lambda: (sim.frame(), sim.counts(), sim.events()), calls=CALLS // 2)


def test_pairs():
    rng = np.random.default_rng(1)
    c, r = rng.uniform(0, 50, (200, 3)), rng.uniform(0.5, 3, 200)
    assert_no_leak(lambda: nestsim.pairs(c, r, r, box=(50, 50, 50), periodic=True))


def test_model_set_get_and_errors():
    m = nestsim.Model.from_dict(TINY)

    def call():
        m["simulation.dt"] = 0.001
        m["species.ligand.diffusion"]
        try:
            m["compartments.cell.radius"] = -1
        except nestsim.ModelError:
            pass
        try:
            nestsim.pairs(np.zeros((2, 3)), [1, -1], [1, 1])
        except ValueError:
            pass
    assert_no_leak(call, calls=CALLS // 5)


def test_simulations_made_and_dropped():
    model = nestsim.Model.from_dict(TINY)
    assert_no_leak(lambda: nestsim.Simulation(model).run(1, progress=False), calls=2000)
