"""Frames and what `nestsim analyze` computes from them, in numpy.

Locations follow `nestsim analyze`: "outside" (no compartment holds the body), "in K"
(the innermost compartment whose lumen holds it is of kind K) and "on K" (it is bound to
the membrane of a compartment of kind K).
"""
import numpy as np


def location_names(kinds):
    """["outside", "in K0", "on K0", "in K1", "on K1", ...] for the kind names `kinds`."""
    names = ["outside"]
    for k in kinds:
        names += ["in " + k, "on " + k]
    return names


class Frame:
    """One state of a run, as numpy arrays over its bodies (or every slot).

    position (N, 3), image (N, 3) periodic images (unwrapped = position + image * box),
    id (N,) body ids, kind (N,) kind indices into kind_names (the model's kinds), kinds
    (N,) kind names, radius (N,), thickness (N,), parent (N,) and membrane (N,) body
    ids (-1: none), step, time, reaction_events (per rule, since step 0), next_id; the
    plurals positions, ids and radii name the same arrays. With slots=True empty slots
    are kept (id -1, kind name ""); by default only the bodies present are.
    """

    _fields = ("position", "image", "id", "kind", "radius", "thickness", "parent", "membrane")

    def __init__(self, raw, kinds, slots=False):
        self.kind_names = list(kinds)
        self.step = int(raw["step"])
        self.time = float(raw["time"])
        self.next_id = int(raw["next_id"])
        self.reaction_events = np.asarray(raw["reaction_events"], dtype=np.int64)
        self.broadphase_pairs = int(raw["broadphase_pairs"])
        keep = None if slots else raw["id"] >= 0
        for name in self._fields:
            value = raw[name]
            setattr(self, name, value if keep is None else value[keep])

    @property
    def kinds(self):
        names = np.array(self.kind_names + [""], dtype=object)
        return names[np.where(self.id >= 0, self.kind, len(self.kind_names))]

    kind_name = kinds
    positions = property(lambda self: self.position)
    ids = property(lambda self: self.id)
    radii = property(lambda self: self.radius)

    def __len__(self):
        return int(np.count_nonzero(self.id >= 0))

    def __repr__(self):
        return "<nestsim.Frame step %d, time %g, %d bodies>" % (self.step, self.time, len(self))

    def locations(self):
        """Location index per body (see location_names): 0 outside, 1 + 2k in a
        compartment of kind k, 2 + 2k on one's membrane; -1 for empty slots."""
        live = self.id >= 0
        ids, kinds = self.id[live], self.kind[live]
        order = np.argsort(ids)
        sorted_ids = ids[order]

        def kind_of(body):
            at = np.clip(np.searchsorted(sorted_ids, body), 0, max(len(ids) - 1, 0))
            if len(ids) == 0 or np.any(sorted_ids[at] != body):
                missing = body[sorted_ids[at] != body] if len(ids) else body
                raise ValueError("frame at step %d names body %d as a container but does "
                                 "not hold it" % (self.step, missing[0]))
            return kinds[order[at]]

        loc = np.full(len(self.id), -1, dtype=np.int64)
        loc[live] = 0
        on = live & (self.membrane >= 0)
        inside = live & ~on & (self.parent >= 0)
        loc[on] = 2 + 2 * kind_of(self.membrane[on])
        loc[inside] = 1 + 2 * kind_of(self.parent[inside])
        return loc

    def count_table(self):
        """Bodies by kind and location: an int array (kinds, locations)."""
        live = self.id >= 0
        n_loc = 1 + 2 * len(self.kind_names)
        flat = self.kind[live].astype(np.int64) * n_loc + self.locations()[live]
        return np.bincount(flat, minlength=len(self.kind_names) * n_loc).reshape(
            len(self.kind_names), n_loc)

    def counts(self):
        """Bodies by kind and location: {kind: {location: count}} (locations present)."""
        table, names = self.count_table(), location_names(self.kind_names)
        return {k: {names[l]: int(table[i, l]) for l in range(len(names)) if table[i, l]}
                for i, k in enumerate(self.kind_names)}


def msd(frames, kinds, box, periodic, dim=3):
    """Mean squared displacement from frame 0 per kind, over the bodies of frame 0 still
    present with the same kind in every frame so far (as `nestsim analyze`: periodic
    jumps unwrapped with minimum images between consecutive frames).
    Returns (msd (F, K) float, tracked (F, K) int)."""
    box = np.asarray(box, dtype=float)
    out, tracked = [], []
    origin = ids0 = None
    for index, f in enumerate(frames):
        if index == 0:
            ids0, kind0 = f.id.copy(), f.kind.copy()
            order = np.argsort(ids0)
            sorted_ids = ids0[order]
            origin = f.position.copy()
            last, unwrapped = origin.copy(), origin.copy()
            alive = np.ones(len(ids0), dtype=bool)
        else:
            at = np.searchsorted(sorted_ids, f.id)
            hit = at < len(sorted_ids)
            hit[hit] = sorted_ids[at[hit]] == f.id[hit]
            track = order[at[hit]]
            same = kind0[track] == f.kind[hit]
            track, pos = track[same], f.position[hit][same]
            present = np.zeros(len(ids0), dtype=bool)
            present[track] = True
            alive &= present
            step = pos - last[track]
            if periodic:
                step[:, :dim] -= box[:dim] * np.round(step[:, :dim] / box[:dim])
            step[:, dim:] = 0
            unwrapped[track] += step
            last[track] = pos
        d2 = np.sum((unwrapped - origin) ** 2, axis=1)
        row, count = np.zeros(len(kinds)), np.zeros(len(kinds), dtype=np.int64)
        for k in range(len(kinds)):
            sel = alive & (kind0 == k)
            count[k] = np.count_nonzero(sel)
            if count[k]:
                row[k] = d2[sel].sum() / count[k]
        out.append(row)
        tracked.append(count)
    return np.array(out).reshape(-1, len(kinds)), np.array(tracked).reshape(-1, len(kinds))
