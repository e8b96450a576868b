"""nestsim.pairs: the pairs of `nestsim pairs`, checked against a brute-force reference
written here in numpy (equations 1-4 of the HSX paper), and its errors."""
import os

import numpy as np
import pytest

import nestsim
from conftest import run_cli


def brute_pairs(c, r, q, box=None, solid=False, skin=0.0):
    """Every pair i < j: spheres touch (d <= ri + rj + 2 skin) and, hollow, neither lies
    in the other's lumen (d < r - q - r_other, lumens shrunk and radii grown by skin)."""
    c = np.asarray(c, float)
    d = c[:, None, :] - c[None, :, :]
    if box is not None:
        box = np.asarray(box, float)
        d -= box * np.round(d / box)
    dist = np.sqrt((d ** 2).sum(-1))
    R = r + skin
    lumen = R - np.minimum(q + 2 * skin, R)  # the lumen, shrunk by the skin
    touch = dist <= R[:, None] + R[None, :]
    if not solid:
        inside_i = dist < lumen[:, None] - R[None, :]  # j wholly in i's lumen
        inside_j = dist < lumen[None, :] - R[:, None]
        touch &= ~inside_i & ~inside_j
    i, j = np.nonzero(np.triu(touch, 1))
    return np.stack([i, j], axis=1)


def nested_scene(n, seed, dim=3, size=100.0):
    rng = np.random.default_rng(seed)
    c = rng.uniform(0, size, (n, dim))
    r = rng.choice([0.5, 1.0, 2.0, 8.0, 20.0], n, p=[0.4, 0.3, 0.2, 0.07, 0.03])
    q = np.where(r > 5, rng.uniform(0.5, 2.0, n), r)  # shells and solid proteins
    return c, r, q


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("solid", [False, True])
@pytest.mark.parametrize("periodic", [False, True])
def test_against_brute_force(seed, solid, periodic):
    c, r, q = nested_scene(1500, seed)
    box = [100.0, 100.0, 100.0] if periodic else None
    got = nestsim.pairs(c, r, q, box=box, periodic=periodic, solid=solid)
    want = brute_pairs(c, r, q, box, solid)
    assert got.dtype == np.int64 and got.shape == want.shape
    assert np.array_equal(got, want)
    assert nestsim.pairs(c, r, q, box=box, periodic=periodic, solid=solid,
                         count_only=True) == len(want)


def test_2d_float_skin_and_every_method():
    c, r, q = nested_scene(800, 3, dim=2)
    want = brute_pairs(c, r, q, skin=0.25)
    for method in nestsim.methods():
        got = nestsim.pairs(c, r, q, skin=0.25, method=method)
        assert np.array_equal(got, want), method
    got = nestsim.pairs(c, r, q, precision="float")
    assert np.array_equal(got, brute_pairs(c, r, q))  # no pair near the rounding edge here


def test_hollow_excludes_lumens():
    # A shell of radius 10 (wall 1) holding a protein; a protein touching its wall.
    c = [[0, 0, 0], [0, 0, 0], [10.5, 0, 0]]
    assert nestsim.pairs(c, [10, 1, 1], [1, 1, 1]).tolist() == [[0, 2]]
    assert nestsim.pairs(c, [10, 1, 1], [1, 1, 1], solid=True).tolist() == [[0, 1], [0, 2]]


def test_inputs_of_any_layout_and_type():
    c, r, q = nested_scene(300, 4)
    want = nestsim.pairs(c, r, q)
    assert np.array_equal(nestsim.pairs(np.asfortranarray(c), r.tolist(), q.astype(np.float32)
                                        .astype(np.float64)), want)
    big = np.zeros((300, 6))
    big[:, ::2] = c  # strided view
    assert np.array_equal(nestsim.pairs(big[:, ::2], r, q), want)
    assert nestsim.pairs(np.zeros((0, 3)), [], []).shape == (0, 2)


def test_same_pairs_as_the_cli(tmp_path, nestsim_binary):
    c, r, q = nested_scene(2000, 5)
    scene = tmp_path / "scene.csv"
    with open(scene, "w") as f:
        f.write("x,y,z,radius,thickness\n")
        for (x, y, z), ri, qi in zip(c, r, q):
            f.write("%s,%s,%s,%s,%s\n" % tuple(repr(float(v)) for v in (x, y, z, ri, qi)))
    for extra, kw in [([], {}), (["--solid"], {"solid": True}),
                      (["--box", "100,100,100", "--periodic"],
                       {"box": (100, 100, 100), "periodic": True}),
                      (["--precision", "float", "--skin", "0.5"],
                       {"precision": "float", "skin": 0.5})]:
        out = run_cli(nestsim_binary, "pairs", scene, *extra).stdout.split("\n")
        want = np.array([list(map(int, line.split(","))) for line in out[1:] if line])
        got = nestsim.pairs(c, r, q, **kw)
        assert np.array_equal(got, want.reshape(-1, 2)), extra


@pytest.mark.parametrize("change, words", [
    (lambda c, r, q: c.__setitem__((7, 1), np.nan), "body 7: y is not a finite number"),
    (lambda c, r, q: r.__setitem__(3, -1.0), "body 3: radius is negative"),
    (lambda c, r, q: q.__setitem__(5, r[5] + 1), "body 5: thickness exceeds the radius"),
    (lambda c, r, q: q.__setitem__(2, -0.5), "body 2: thickness is negative"),
    (lambda c, r, q: r.__setitem__(9, np.inf), "body 9: radius is not a finite number"),
])
def test_bad_bodies_name_the_index(change, words):
    c, r, q = nested_scene(20, 6)
    change(c, r, q)
    with pytest.raises(ValueError) as e:
        nestsim.pairs(c, r, q)
    assert str(e.value) == words


@pytest.mark.parametrize("kwargs, words", [
    ({"centres": np.zeros((4, 4))}, "(N, 3) or (N, 2), not (4, 4)"),
    ({"centres": np.zeros(4)}, "(N, 3) or (N, 2), not (4,)"),
    ({"radii": np.ones(3)}, "radii must have the shape (4,)"),
    ({"thickness": np.ones((4, 1))}, "thickness must have the shape (4,)"),
    ({"box": (10, 10)}, "box gives 2 edges"),
    ({"box": (10, 0, 10)}, "every edge must be"),
    ({"periodic": True}, "needs a box"),
    ({"precision": "half"}, "precision"),
    ({"skin": -1}, "skin"),
    ({"method": "magic"}, "magic"),
    ({"box": (1, 1, 1)}, "body 1: x 2 lies outside the box [0, 1]"),
])
def test_bad_arguments(kwargs, words):
    args = {"centres": np.array([[0.5, 0.5, 0.5], [2, 0, 0], [0, 0, 0], [0, 0, 0.]]),
            "radii": np.ones(4), "thickness": np.ones(4)}
    args.update(kwargs)
    with pytest.raises(ValueError) as e:
        nestsim.pairs(**args)
    assert words in str(e.value)


def test_periodic_wraps_positions_as_the_cli():
    c = np.array([[0.5, 5, 5], [9.6 + 20, 5, 5], [-0.2, 5, 5]])
    got = nestsim.pairs(c, [0.5, 0.5, 0.5], [0.5, 0.5, 0.5], box=(10, 10, 10), periodic=True)
    assert got.tolist() == [[0, 1], [0, 2], [1, 2]]


def test_any_layout_and_dtype_gives_the_same_pairs():
    # Arrays reach the module through the buffer protocol: float64 views with strides
    # (a column slice, Fortran order) are read in place, other dtypes converted first.
    c, r, q = nested_scene(300, 11)
    want = nestsim.pairs(c, r, q)
    assert len(want) > 0
    wide = np.zeros((300, 6))
    wide[:, ::2] = c
    assert np.array_equal(nestsim._core.pairs(wide[:, ::2], r, q, None, False, False,
                                              "double", 0.0, "hsx", False), want)
    assert np.array_equal(nestsim.pairs(np.asfortranarray(c), r, q), want)
    assert np.array_equal(nestsim.pairs(c.tolist(), list(r), q.astype(np.float32)),
                          nestsim.pairs(c, r, q.astype(np.float32).astype(np.float64)))
    assert nestsim.pairs(c, r, q).dtype == np.int64


def test_arrays_that_are_not_numbers_are_refused():
    with pytest.raises(ValueError, match="expected an array of numbers"):
        nestsim.pairs([["a", "b", "c"]], [1.0], [1.0])
    with pytest.raises(ValueError, match="float64"):
        nestsim._core.pairs(np.zeros((2, 3), dtype=np.float32), np.ones(2), np.ones(2), None,
                            False, False, "double", 0.0, "hsx", False)
