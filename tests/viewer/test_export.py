#!/usr/bin/python3
"""`nestsim export --format xyz` against the trajectory as h5py reads it: the frames
selected, each body of each frame (live slots only, in slot order) with its kind's
name, position, radius, thickness and id, the header's lattice, time and step; and the
command's answers to bad input.

usage: test_export.py NESTSIM OUT.h5 WORKDIR
"""
import os
import subprocess
import sys

import h5py
import numpy as np


def parse_xyz(path):
    """Blocks of (count, header dict, rows)."""
    blocks = []
    with open(path) as f:
        lines = f.read().splitlines()
    at = 0
    while at < len(lines):
        n = int(lines[at])
        header = {}
        for part in split_header(lines[at + 1]):
            key, value = part.split("=", 1)
            header[key] = value.strip('"')
        rows = [line.split() for line in lines[at + 2:at + 2 + n]]
        assert len(rows) == n, f"block at line {at + 1}: {len(rows)} rows for a count of {n}"
        blocks.append((n, header, rows))
        at += 2 + n
    return blocks


def split_header(text):
    """key=value pairs; values may be quoted and hold spaces."""
    parts, current, quoted = [], "", False
    for c in text:
        if c == '"':
            quoted = not quoted
        if c == " " and not quoted:
            if current:
                parts.append(current)
            current = ""
        else:
            current += c
    if current:
        parts.append(current)
    return parts


def check_frames(nestsim, trajectory, workdir, selection, expected_frames):
    out = os.path.join(workdir, "export.xyz")
    r = subprocess.run([nestsim, "export", trajectory, "--format", "xyz", "--frames", selection,
                        "-o", out], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    blocks = parse_xyz(out)
    with h5py.File(trajectory, "r") as f:
        names = [n.decode() if isinstance(n, bytes) else str(n)
                 for n in f["/parameters/species_names"][()]]
        box = f["/parameters/box"][()]
        assert [len(blocks)] == [len(expected_frames)], (selection, len(blocks))
        for (n, header, rows), frame in zip(blocks, expected_frames):
            ids = f["/particles/bodies/id/value"][frame]
            live = ids >= 0
            assert n == int(live.sum()), (frame, n, int(live.sum()))
            assert header["Properties"] == "species:S:1:pos:R:3:radius:R:1:thickness:R:1:id:I:1"
            lattice = np.array(header["Lattice"].split(), float).reshape(3, 3)
            assert np.allclose(lattice, np.diag(box), rtol=1e-8), header["Lattice"]
            assert int(header["Step"]) == int(f["/particles/bodies/position/step"][frame])
            assert np.isclose(float(header["Time"]), f["/observables/model_time/value"][frame],
                              rtol=1e-8)
            species = f["/particles/bodies/species/value"][frame][live]
            position = f["/particles/bodies/position/value"][frame][live]
            radius = f["/particles/bodies/radius/value"][frame][live]
            thickness = f["/particles/bodies/thickness/value"][frame][live]
            assert [row[0] for row in rows] == [names[k] for k in species]
            table = np.array([row[1:6] for row in rows], float)
            assert np.allclose(table[:, 0:3], position, rtol=1e-8, atol=1e-9)
            assert np.allclose(table[:, 3], radius, rtol=1e-8)
            assert np.allclose(table[:, 4], thickness, rtol=1e-8)
            assert [int(row[6]) for row in rows] == [int(i) for i in ids[live]]
    return blocks


def expect_failure(nestsim, args, status, *fragments):
    r = subprocess.run([nestsim, "export", *args], capture_output=True, text=True)
    assert r.returncode == status, (args, r.returncode, r.stderr)
    for fragment in fragments:
        assert fragment in r.stderr, (args, fragment, r.stderr)


def main():
    nestsim, trajectory, workdir = sys.argv[1:4]
    os.makedirs(workdir, exist_ok=True)
    with h5py.File(trajectory, "r") as f:
        frames = len(f["/particles/bodies/position/value"])
    assert frames >= 8, frames
    check_frames(nestsim, trajectory, workdir, "1:8:3", [1, 4, 7])
    check_frames(nestsim, trajectory, workdir, "5", [5])
    blocks = check_frames(nestsim, trajectory, workdir, ":", list(range(frames)))
    # Bodies appear and vanish (budding, fusion, degradation): live counts change.
    print(f"ok   export: {len(blocks)} frames, {blocks[0][0]} to {blocks[-1][0]} bodies")

    missing = os.path.join(workdir, "missing.h5")
    expect_failure(nestsim, [missing, "--format", "xyz", "-o", "x.xyz"], 2, missing)
    garbage = os.path.join(workdir, "garbage.h5")
    with open(garbage, "w") as f:
        f.write("not a trajectory\n")
    expect_failure(nestsim, [garbage, "--format", "xyz", "-o", "x.xyz"], 2, garbage,
                   "not an HDF5 file")
    expect_failure(nestsim, [trajectory, "--format", "pdb", "-o", "x.xyz"], 2, "--format", "pdb")
    expect_failure(nestsim, [trajectory, "--format", "xyz"], 2, "-o FILE")
    expect_failure(nestsim, [trajectory, "--format", "xyz", "--frames", "2:x", "-o", "x.xyz"], 2,
                   "--frames", "'x'")
    expect_failure(nestsim, [trajectory, "--format", "xyz", "--frames", "::0", "-o", "x.xyz"], 2,
                   "step")
    expect_failure(nestsim, [trajectory, "--format", "xyz", "--frames", f"{frames}:", "-o",
                             "x.xyz"], 2, f"frames 0 to {frames - 1}")
    print("ok   export: bad input gives exit 2 and says what is wrong")


if __name__ == "__main__":
    main()
