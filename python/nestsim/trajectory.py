"""nestsim.open: a trajectory (H5MD, written by `nestsim run` or a Simulation) as numpy
arrays, with the analyses of `nestsim analyze`."""
import os

import numpy as np

from . import _core
from ._analysis import Frame, location_names, msd


def _text(value):
    value = value[()] if hasattr(value, "shape") else value
    return value.decode() if isinstance(value, bytes) else str(value)


def _pandas(dataframe):
    """pandas when DataFrames are wanted (dataframe=None: whenever it is installed)."""
    if dataframe is False:
        return None
    try:
        import pandas
    except ImportError:
        if dataframe:
            raise
        return None
    return pandas


class Trajectory:
    """A trajectory file: len(t) frames, t[i] (a nestsim.Frame, negative indices too),
    iteration over frames, kinds by name, and the analyses of `nestsim analyze`:
    counts(), msd(), events(), contacts(); to_mdanalysis().

    Analyses return pandas DataFrames where pandas is installed (dataframe=None), numpy
    arrays with dataframe=False.
    """

    def __init__(self, path):
        import h5py

        self.path = os.fspath(path)
        last = _core.read_last_frame(self.path)  # the CLI's checks and messages
        self.n_frames = int(last["frames"])
        self.seed = int(last["seed"])
        self.model_text = last["model_text"]
        self.model_path = last["model_path"]
        self.version = last["version"]
        self.collision = last["collision"] or None
        self.reactions = list(last["reaction_names"])
        with h5py.File(self.path, "r") as f:
            p = f["parameters"]
            self.kinds = [_text(s) for s in p["species_names"][()]]
            self.compartment = np.asarray(p["kinds/compartment"][()], dtype=bool)
            self.box = np.asarray(p["box"][()], dtype=float)
            self.length_unit = _text(p["length_unit"])
            self.time_unit = _text(p["time_unit"])
            boundary = f["particles/bodies/box"].attrs["boundary"]
            self.periodic = _text(boundary[0]) == "periodic"
            self.dim = 2 if len(self.box) < 3 or self.box[2] == 0 else 3
            self.steps = np.asarray(f["particles/bodies/position/step"][: self.n_frames],
                                    dtype=np.int64)
            self.times = np.asarray(f["observables/model_time/value"][: self.n_frames],
                                    dtype=float)
            self._reaction_values = np.zeros((self.n_frames, len(self.reactions)), np.int64)
            for r, name in enumerate(self.reactions):
                self._reaction_values[:, r] = f["observables/reactions/%s/value" % name][
                    : self.n_frames]

    def __len__(self):
        return self.n_frames

    def __repr__(self):
        return "<nestsim.Trajectory %s: %d frames, %d kinds>" % (
            self.path, self.n_frames, len(self.kinds))

    def frame(self, index, slots=False):
        """Frame `index` (0-based; negative from the end) as a nestsim.Frame."""
        if index < 0:
            index += self.n_frames
        if not 0 <= index < self.n_frames:
            raise IndexError("frame %d of a trajectory of %d frames" % (index, self.n_frames))
        return Frame(_core.read_frame(self.path, index), self.kinds, slots)

    def __getitem__(self, index):
        return self.frame(index)

    def __iter__(self):
        for index in range(self.n_frames):
            yield self.frame(index)

    @property
    def model(self):
        """The model the trajectory was written from (a nestsim.Model)."""
        return _core.Model.from_yaml(self.model_text, self.model_path)

    def locations(self):
        return location_names(self.kinds)

    def _stamps(self, pandas):
        return pandas.DataFrame({"frame": np.arange(self.n_frames), "step": self.steps,
                                 "time": self.times})

    def counts(self, dataframe=None):
        """Bodies by kind and location per frame. DataFrame: frame, step, time, kind,
        location, count (one row per nonzero count). Arrays: int (frames, kinds,
        locations); names in self.kinds and self.locations()."""
        table = np.stack([f.count_table() for f in self])
        pandas = _pandas(dataframe)
        if pandas is None:
            return table
        f, k, l = np.nonzero(table)
        names = np.array(self.locations(), dtype=object)
        return pandas.DataFrame({"frame": f, "step": self.steps[f], "time": self.times[f],
                                 "kind": np.array(self.kinds, dtype=object)[k],
                                 "location": names[l], "count": table[f, k, l]})

    def msd(self, dataframe=None):
        """Mean squared displacement per kind from frame 0 (length unit squared), over
        the bodies of frame 0 present with the same kind ever since (tracked).
        DataFrame: frame, step, time, then one column per kind. Arrays: (msd (frames,
        kinds), tracked (frames, kinds))."""
        values, tracked = msd(iter(self), self.kinds, self.box, self.periodic, self.dim)
        pandas = _pandas(dataframe)
        if pandas is None:
            return values, tracked
        out = self._stamps(pandas)
        for k, name in enumerate(self.kinds):
            out[name] = values[:, k]
        return out

    def events(self, cumulative=False, dataframe=None):
        """Events of each reaction rule per frame: those of the output interval that
        ends at the frame, or with cumulative=True those since step 0. DataFrame: frame,
        step, time, one column per rule. Array: int (frames, rules)."""
        values = np.cumsum(self._reaction_values, axis=0) if cumulative \
            else self._reaction_values.copy()
        pandas = _pandas(dataframe)
        if pandas is None:
            return values
        out = self._stamps(pandas)
        for r, name in enumerate(self.reactions):
            out[name] = values[:, r]
        return out

    def contacts(self, dataframe=None):
        """Per frame: bodies, hollow (HSX pairs: touching membranes or proteins), solid
        (SSX: every overlap of the bounding spheres), lists (the run's neighbour-list
        pairs, -1 unknown). DataFrame, or an int array (frames, 4) in that order."""
        rows = []
        box = self.box[: self.dim] if self.periodic else None
        for f in self:
            centres = f.position[:, : self.dim]
            if len(f) >= 2:
                thickness = np.minimum(f.thickness, f.radius)
                hollow = _core.pairs(centres, f.radius, thickness, box, self.periodic, False,
                                     "double", 0.0, "hsx", True)
                solid = _core.pairs(centres, f.radius, thickness, box, self.periodic, True,
                                    "double", 0.0, "hsx", True)
            else:
                hollow = solid = 0
            rows.append((len(f), hollow, solid, f.broadphase_pairs))
        table = np.array(rows, dtype=np.int64).reshape(-1, 4)
        pandas = _pandas(dataframe)
        if pandas is None:
            return table
        out = self._stamps(pandas)
        for c, name in enumerate(("bodies", "hollow", "solid", "lists")):
            out[name] = table[:, c]
        return out

    def to_mdanalysis(self):
        """An MDAnalysis Universe with one atom per body that the trajectory holds at
        any frame (not one per slot: empty slots are no atoms). A body's atom has the
        name and type of its kind, its radius, and its body id as id; in frames where
        the body is absent (not yet made, or gone) its position is NaN. The Universe's
        attribute `present` is a bool array (frames, atoms) saying which are there."""
        import MDAnalysis as mda
        from MDAnalysis.coordinates.memory import MemoryReader

        frames = list(self)
        ids = np.unique(np.concatenate([f.id for f in frames])) if frames else \
            np.zeros(0, np.int64)
        coords = np.full((len(frames), len(ids), 3), np.nan, dtype=np.float32)
        present = np.zeros((len(frames), len(ids)), dtype=bool)
        kind = np.zeros(len(ids), dtype=np.int64)
        radius = np.zeros(len(ids))
        seen = np.zeros(len(ids), dtype=bool)
        for t, f in enumerate(frames):
            atom = np.searchsorted(ids, f.id)
            coords[t, atom] = f.position
            present[t, atom] = True
            first = ~seen[atom]
            kind[atom[first]] = f.kind[first]
            radius[atom[first]] = f.radius[first]
            seen[atom] = True
        u = mda.Universe.empty(len(ids), trajectory=False)
        names = np.array(self.kinds, dtype=object)[kind]
        u.add_TopologyAttr("names", names)
        u.add_TopologyAttr("types", names)
        u.add_TopologyAttr("radii", radius)
        u.add_TopologyAttr("ids", ids)
        dims = np.zeros(6, dtype=np.float32)
        dims[:3] = self.box[:3] if len(self.box) >= 3 else list(self.box) + [0]
        dims[3:] = 90
        u.load_new(coords, format=MemoryReader, order="fac",
                   dimensions=np.tile(dims, (len(frames), 1)))
        u.present = present
        return u


def open(path):  # noqa: A001 - the module's verb, as h5py.File or MDAnalysis.Universe
    """Opens a trajectory written by `nestsim run` or nestsim.Simulation(output=...).
    Raises nestsim.InputError with the command line's message when it is not one."""
    return Trajectory(path)
