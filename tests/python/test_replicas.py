"""nestsim.Simulation(model, replicas=R): copies stepped together, each the separate run
of its seed (seed + r) bit for bit, whatever the workers; the arguments checked."""
import numpy as np
import pytest

import nestsim
from conftest import SMALL_MODEL


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    path = tmp_path_factory.mktemp("model") / "small.yaml"
    path.write_text(SMALL_MODEL)
    return nestsim.Model.load(str(path))


def same_frame(a, b):
    assert a.step == b.step
    assert np.array_equal(a.id, b.id)
    assert np.array_equal(a.kind, b.kind)
    assert np.array_equal(a.parent, b.parent)
    assert np.array_equal(a.membrane, b.membrane)
    assert a.position.tobytes() == b.position.tobytes()
    assert np.array_equal(a.reaction_events, b.reaction_events)


@pytest.mark.parametrize("workers", [None, 1, 2])
def test_each_replica_is_its_seeds_run(model, workers):
    replicas = nestsim.Simulation(model, seed=3, steps=120, replicas=3, workers=workers)
    assert replicas.replicas == 3
    replicas.run(50)
    replicas.run()  # to the run's total steps
    assert replicas.step == 120
    frames = replicas.frames()
    assert len(frames) == 3
    for r in range(3):
        alone = nestsim.Simulation(model, seed=3 + r, steps=120)
        alone.run()
        same_frame(frames[r], alone.frame())
        same_frame(replicas.frame(replica=r), alone.frame())
        assert replicas.events(replica=r) == alone.events()
    # The copies differ from each other: the check above can tell them apart.
    assert frames[0].position.tobytes() != frames[1].position.tobytes()
    assert len(replicas.rejected_moves) == 3


def test_arguments_are_checked(model, tmp_path):
    with pytest.raises(ValueError, match="replicas must be"):
        nestsim.Simulation(model, replicas=0)
    with pytest.raises(ValueError, match="replicas must be"):
        nestsim.Simulation(model, replicas=2.5)
    with pytest.raises(ValueError, match="output="):
        nestsim.Simulation(model, replicas=2, output=str(tmp_path / "x.h5"))
    with pytest.raises(ValueError, match="workers"):
        nestsim.Simulation(model, workers=2)
    one = nestsim.Simulation(model, steps=10)
    assert one.replicas == 1 and len(one.frames()) == 1
    with pytest.raises(IndexError):
        one.frame(replica=1)
    two = nestsim.Simulation(model, steps=10, replicas=2)
    with pytest.raises(IndexError):
        two.frame(replica=2)
