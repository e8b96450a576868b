#!/usr/bin/python3
"""The HSX broad phase on numpy arrays: random cells, vesicles inside them and proteins,
as hollow spheres (HSX: a protein in a cell's lumen does not touch it) and as solid
spheres (SSX: every overlap of bounding spheres), with the time of each search; the
pairs of a sample are checked against a direct numpy test.

    PYTHONPATH=build/cpu/python /usr/bin/python3 examples/python/broadphase_random.py
"""
import argparse
import time

import numpy as np

import nestsim


def scene(n, box, rng):
    """n bodies in a periodic box: 1% cells (radius 40-60, membrane 4), 5% vesicles
    (radius 8-12, membrane 2), the rest proteins (solid, radius 1-3)."""
    kind = rng.choice(3, n, p=[0.01, 0.05, 0.94])
    radius = np.select([kind == 0, kind == 1], [rng.uniform(40, 60, n), rng.uniform(8, 12, n)],
                       rng.uniform(1, 3, n))
    thickness = np.select([kind == 0, kind == 1], [np.full(n, 4.0), np.full(n, 2.0)], radius)
    centres = rng.uniform(0, box, (n, 3))
    return centres, radius, thickness


def check_sample(centres, radius, thickness, box, pairs, rng, reach=80.0):
    """Every pair among the bodies within `reach` of a random point: in `pairs` exactly
    when the HSX relation holds (minimum-image distance)."""
    d = centres - rng.uniform(0, box, 3)
    d -= box * np.round(d / box)
    pick = np.flatnonzero((d ** 2).sum(-1) < reach ** 2)
    c, r, q = centres[pick], radius[pick], thickness[pick]
    d = c[:, None] - c[None]
    d -= box * np.round(d / box)
    dist = np.sqrt((d ** 2).sum(-1))
    lumen = r - q
    touch = (dist <= r[:, None] + r[None]) & ~(dist < lumen[:, None] - r[None]) \
        & ~(dist < lumen[None] - r[:, None])
    i, j = np.nonzero(np.triu(touch, 1))
    want = set(zip(pick[i], pick[j]))
    found = set(map(tuple, pairs[np.isin(pairs[:, 0], pick) & np.isin(pairs[:, 1], pick)]))
    return want == found, len(want)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bodies", type=int, default=200_000)
    args = parser.parse_args()
    rng = np.random.default_rng(7)
    box = 40.0 * (args.bodies / 1000) ** (1 / 3) * 2.5  # ~1 protein per 1000 nm^3
    centres, radius, thickness = scene(args.bodies, box, rng)
    print("nestsim %s, backend %s: %d bodies in a periodic box of %.0f nm" % (
        nestsim.__version__, nestsim.backend(), args.bodies, box))
    for solid in (False, True):
        start = time.perf_counter()
        pairs = nestsim.pairs(centres, radius, thickness, box=(box,) * 3, periodic=True,
                              solid=solid)
        elapsed = time.perf_counter() - start
        print("  %s: %9d pairs in %.3f s" % ("SSX (solid) " if solid else "HSX (hollow)",
                                             len(pairs), elapsed))
        if not solid:
            ok, n = check_sample(centres, radius, thickness, box, pairs, rng)
            print("  the bodies within 80 nm of a point against a direct test: %s (%d pairs)"
                  % ("same pairs" if ok else "DIFFERENT", n))
            if not ok:
                raise SystemExit(1)


if __name__ == "__main__":
    main()
