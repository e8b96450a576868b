"""nestsim from Python: models, simulations, trajectories and the HSX broad phase on
numpy arrays.

    import nestsim
    model = nestsim.Model.load("models/receptor_recycling.yaml")
    model["simulation.steps"] = 2000
    sim = nestsim.Simulation(model, seed=7, output="out.h5")
    sim.run()
    print(sim.counts(), sim.events())
    t = nestsim.open("out.h5")
    t.counts()                   # bodies by kind and location per frame

nestsim.backend() says which backend the module was built with (CPU or CUDA).
"""
import numpy as _np

from . import _core
from ._analysis import Frame, location_names
from ._core import InputError, Model, ModelError
from ._simulation import Simulation
from .trajectory import Trajectory, open  # noqa: A004

__version__ = _core.version
backend_kind = _core.backend_kind


def backend():
    """The backend the module runs on: "CPU (Thrust/OpenMP, N threads)" or "CUDA
    (device name)"."""
    return _core.backend()


def pairs(centres, radii, thickness, box=None, periodic=False, solid=False,
          precision="double", skin=0, method="hsx", count_only=False):
    """All intersecting pairs of spheres: the pairs of `nestsim pairs`.

    centres (N, 3) or (N, 2), radii (N,), thickness (N,) with 0 <= thickness <= radius
    (thickness == radius: a solid sphere); box: edge lengths, the box [0, L) (without
    periodic every centre must lie in it; with periodic=True centres are wrapped and
    distances are minimum-image); solid=True: the solid-sphere relation (SSX) instead
    of the hollow one (HSX); precision "double" or "float"; skin: every radius grows and
    every lumen shrinks by it; method: one of nestsim.methods() (all give the same
    pairs).

    Returns an int64 array (M, 2) of pairs i < j sorted by (i, j) (with
    count_only=True, their number). Bad arrays raise ValueError naming the body index.
    The search's device buffers stay allocated for the next call with the same options
    (nestsim.release_pairs_memory() frees them).
    """
    return _core.pairs(_float64(centres), _float64(radii), _float64(thickness),
                       None if box is None else [float(b) for b in box],
                       bool(periodic), bool(solid), precision, float(skin), method,
                       bool(count_only))


def _float64(values):
    """values as a float64 array for the module (no copy when it already is one)."""
    try:
        return _np.ascontiguousarray(values, dtype=_np.float64)
    except (TypeError, ValueError) as e:
        raise ValueError(f"expected an array of numbers: {e}") from None


def release_pairs_memory():
    """Frees the device buffers that pairs() keeps for its next call."""
    _core.release_pairs_memory()


def methods():
    """The broad-phase algorithms pairs() can use (all give the same pairs)."""
    return _core.methods()


__all__ = ["Frame", "InputError", "Model", "ModelError", "Simulation", "Trajectory",
           "backend", "backend_kind", "location_names", "methods", "open", "pairs",
           "release_pairs_memory"]
