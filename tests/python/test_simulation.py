"""nestsim.Simulation: the trajectory of `nestsim run` bit for bit (fresh and resumed),
the state as numpy arrays, Ctrl-C, and the errors of the command line."""
import os
import signal
import threading
import time

import h5py
import numpy as np
import pytest

import nestsim
from conftest import SMALL_MODEL, SOURCE_DIR, assert_same_datasets, run_cli

DEFAULT_MODEL = os.path.join(SOURCE_DIR, "models", "default.yaml")


def test_default_model_bitwise_as_the_cli(tmp_path, nestsim_binary):
    sim = nestsim.Simulation(DEFAULT_MODEL, seed=5, output=str(tmp_path / "py.h5"), steps=60)
    sim.run()
    sim.close()
    run_cli(nestsim_binary, "run", DEFAULT_MODEL, "--seed", 5, "--steps", 60,
            "-o", tmp_path / "cli.h5")
    assert_same_datasets(tmp_path / "py.h5", tmp_path / "cli.h5")


@pytest.mark.parametrize("collision", ["hollow", "solid"])
def test_small_model_bitwise_as_the_cli(tmp_path, nestsim_binary, small_model_file, collision):
    model = nestsim.Model.load(small_model_file)
    sim = nestsim.Simulation(model, seed=3, output=str(tmp_path / "py.h5"), collision=collision)
    sim.run(60)   # how the steps are split into run() calls does not change the trajectory
    sim.run(140)  # (calls that end on a frame add none)
    sim.close()
    run_cli(nestsim_binary, "run", small_model_file, "--seed", 3, "--steps", 200,
            "--collision", collision, "-o", tmp_path / "cli.h5")
    assert_same_datasets(tmp_path / "py.h5", tmp_path / "cli.h5")
    with h5py.File(tmp_path / "py.h5") as f:
        assert list(f["particles/bodies/position/step"][()]) == list(range(0, 201, 20))
        assert f["observables/reactions/value"][()].sum() > 0  # reactions happened


def test_resume_bitwise_as_the_cli(tmp_path, nestsim_binary, small_model_file):
    # A run stopped at step 70 (a frame off the output grid), resumed to 200: by Python
    # (a Simulation, then Simulation.resume) and by the command line (--resume).
    sim = nestsim.Simulation(small_model_file, output=str(tmp_path / "py.h5"))
    sim.run(70)
    sim.close()
    resumed = nestsim.Simulation.resume(str(tmp_path / "py.h5"))
    assert resumed.step == 70
    resumed.run(130)
    resumed.close()
    run_cli(nestsim_binary, "run", small_model_file, "--steps", 70, "-o", tmp_path / "cli.h5")
    run_cli(nestsim_binary, "run", "--resume", tmp_path / "cli.h5", "--steps", 200)
    assert_same_datasets(tmp_path / "py.h5", tmp_path / "cli.h5")
    with h5py.File(tmp_path / "py.h5") as f:
        steps = list(f["particles/bodies/position/step"][()])
        assert steps == [0, 20, 40, 60, 70, 80, 100, 120, 140, 160, 180, 200]


def test_python_resumes_a_cli_file_as_the_cli_does(tmp_path, nestsim_binary,
                                                   small_model_file):
    for name in ("a.h5", "b.h5"):
        run_cli(nestsim_binary, "run", small_model_file, "--steps", 100, "-o", tmp_path / name)
    sim = nestsim.Simulation.resume(str(tmp_path / "a.h5"))
    assert sim.step == 100
    sim.run(100)
    sim.close()
    run_cli(nestsim_binary, "run", "--resume", tmp_path / "b.h5", "--steps", 200)
    assert_same_datasets(tmp_path / "a.h5", tmp_path / "b.h5")


def test_frame_counts_events_agree_with_the_written_observables(tmp_path, small_model_file):
    sim = nestsim.Simulation(small_model_file, output=str(tmp_path / "o.h5"))
    sim.run(200)
    f = sim.frame()
    assert sim.step == 200 and sim.time == pytest.approx(200 * 0.002)
    assert f.position.shape == (len(f), 3) and f.position.dtype == np.float64
    assert np.all(f.id >= 0) and len(np.unique(f.id)) == len(f)
    assert set(f.kinds) <= set(sim.kinds) and f.kind_names == sim.kinds
    assert f.positions is f.position and f.ids is f.id and f.radii is f.radius
    assert [sim.kinds[k] for k in f.kind] == list(f.kinds)
    slots = sim.frame(slots=True)
    assert len(slots.id) > len(f.id) and np.count_nonzero(slots.id >= 0) == len(f)
    events, counts = sim.events(), sim.counts()
    sim.close()
    with h5py.File(tmp_path / "o.h5") as h:
        kind_count = h["observables/kind_count/value"][-1]
        for k, name in enumerate(sim.kinds):
            assert sum(counts[name].values()) == kind_count[k]
        membrane = h["observables/membrane_count/value"][-1]  # [kind][kind of membrane]
        assert counts["receptor"].get("on cell", 0) == membrane[sim.kinds.index("receptor"),
                                                               sim.kinds.index("cell")]
        for name in sim.reactions:
            assert events[name] == h["observables/reactions/%s/value" % name][()].sum()
        pos = h["particles/bodies/position/value"][-1]
        ids = h["particles/bodies/id/value"][-1]
    live = ids >= 0
    order = np.argsort(ids[live])
    assert np.array_equal(pos[live][order], f.position[np.argsort(f.id)])


def test_run_without_steps_goes_to_the_models_steps(small_model_file):
    sim = nestsim.Simulation(small_model_file, steps=30)
    sim.run()
    assert sim.step == 30
    sim.run()  # already there
    assert sim.step == 30


def _interrupt_after(seconds, how):
    def send():
        time.sleep(seconds)
        if how == "interrupt_main":
            import _thread
            _thread.interrupt_main()
        else:
            os.kill(os.getpid(), signal.SIGINT)
    threading.Thread(target=send, daemon=True).start()


@pytest.mark.parametrize("how", ["interrupt_main", "kill"])
def test_ctrl_c_stops_cleanly_and_the_file_resumes_bitwise(tmp_path, small_model_file, how,
                                                           nestsim_binary):
    sim = nestsim.Simulation(small_model_file, output=str(tmp_path / "i.h5"), steps=10 ** 6)
    _interrupt_after(0.5, how)
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        sim.run(progress=False)
    assert time.monotonic() - started < 30
    stopped = sim.step
    assert 0 < stopped < 10 ** 6
    sim.run(3)  # still usable
    assert sim.step == stopped + 3
    sim.close()
    with h5py.File(tmp_path / "i.h5") as h:
        steps = h["particles/bodies/position/step"][()]
    assert steps[-1] == stopped + 3 and stopped in steps  # the interrupted state was written
    # The file continues as a run that never stopped.
    target = stopped + 3 + 20
    resumed = nestsim.Simulation.resume(str(tmp_path / "i.h5"))
    resumed.run(20)
    resumed.close()
    run_cli(nestsim_binary, "run", small_model_file, "--steps", target, "-o", tmp_path / "c.h5")
    with h5py.File(tmp_path / "i.h5") as a, h5py.File(tmp_path / "c.h5") as b:
        assert np.array_equal(a["particles/bodies/position/value"][-1],
                              b["particles/bodies/position/value"][-1])
        assert a["particles/bodies/position/step"][-1] == b["particles/bodies/position/step"][-1]


def test_run_releases_the_gil(small_model_file):
    sim = nestsim.Simulation(small_model_file, steps=10 ** 6)
    ticks = []
    done = threading.Event()

    def tick():
        while not done.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.01)
    t = threading.Thread(target=tick)
    t.start()
    sim.run(1500, progress=False)  # ~0.1-1 s: long enough for the ticker to tick 5 times
    done.set()
    t.join()
    assert len(ticks) >= 5


def test_progress_bar_is_shown_when_asked(small_model_file, capsys):
    sim = nestsim.Simulation(small_model_file)
    sim.run(60, progress=True)
    err = capsys.readouterr().err
    assert "60/60" in err


def test_backend_is_reported():
    assert nestsim.backend_kind in ("CPU", "CUDA")
    assert nestsim.backend().startswith(nestsim.backend_kind)


# Errors: the command line's messages.
def test_existing_output_is_refused_without_force(tmp_path, small_model_file, nestsim_binary):
    out = tmp_path / "x.h5"
    out.write_text("keep me")
    with pytest.raises(OSError) as e:
        nestsim.Simulation(small_model_file, output=str(out))
    cli = run_cli(nestsim_binary, "run", small_model_file, "-o", out, check=False)
    # The same message, naming Python's switch where the CLI names its flag.
    assert "use force=True" in str(e.value) and "--force" not in str(e.value)
    assert cli.returncode == 2
    assert str(e.value).replace("force=True", "--force") in cli.stderr
    assert out.read_text() == "keep me"
    nestsim.Simulation(small_model_file, output=str(out), force=True).close()
    assert nestsim.open(str(out)).n_frames == 1


def test_output_in_a_missing_directory(tmp_path, small_model_file):
    with pytest.raises(OSError):
        nestsim.Simulation(small_model_file, output=str(tmp_path / "no" / "x.h5"))


def test_resume_errors(tmp_path, nestsim_binary):
    not_h5 = tmp_path / "n.h5"
    not_h5.write_text("text")
    with pytest.raises(nestsim.InputError) as e:
        nestsim.Simulation.resume(str(not_h5))
    cli = run_cli(nestsim_binary, "run", "--resume", not_h5, "--steps", 10, check=False)
    assert cli.returncode == 2 and str(e.value) == cli.stderr.strip()
    with pytest.raises(nestsim.InputError):
        nestsim.Simulation.resume(str(tmp_path / "missing.h5"))


def test_bad_collision(small_model_file):
    with pytest.raises(ValueError) as e:
        nestsim.Simulation(small_model_file, collision="soft")
    assert "hollow" in str(e.value)


def test_placement_error_is_a_model_error(small_model_file):
    m = nestsim.Model.load(small_model_file)
    m["place.0.at"] = [250, 250, 495]  # the cell crosses the box's edge... in a periodic box
    m["box.boundary"] = "reflective"    # ...and outside a reflective one
    with pytest.raises(nestsim.ModelError) as e:
        nestsim.Simulation(m)
    assert e.value.key.startswith("place") and e.value.line > 0
