"""nestsim.open: frames as numpy arrays and the analyses of `nestsim analyze` (checked
against its CSV files), to_mdanalysis() without empty slots, and the CLI's errors."""
import csv

import numpy as np
import pytest

import nestsim
from conftest import run_cli


@pytest.fixture(scope="module")
def written(tmp_path_factory, nestsim_binary):
    """A trajectory of the small model by the CLI, and its `nestsim analyze --csv`."""
    import conftest
    d = tmp_path_factory.mktemp("trajectory")
    (d / "small.yaml").write_text(conftest.SMALL_MODEL)
    run_cli(nestsim_binary, "run", d / "small.yaml", "--steps", 200, "-o", d / "t.h5")
    run_cli(nestsim_binary, "analyze", d / "t.h5", "--csv", d / "csv")
    return d


def read_csv(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def test_frames(written):
    t = nestsim.open(str(written / "t.h5"))
    assert len(t) == 11 and list(t.steps) == list(range(0, 201, 20))
    assert t.kinds == ["cell", "lysosome", "vesicle", "ligand", "receptor", "complex"]
    assert t.periodic and list(t.box) == [500, 500, 500]
    last = t[-1]
    assert last.step == 200 and np.all(last.id >= 0)
    assert set(last.kind_name) <= set(t.kinds)
    sim = nestsim.Simulation(t.model, steps=200)  # the same model and seed
    sim.run()
    now = sim.frame()
    a, b = np.argsort(now.id), np.argsort(last.id)
    assert np.array_equal(now.id[a], last.id[b])
    assert np.array_equal(now.position[a], last.position[b])
    assert [f.step for f in t] == list(t.steps)
    with pytest.raises(IndexError):
        t.frame(11)


def test_counts_as_nestsim_analyze(written):
    t = nestsim.open(str(written / "t.h5"))
    table = t.counts(dataframe=False)
    rows = [r for r in read_csv(written / "csv" / "counts.csv") if int(r["count"])]
    names = t.locations()
    want = np.zeros_like(table)
    for r in rows:
        want[int(r["frame"]), t.kinds.index(r["kind"]), names.index(r["location"])] = \
            int(r["count"])
    assert np.array_equal(table, want)
    df = t.counts()
    assert len(df) == len(rows) and df["count"].sum() == table.sum()


def test_msd_as_nestsim_analyze(written):
    t = nestsim.open(str(written / "t.h5"))
    values, tracked = t.msd(dataframe=False)
    for r in read_csv(written / "csv" / "msd.csv"):
        f, k = int(r["frame"]), t.kinds.index(r["kind"])
        assert tracked[f, k] == int(r["bodies"])
        assert values[f, k] == pytest.approx(float(r["msd_nm2"]), rel=1e-9, abs=1e-9)
    assert values[-1, t.kinds.index("ligand")] > 0


def test_contacts_as_nestsim_analyze(written):
    t = nestsim.open(str(written / "t.h5"))
    table = t.contacts(dataframe=False)
    for r in read_csv(written / "csv" / "contacts.csv"):
        f = int(r["frame"])
        assert table[f].tolist() == [int(r["bodies"]), int(r["hsx"]), int(r["ssx"]),
                                     int(r["lists"])]


def test_events_as_nestsim_analyze(written):
    t = nestsim.open(str(written / "t.h5"))
    per_interval = t.events(dataframe=False)
    rows = read_csv(written / "csv" / "reactions.csv")
    for r in rows:
        assert per_interval[int(r["frame"])].tolist() == [int(r[n]) for n in t.reactions]
    total = t.events(cumulative=True, dataframe=False)[-1]
    assert total.tolist() == per_interval.sum(axis=0).tolist() and total.sum() > 0
    df = t.events()
    assert list(df.columns) == ["frame", "step", "time"] + t.reactions


def test_to_mdanalysis_has_no_empty_slots(written):
    # MDAnalysis is optional for nestsim (Debian: python3-mdanalysis, which ./build.sh
    # test installs); a Python without it reports this test as skipped, not passed.
    pytest.importorskip("MDAnalysis", reason="MDAnalysis is not installed for this Python")
    t = nestsim.open(str(written / "t.h5"))
    u = t.to_mdanalysis()
    ids = np.unique(np.concatenate([f.id for f in t]))
    assert u.atoms.n_atoms == len(ids)  # bodies, not slots
    assert len(u.trajectory) == len(t)
    slots = t.frame(0, slots=True)
    assert len(slots.id) > len(ids)  # the file has more slots than bodies
    for index, frame in enumerate(t):
        u.trajectory[index]
        present = u.present[index]
        assert present.sum() == len(frame)
        pos = u.atoms.positions
        assert np.all(np.isnan(pos[~present]))
        order = np.searchsorted(ids, frame.id)
        assert np.allclose(pos[order], frame.position.astype(np.float32))
    first = t[0]
    names = u.atoms.names
    assert names[np.searchsorted(ids, first.id[0])] == t.kinds[first.kind[0]]
    assert u.dimensions[:3].tolist() == [500, 500, 500]


def test_not_a_trajectory_says_what_the_cli_says(tmp_path, nestsim_binary):
    for content in (b"", b"not hdf5 at all"):
        bad = tmp_path / "bad.h5"
        bad.write_bytes(content)
        with pytest.raises(nestsim.InputError) as e:
            nestsim.open(str(bad))
        cli = run_cli(nestsim_binary, "run", "--resume", bad, "--steps", 5, check=False)
        assert cli.returncode == 2 and str(e.value) == cli.stderr.strip()
    import h5py
    with h5py.File(tmp_path / "other.h5", "w") as f:
        f["x"] = 1
    with pytest.raises(nestsim.InputError) as e:
        nestsim.open(str(tmp_path / "other.h5"))
    assert "not a nestsim trajectory" in str(e.value)
    with pytest.raises(nestsim.InputError):
        nestsim.open(str(tmp_path / "missing.h5"))
