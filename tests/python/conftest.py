"""Shared fixtures of the Python tests: the nestsim program of the same build (the
command line the module must agree with), the source tree, and a small model with
reactions that runs in a second."""
import os
import subprocess

import pytest

SOURCE_DIR = os.environ.get("NESTSIM_SOURCE_DIR",
                            os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))
BINARY = os.environ.get("NESTSIM_BINARY", "")

# A cell with receptors, ligands outside and a lysosome inside, with the recycling
# cycle's rules: every path of the engine (binding, budding, fusion, degradation,
# transport) in ~700 bodies. Frames every 20 steps.
SMALL_MODEL = """\
nestsim: 1
units: {length: nm, time: us}
box: {size: [500, 500, 500], boundary: periodic}
simulation:
  dt: 0.002
  steps: 200
  seed: 11
  output: {every: 20, file: small.h5}
medium: {temperature: 310, viscosity: 0.003}
compartments:
  cell:     {radius: 200, thickness: 8, diffusion: 0}
  lysosome: {radius: 70, thickness: 6, diffusion: 0.01}
  vesicle:  {radius: 30, thickness: 10, diffusion: 45}
species:
  ligand:   {radius: 2, diffusion: 45}
  receptor: {radius: 3, diffusion: 1, membrane: true}
  complex:  {radius: 3.5, diffusion: 0.5, membrane: true}
interactions: {repulsion: 0.5}
place:
  - {compartment: cell, at: [250, 250, 250]}
  - {compartment: lysosome, at: [250, 250, 250]}
  - {compartment: vesicle, count: 3, in: cell}
  - {species: receptor, count: 200, on: cell}
  - {species: ligand, count: 40, in: lysosome}
  - {species: ligand, count: 400, outside: cell}
reactions:
  - {name: binding, rule: "ligand outside cell + receptor on cell -> complex on cell", rate: 200, radius: 12}
  - {name: budding, rule: "complex on cell -> vesicle + complex on vesicle", rate: 20}
  - {name: fusion, rule: "vesicle + lysosome -> lysosome", rate: 200, radius: 15}
  - {name: degradation, rule: "ligand in lysosome -> 0", rate: 5}
  - {name: recycling, rule: "complex on lysosome -> receptor on cell", rate: 5}
"""


@pytest.fixture(scope="session")
def nestsim_binary():
    assert BINARY and os.access(BINARY, os.X_OK), \
        "NESTSIM_BINARY must name the nestsim program of this build (ctest sets it)"
    return BINARY


@pytest.fixture
def small_model_file(tmp_path):
    path = tmp_path / "small.yaml"
    path.write_text(SMALL_MODEL)
    return str(path)


def run_cli(binary, *args, check=True):
    """Runs `nestsim ARGS...`; returns the CompletedProcess (text)."""
    result = subprocess.run([binary, *map(str, args)], capture_output=True, text=True,
                            env=dict(os.environ, OMP_WAIT_POLICY="passive"))
    if check and result.returncode != 0:
        raise AssertionError("nestsim %s: exit %d\n%s" % (" ".join(map(str, args)),
                                                          result.returncode, result.stderr))
    return result


def assert_same_datasets(a, b):
    """Every group, dataset and attribute of two HDF5 files is the same, bit for bit."""
    import h5py
    import numpy as np

    def items(f):
        found = {}

        def visit(name, obj):
            found[name] = obj
        f.visititems(visit)
        return found

    def same(x, y):
        x, y = np.asarray(x), np.asarray(y)
        if x.dtype == object or y.dtype == object:  # strings: compare the values
            return x.dtype == y.dtype and x.tolist() == y.tolist()
        return x.shape == y.shape and x.dtype == y.dtype and x.tobytes() == y.tobytes()

    with h5py.File(a, "r") as fa, h5py.File(b, "r") as fb:
        ia, ib = items(fa), items(fb)
        assert sorted(ia) == sorted(ib)
        for name in [""] + sorted(ia):
            oa, ob = (fa, fb) if name == "" else (ia[name], ib[name])
            assert sorted(oa.attrs) == sorted(ob.attrs), name
            for attr in oa.attrs:
                assert same(oa.attrs[attr], ob.attrs[attr]), name + " attribute " + attr
            if isinstance(oa, h5py.Dataset):
                assert same(oa[()], ob[()]), name
