#!/usr/bin/python3
"""What the viewer's tests compare the page against, read with h5py (independent of
nestsim's reader): kind names, per-frame live counts by kind from the bodies themselves,
steps and model times of a trajectory, as JSON on standard output.

usage: reference.py OUT.h5
"""
import json
import sys

import h5py
import numpy as np


def main():
    with h5py.File(sys.argv[1], "r") as f:
        names = [n.decode() if isinstance(n, bytes) else str(n)
                 for n in f["/parameters/species_names"][()]]
        ids = f["/particles/bodies/id/value"][()]
        species = f["/particles/bodies/species/value"][()]
        frames = min(len(ids), len(species), len(f["/particles/bodies/position/value"]))
        counts = []
        for i in range(frames):
            live = species[i][ids[i] >= 0]
            counts.append([int(c) for c in np.bincount(live, minlength=len(names))])
        out = {
            "kinds": names,
            "compartment": [bool(x) for x in f["/parameters/kinds/compartment"][()]],
            "counts": counts,
            "steps": [int(s) for s in f["/particles/bodies/position/step"][:frames]],
            "times": [float(t) for t in f["/observables/model_time/value"][:frames]],
            "time_unit": f["/parameters/time_unit"][()].decode(),
        }
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
