"""`pip install .` (pyproject.toml, python/build_backend): the wheel built from this
checkout, installed with --target into a fresh directory, is the whole package: it
imports from there alone, finds the pairs of a numpy brute force, runs a model as the
module of the build tree does, and carries the project's version.

NESTSIM_PIP_BUILD_DIR: the build tree the wheel's build reuses (the one under test, so
that the test costs the install, not a second build of the engine)."""
import json
import os
import re
import subprocess
import sys

import numpy as np

import nestsim
from conftest import SMALL_MODEL, SOURCE_DIR
from test_pairs import brute_pairs, nested_scene

# Run by the installed package only (PYTHONPATH = the target directory): its location,
# version, files, pairs of a scene and the counts after 20 steps of the small model.
CHILD = r"""
import json, sys
import numpy as np
import nestsim
c, r, q = (np.array(a) for a in json.loads(sys.argv[1]))
model = nestsim.Model.from_yaml(sys.argv[2])
model["simulation.steps"] = 20
sim = nestsim.Simulation(model)
sim.run()
print(json.dumps({"file": nestsim.__file__, "version": nestsim.__version__,
                  "pairs": nestsim.pairs(c, r, q).tolist(),
                  "counts": sim.counts()}, default=int))
"""


def test_the_installed_wheel_is_the_package(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # where a run of the model may write its file
    target = tmp_path / "site"
    build_dir = os.environ["NESTSIM_PIP_BUILD_DIR"]
    pip = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-build-isolation", "--no-index",
         "--target", str(target), f"--config-settings=build-dir={build_dir}", SOURCE_DIR],
        capture_output=True, text=True)
    assert pip.returncode == 0, pip.stdout + pip.stderr

    installed = sorted(os.listdir(target / "nestsim"))
    sources = sorted(f for f in os.listdir(os.path.join(SOURCE_DIR, "python", "nestsim"))
                     if f.endswith(".py"))
    assert [f for f in installed if f.endswith(".py")] == sources
    assert any(re.match(r"_core\..*so$", f) for f in installed), installed
    with open(os.path.join(SOURCE_DIR, "CMakeLists.txt")) as f:
        version = re.search(r"project\(nestsim VERSION ([0-9.]+)", f.read())[1]
    assert (target / f"nestsim-{version}.dist-info" / "RECORD").exists()

    c, r, q = nested_scene(300, 5)
    env = dict(os.environ, PYTHONPATH=str(target))
    child = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps([c.tolist(), r.tolist(), q.tolist()]),
         SMALL_MODEL], capture_output=True, text=True, env=env, cwd=str(tmp_path))
    assert child.returncode == 0, child.stderr
    got = json.loads(child.stdout)
    assert got["file"].startswith(str(target))
    assert got["version"] == version
    assert np.array_equal(np.array(got["pairs"]).reshape(-1, 2), brute_pairs(c, r, q))

    model = nestsim.Model.from_yaml(SMALL_MODEL)  # the build tree's module, same run
    model["simulation.steps"] = 20
    sim = nestsim.Simulation(model)
    sim.run()
    assert got["counts"] == json.loads(json.dumps(sim.counts(), default=int))
