"""nestsim.open: a trajectory (H5MD, written by `nestsim run` or a Simulation) as numpy
arrays, with the analyses of `nestsim analyze`."""
import os

import numpy as np

from . import _core
from ._analysis import Frame, location_names, msd


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
        self.path = os.fspath(path)
        # Read through the engine's reader (its checks and the command line's messages),
        # then closed: an open file keeps HDF5's lock, which stops a run writing it.
        t = _core.Trajectory(self.path)
        try:
            t.check_last_frame()
            self.n_frames = int(t.frames)
            self.seed = int(t.seed)
            self.model_text = t.model_text
            self.model_path = t.model_path
            self.version = t.version
            self.collision = t.collision or None
            self.reactions = list(t.reaction_names)
            kinds = t.kinds()
            self.kinds = list(kinds["names"])
            self.compartment = np.asarray(kinds["compartment"], dtype=bool)
            self.box = np.asarray(t.box, dtype=float)
            self.length_unit = t.length_unit
            self.time_unit = t.time_unit
            self.periodic = bool(t.periodic)
            self.dim = 2 if self.box[2] == 0 else 3
            self.steps = np.asarray(t.steps(), dtype=np.int64)
            self.times = np.asarray(t.times(), dtype=float)
            self._reaction_values = np.zeros((self.n_frames, len(self.reactions)), np.int64)
            for r in range(len(self.reactions)):
                self._reaction_values[:, r] = t.reaction_events(r)
        finally:
            t.close()

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
        t = _core.Trajectory(self.path)  # one open file for the whole pass
        try:
            for index in range(self.n_frames):
                yield Frame(t.read_frame(index), self.kinds, False)
        finally:
            t.close()

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
