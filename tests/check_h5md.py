#!/usr/bin/python3
"""Opens a nestsim trajectory with h5py and MDAnalysis and checks what they read.

Usage: check_h5md.py WRITER MODEL.yaml
WRITER is tests/write_sample_h5md: it writes 3 frames in which every body moves
+1.5 along x. A second sample, of a model with reaction rules, has per-rule series under
/observables/reactions. Exit 77 (CTest: skipped) only when h5py or MDAnalysis is missing.
"""
import math
import os
import shutil
import subprocess
import sys
import tempfile

try:
    import h5py
    import numpy as np
except ImportError as e:
    print(f"SKIP: h5py is not importable ({e}); apt-get install python3-h5py")
    sys.exit(77)

writer, model = sys.argv[1], sys.argv[2]
tmp = tempfile.mkdtemp(prefix="nestsim-check-h5md-")
path = os.path.join(tmp, "sample.h5")
subprocess.run([writer, model, path, "3"], check=True)
import atexit
atexit.register(shutil.rmtree, tmp, True)

with h5py.File(path, "r") as f:
    assert list(f["h5md"].attrs["version"]) == [1, 1]
    assert f["h5md/creator"].attrs["name"] == "nestsim"
    assert "name" in f["h5md/author"].attrs
    bodies = f["particles/bodies"]
    assert bodies["box"].attrs["dimension"] == 3
    assert list(bodies["box"].attrs["boundary"]) == ["periodic"] * 3
    edges = np.diag(bodies["box/edges/value"][0])
    pos = bodies["position/value"][()]
    ids = bodies["id/value"][()]
    species = bodies["species/value"][()]
    radius = bodies["radius/value"][()]
    thickness = bodies["thickness/value"][()]
    parent = bodies["parent/value"][()]
    membrane = bodies["membrane/value"][()]
    names = [n.decode() if isinstance(n, bytes) else n
             for n in f["parameters/species_names"][()]]
    assert pos.shape[0] == 3 and pos.shape[2] == 3, pos.shape
    n_slots = pos.shape[1]
    assert list(bodies["position/step"][()]) == [0, 500, 1000]  # the model's output.every
    image = bodies["image/value"][()]
    assert image.shape == pos.shape and image.dtype == np.int32, (image.shape, image.dtype)
    assert bodies["image/step"][()].tolist() == [0, 500, 1000]
    assert bodies["id/step"][()].tolist() == [0, 500, 1000]  # shared step dataset
    n = int((ids[0] >= 0).sum())
    assert n > 0 and n < n_slots
    assert (ids[0, :n] == np.arange(n)).all() and (ids[0, n:] == -1).all()
    assert (species[0, n:] == -1).all()
    assert f["observables/body_count/value"][0] == n
    kind_count = f["observables/kind_count/value"][0]
    assert kind_count.sum() == n
    for k, name in enumerate(names):
        assert kind_count[k] == (species[0, :n] == k).sum(), name
    # Motion between frames: +1.5 along x, wrapped.
    dx = (pos[1, :n, 0] - pos[0, :n, 0]) % edges[0]
    assert np.allclose(dx, 1.5), dx[:5]
    assert (pos[1, :n, 1:] == pos[0, :n, 1:]).all()
    # Nesting, checked independently of the C++ tests: a body whose parent is p lies
    # wholly in p's lumen unless it sits in a membrane, then it is on the mid-surface.
    def dist(a, b):
        d = pos[0, a] - pos[0, b]
        d -= edges * np.round(d / edges)
        return math.sqrt((d * d).sum())
    checked = 0
    for i in range(n):
        m, p = membrane[0, i], parent[0, i]
        if m >= 0:
            assert abs(dist(i, m) - (radius[0, m] - thickness[0, m] / 2)) < 1e-9
            assert p == parent[0, m]
            checked += 1
        elif p >= 0:
            assert dist(i, p) <= radius[0, p] - thickness[0, p] - radius[0, i] + 1e-9
            checked += 1
    assert checked > n // 2
    model_text = f["parameters/model"][()]
    model_text = model_text.decode() if isinstance(model_text, bytes) else model_text
    assert model_text == open(model).read()
    # List sizes: unknown (-1) in frames that do not come from a simulation.
    assert f["observables/broadphase_pairs/value"][()].tolist() == [-1, -1, -1]
    assert f["observables/broadphase_pairs/step"][()].tolist() == [0, 500, 1000]
    collision = f["parameters/collision"][()]
    collision = collision.decode() if isinstance(collision, bytes) else collision
    assert collision in ("hollow", "solid"), collision
print(f"h5py: {n} bodies in {n_slots} slots, 3 frames, nesting holds")


def text(x):
    return x.decode() if isinstance(x, bytes) else x


# A model with reaction rules: one series per rule under /observables/reactions, events
# per output interval (none here: the sample frames are the initial state moved).
reaction_model = os.path.join(tmp, "reactions.yaml")
with open(reaction_model, "w") as out:
    out.write("""nestsim: 1
units: {length: nm, time: us}
box: {size: [200, 200, 200], boundary: periodic}
simulation: {dt: 0.01, steps: 300, seed: 4, capacity: 64, output: {every: 50, file: r.h5}}
compartments:
  ves: {radius: 20, thickness: 4, diffusion: 1}
species:
  a: {radius: 2, diffusion: 10}
  b: {radius: 2, diffusion: 10}
interactions: {repulsion: 0.5}
place:
  - {compartment: ves, at: [100, 100, 100]}
  - {species: a, count: 40, outside: ves}
reactions:
  - {name: convert, rule: "a -> b", rate: 0.5}
  - {name: back, rule: "b -> a", rate: 0.1}
""")
reaction_path = os.path.join(tmp, "reactions.h5")
subprocess.run([writer, reaction_model, reaction_path, "3"], check=True)
with h5py.File(reaction_path, "r") as f:
    rules = [text(x) for x in f["parameters/reaction_names"][()]]
    assert rules == ["convert", "back"], rules
    steps = f["particles/bodies/position/step"][()].tolist()
    assert steps == [0, 50, 100], steps
    for group in ["observables/reactions"] + ["observables/reactions/" + r for r in rules]:
        assert f[group + "/value"].dtype == np.int64
        assert f[group + "/value"][()].tolist() == [0, 0, 0], group
        assert f[group + "/step"][()].tolist() == steps, group
    reaction_slots = f["particles/bodies/position/value"].shape[1]
print(f"h5py: reaction series {rules} with step and time")

import warnings
warnings.simplefilter("ignore")  # MDAnalysis' own deprecation warnings
try:
    import MDAnalysis as mda
except ImportError as e:
    print(f"SKIP: MDAnalysis is not importable ({e}); apt-get install python3-mdanalysis")
    sys.exit(77)


# MDAnalysis 2.4 knows the length unit nm but not the time unit us, so it must not
# convert units (it would refuse the file); positions are then read as written.
# MDAnalysis 2.4's minimal topology (Universe(file) without a topology) looks only in
# /particles/trajectory, so give it one atom per slot and load the trajectory.
u = mda.Universe.empty(n_slots)
u.load_new(path, format="H5MD")  # units nm and ns: converted to Angstrom and ps
assert len(u.atoms) == n_slots, len(u.atoms)
assert len(u.trajectory) == 3
for frame, ts in enumerate(u.trajectory):
    assert np.allclose(ts.positions, 10 * pos[frame].astype(np.float32)), frame
    assert np.allclose(ts.dimensions[:3], 10 * edges)
    assert ts.data["body_count"] == n
# The file's own time of frame 2 (ns, as written), in MDAnalysis' time unit, ps.
with h5py.File(path, "r") as f:
    time_ns = float(f["particles/bodies/position/time"][2])
assert math.isclose(u.trajectory[2].time, 1000 * time_ns), (u.trajectory[2].time, time_ns)
assert time_ns > 0
u2 = mda.Universe.empty(n_slots)
u2.load_new(path, format="H5MD", convert_units=False)
assert np.allclose(u2.trajectory[1].positions, pos[1].astype(np.float32))
print(f"MDAnalysis {mda.__version__}: {len(u.atoms)} atoms, 3 frames, positions match h5py")

# MDAnalysis before 2.8 reads `value` of every group under /observables: the reactions
# group must have one (all rules' events) besides the per-rule subgroups.
u3 = mda.Universe.empty(reaction_slots)
u3.load_new(reaction_path, format="H5MD", convert_units=False)
assert len(u3.trajectory) == 3
for ts in u3.trajectory:
    assert ts.data["reactions"] == 0
print(f"MDAnalysis {mda.__version__}: the trajectory with reaction series opens")
