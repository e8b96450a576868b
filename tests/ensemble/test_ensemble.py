#!/usr/bin/python3
"""nestsim ensemble and nestsim run --set, against members run alone (issue 35).

usage: test_ensemble.py NESTSIM SOURCE_DIR [TEST...]

  set_flag      run --set: edits take effect (equal to the edited model file run as a
                file), errors name the --set argument, exit code 2
  mpi_scan      mpirun -n 2 on a 2 x 2 scan with a failing point: each done member's
                trajectory equals its printed `nestsim run` command run alone (h5diff),
                ensemble.h5 holds each member's status, seed, message and the member
                trajectory's observables; the failing point is recorded, the rest run;
                one process gives the same files; analyze DIR --csv gives the means
  killed_rank   kill -9 of rank 1 in the middle of a member; the same command again
                completes the ensemble, the killed member resumed from its last frame,
                every trajectory bitwise that of the member run alone
  reader        ensemble.h5 read while the ensemble runs; every member recorded
  busy          a second `nestsim ensemble` into a directory another one is writing
                waits for it and runs nothing again; a member whose lock another
                process holds (a rank that outlives its mpirun) is left alone until the
                lock goes; every trajectory bitwise that of the member run alone
  decay         A -> 0 at rate k, 200 bodies, 24 replicas, two base seeds: at every
                frame the ensemble mean count is within 4 standard errors of
                N0 exp(-k t) (each body survives independently: binomial variance)

The reference is independent of the ensemble: `nestsim run` of each member's
parameters, and the exact survival probability of a first-order decay (the engine fires
with probability 1 - exp(-k dt) per step, so exp(-k t) holds at every step).
"""
import fcntl
import math
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np

NESTSIM, SOURCE = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
DECAY = os.path.join(SOURCE, "tests/ensemble/decay.yaml")
MPIRUN = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-n", "2"]
# Runs side by side on a shared CI machine: one thread each, sleeping when idle.
ENV = dict(os.environ, OMP_NUM_THREADS="1", OMP_WAIT_POLICY="passive",
           HDF5_USE_FILE_LOCKING="FALSE")
# Under the sanitize preset, ranks of mpirun run without LeakSanitizer: Open MPI keeps
# allocations from MPI_Init to exit on purpose, in libraries without frame pointers, so
# they can be told apart only with a slow unwind of every malloc. The same ensemble code
# runs leak-checked in one process (set_flag, decay, reader).
MPI_ENV = dict(ENV)
if "ASAN_OPTIONS" in MPI_ENV:
    MPI_ENV["ASAN_OPTIONS"] += ":detect_leaks=0"


def run(args, expect=0, **kw):
    env = MPI_ENV if args[0] == "mpirun" else ENV
    p = subprocess.run(args, capture_output=True, text=True, env=env, **kw)
    if expect is not None and p.returncode != expect:
        sys.exit(f"FAIL: {' '.join(args)} exited {p.returncode}, expected {expect}\n"
                 f"stdout:\n{p.stdout}\nstderr:\n{p.stderr}")
    return p


def check(cond, what):
    if not cond:
        sys.exit("FAIL: " + what)


def h5_same(a, b):
    p = subprocess.run(["h5diff", a, b], capture_output=True, text=True)
    return p.returncode == 0, p.stdout[-2000:]


def members(directory):
    """{index: attrs} of ensemble.h5's member groups."""
    with h5py.File(os.path.join(directory, "ensemble.h5"), "r") as f:
        out = {}
        for name, g in f["members"].items():
            a = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in g.attrs.items()}
            if "kind_count" in g:
                a["kind_count"] = g["kind_count"][()]
                a["reactions"] = g["reactions"][()]
            out[int(a["index"])] = a
        return out


def rerun_alone(command, directory, workdir):
    """Runs a member's recorded `nestsim run` command into workdir; returns the file."""
    words = shlex.split(command)
    check(words[:2] == ["nestsim", "run"], "a member command: " + command)
    out = os.path.join(workdir, "alone_" + os.path.basename(words[words.index("-o") + 1]))
    words[words.index("-o") + 1] = out
    run([NESTSIM] + words[1:] + ["--force"], cwd=directory)
    return out


def test_set_flag(tmp):
    edited = os.path.join(tmp, "edited.yaml")
    with open(DECAY) as f:
        text = f.read().replace("rate: 0.5", "rate: 2").replace("steps: 400", "steps: 80")
    with open(edited, "w") as f:
        f.write(text)
    a, b = os.path.join(tmp, "a.h5"), os.path.join(tmp, "b.h5")
    run([NESTSIM, "run", DECAY, "--set", "reactions.decay.rate=2", "--set",
         "simulation.steps=80", "-o", a])
    run([NESTSIM, "run", edited, "-o", b])
    with h5py.File(a, "r") as fa, h5py.File(b, "r") as fb:
        for name in ("particles/bodies/position/value", "observables/kind_count/value",
                     "observables/reactions/decay/value"):
            check(np.array_equal(fa[name][()], fb[name][()]), "--set differs from the file: " + name)
        check(fa["observables/reactions/decay/value"][()].sum() > 0, "no decay events")
    for arg, needle in [("reactions.nosuch.rate=1", "--set reactions.nosuch.rate=1"),
                        ("reactions.decay.rate=-3", "--set reactions.decay.rate=-3"),
                        ("simulation.dt=fast", "--set simulation.dt=fast"),
                        ("novalue", "--set 'novalue'")]:
        p = run([NESTSIM, "run", DECAY, "--set", arg, "-o", os.path.join(tmp, "x.h5")], expect=2)
        check(needle.replace("'", "") in p.stderr.replace("'", ""),
              f"--set {arg}: the error does not name it: {p.stderr}")
        check(not os.path.exists(os.path.join(tmp, "x.h5")), "a file written for a bad --set")
    # The ensemble's usage errors: exit code 2, the flag named, nothing created.
    out = os.path.join(tmp, "e")
    for args, needle in [([DECAY], "-o DIR"), ([DECAY, "-o", out, "--replicas", "0"], "--replicas"),
                         ([DECAY, "-o", out, "--scan", "simulation.dt="], "--scan"),
                         ([DECAY, "-o", out, "--bogus"], "--bogus"),
                         ([DECAY, "-o", out, "--set", "reactions.nosuch.rate=1"],
                          "--set reactions.nosuch.rate=1")]:
        p = run([NESTSIM, "ensemble", *args], expect=2)
        check(needle in p.stderr, f"ensemble {args}: {p.stderr}")
        check(not os.path.exists(out), f"ensemble {args} created {out}")
    p = run([NESTSIM, "analyze", tmp], expect=2)
    check("not an ensemble directory" in p.stderr, p.stderr)
    print("set_flag: ok")


def ensemble_args(directory, *extra):
    return [NESTSIM, "ensemble", DECAY, "-o", directory, "--steps", "120", "--replicas", "2",
            "--scan", "reactions.decay.rate=0.5,-1", "--threads", "1", *extra]


def test_mpi_scan(tmp):
    d_mpi, d_one = os.path.join(tmp, "mpi"), os.path.join(tmp, "one")
    p = run(MPIRUN + ensemble_args(d_mpi), expect=1)  # one point fails
    check("rank 1 of 2" in p.stderr, "mpirun did not start 2 ranks of one ensemble:\n" + p.stderr)
    m = members(d_mpi)
    check(sorted(m) == [0, 1, 2, 3], f"members recorded: {sorted(m)}")
    check(len({m[i]["seed"] for i in m}) == 4, "member seeds not distinct")
    for i in (0, 1):
        check(m[i]["status"] == "done", f"member {i}: {m[i]['status']} {m[i]['message']}")
        alone = rerun_alone(m[i]["command"], tmp, tmp)
        same, diff = h5_same(os.path.join(d_mpi, "members", f"{i:04d}.h5"), alone)
        check(same, f"member {i} differs from its command run alone:\n{diff}")
        with h5py.File(alone, "r") as f:
            check(np.array_equal(f["observables/kind_count/value"][()], m[i]["kind_count"]),
                  f"member {i}: ensemble.h5's kind_count is not the trajectory's")
            check(np.array_equal(f["observables/reactions/decay/value"][()],
                                 m[i]["reactions"][:, 0]), f"member {i}: reactions")
    for i in (2, 3):
        check(m[i]["status"] == "failed" and "--set reactions.decay.rate=-1" in m[i]["message"],
              f"member {i} (rate -1): {m[i]['status']} {m[i]['message']}")
    run(ensemble_args(d_one), expect=1)
    for i in (0, 1):
        same, diff = h5_same(os.path.join(d_mpi, "members", f"{i:04d}.h5"),
                             os.path.join(d_one, "members", f"{i:04d}.h5"))
        check(same, f"member {i}: one process and mpirun differ:\n{diff}")
    # Again: the done members are skipped, the failing ones tried again.
    p = run(ensemble_args(d_one), expect=1)
    check("4 members (2 point(s) x 2 replica(s)), 2 to run" in p.stdout, "rerun:\n" + p.stdout)
    # Another ensemble into the same directory is refused.
    p = run([NESTSIM, "ensemble", DECAY, "-o", d_one, "--replicas", "3"], expect=2)
    check("another ensemble" in p.stderr, p.stderr)
    csv_dir = os.path.join(tmp, "csv")
    run([NESTSIM, "analyze", d_mpi, "--csv", csv_dir])
    rows = open(os.path.join(csv_dir, "ensemble_means.csv")).read().splitlines()
    check(rows[0].startswith("point,reactions.decay.rate,replicas,frame,"), rows[0])
    last = [r.split(",") for r in rows if ",A," in r and r.startswith("0,")][-1]
    counts = [m[i]["kind_count"][-1][1] for i in (0, 1)]
    check(math.isclose(float(last[-3]), sum(counts) / 2), f"mean {last} vs {counts}")
    print("mpi_scan: ok")


def frames_in(path):
    try:
        with h5py.File(path, "r") as f:
            return len(f["observables/kind_count/value"])
    except (OSError, KeyError):
        return 0


def test_killed_rank(tmp):
    d = os.path.join(tmp, "killed")
    args = MPIRUN + [NESTSIM, "ensemble", DECAY, "-o", d, "--steps", "6000", "--replicas", "4",
                     "--set", "reactions.decay.rate=0.01", "--threads", "1"]
    log = open(os.path.join(tmp, "killed.err"), "w+")
    job = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=log, env=MPI_ENV,
                           start_new_session=True)
    pid, deadline, victim = None, time.time() + 120, None
    while time.time() < deadline and job.poll() is None:
        log.seek(0)
        found = re.search(r"rank 1 of 2 \(pid (\d+)\)", log.read())
        pid = int(found.group(1)) if found else None
        if pid:
            # The member rank 1 works on: the newest file with a frame past the first.
            files = [os.path.join(d, "members", n) for n in os.listdir(os.path.join(d, "members"))]
            grown = [f for f in files if frames_in(f) >= 3]
            if grown:
                victim = grown
                break
        time.sleep(0.2)
    check(pid and victim and job.poll() is None, "the ensemble ended before a rank could be killed")
    os.kill(pid, signal.SIGKILL)
    code = job.wait(timeout=120)
    check(code != 0, "mpirun reported success after a rank was killed")
    before = members(d) if os.path.exists(os.path.join(d, "ensemble.h5")) else {}
    check(len([i for i in before if before[i]["status"] == "done"]) < 4,
          "every member done before the kill: nothing to resume")
    p = run(args)
    m = members(d)
    check(sorted(m) == [0, 1, 2, 3] and all(m[i]["status"] == "done" for i in m),
          f"rerun did not complete the ensemble: {m}")
    check(any(m[i]["message"].startswith("resumed at step") for i in m),
          "no member was resumed from its last frame:\n" + p.stdout)
    for i in m:
        same, diff = h5_same(os.path.join(d, "members", f"{i:04d}.h5"),
                             rerun_alone(m[i]["command"], tmp, tmp))
        check(same, f"member {i} after the kill differs from its run alone:\n{diff}")
    print("killed_rank: ok")


def test_decay(tmp):
    k, n0, replicas, bound = 0.5, 200, 24, 4.0
    for seed in (11, 12):
        d = os.path.join(tmp, f"decay{seed}")
        run([NESTSIM, "ensemble", DECAY, "-o", d, "--replicas", str(replicas),
             "--set", f"simulation.seed={seed}", "--threads", "1"])
        with h5py.File(os.path.join(d, "ensemble.h5"), "r") as f:
            groups = list(f["members"].values())
            check(len(groups) == replicas, f"{len(groups)} members recorded")
            t = groups[0]["time"][()]
            a = groups[0].attrs["kinds"].tolist().index("A")
            counts = np.array([g["kind_count"][:, a] for g in groups], dtype=float)
        p = np.exp(-k * t)
        se = np.sqrt(n0 * p * (1 - p) / replicas)
        z = (counts.mean(axis=0)[1:] - n0 * p[1:]) / se[1:]
        check(np.all(np.abs(z) <= bound),
              f"seed {seed}: ensemble mean off exp(-kt) by z = {np.round(z, 2)} (bound {bound})")
        check(len(set(map(tuple, counts))) == replicas, "replicas not independent")
        print(f"decay seed {seed}: max |z| = {np.abs(z).max():.2f} over {len(z)} frames")


def test_reader(tmp):
    """ensemble.h5 read while the ensemble runs, held open for a while (HDF5's lock makes
    rank 0 wait): every member is recorded in the end. No --set or --scan here."""
    d = os.path.join(tmp, "read")
    # Members of 4,000 steps (~0.3-1 s each): the ensemble runs for seconds, so the
    # reader meets it midway on a fast machine too.
    job = subprocess.Popen([NESTSIM, "ensemble", DECAY, "-o", d, "--replicas", "30",
                            "--steps", "4000", "--threads", "1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, env=dict(ENV, HDF5_USE_FILE_LOCKING="TRUE"))
    index, seen = os.path.join(d, "ensemble.h5"), None
    deadline = time.time() + 120
    while seen is None and time.time() < deadline and job.poll() is None:
        try:
            with h5py.File(index, "r", locking=True) as f:
                if len(f["members"]) > 0:
                    seen = len(f["members"])
                    time.sleep(3)  # hold the file while members end
        except (OSError, KeyError):
            time.sleep(0.05)
    out, err = job.communicate(timeout=300)
    check(job.returncode == 0, f"exit {job.returncode}\n{out}\n{err}")
    check(seen is not None and seen < 30, "the index could not be read while members ran")
    check("not recorded" not in err, err)
    m = members(d)
    check(sorted(m) == list(range(30)) and all(m[i]["status"] == "done" for i in m),
          f"recorded: {sorted(m)}")
    check(all(len(m[i]["parameters"]) == 0 for i in m), "parameters of a plain replica")
    print(f"reader: ok (read {seen} members while running)")


def wait_for(what, deadline, job):
    while time.time() < deadline and job.poll() is None:
        if what():
            return True
        time.sleep(0.05)
    return what()


def test_busy(tmp):
    # Two ensembles into one directory: the second waits for the first, then finds
    # every member done. 3 members of 3,000 steps (~0.6-2 s each, ~5 s under ASan): the
    # first is still running when the second starts, and ends well inside the wait.
    d = os.path.join(tmp, "twice")
    args = [NESTSIM, "ensemble", DECAY, "-o", d, "--steps", "3000", "--replicas", "3",
            "--set", "reactions.decay.rate=0.01", "--threads", "1", "--jobs", "1"]
    first = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=ENV)
    check(wait_for(lambda: frames_in(os.path.join(d, "members", "0000.h5")) >= 3,
                   time.time() + 120, first) and first.poll() is None,
          "the first ensemble ended before a second could meet it")
    second = run(args)
    out1, err1 = first.communicate(timeout=300)
    check(first.returncode == 0, f"first ensemble: exit {first.returncode}\n{out1}\n{err1}")
    check("ensemble.h5 is in use by another process" in second.stderr,
          "the second ensemble did not wait for the first:\n" + second.stderr)
    check("0 to run" in second.stdout and "3 of 3 members done" in second.stdout,
          "the second ensemble ran members again:\n" + second.stdout)
    m = members(d)
    check(sorted(m) == [0, 1, 2] and all(m[i]["status"] == "done" for i in m), f"recorded: {m}")
    for i in m:
        same, diff = h5_same(os.path.join(d, "members", f"{i:04d}.h5"),
                             rerun_alone(m[i]["command"], tmp, tmp))
        check(same, f"member {i} differs from its run alone:\n{diff}")

    # A member locked by another process (as a rank that outlives its mpirun holds it):
    # not touched while the lock is held, run once it goes.
    d = os.path.join(tmp, "held")
    os.makedirs(os.path.join(d, "members"))
    lock = os.open(os.path.join(d, "members", ".lock"), os.O_RDWR | os.O_CREAT)
    fcntl.lockf(lock, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, 1)  # byte 1 + 0: member 0
    args = [NESTSIM, "ensemble", DECAY, "-o", d, "--steps", "2000", "--replicas", "2",
            "--threads", "1", "--jobs", "1"]
    job = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           env=ENV)
    member0, member1 = (os.path.join(d, "members", f"000{i}.h5") for i in (0, 1))
    # The slot waits on member 0; nothing of it is written meanwhile.
    time.sleep(2)
    check(job.poll() is None, "the ensemble ended while member 0 was locked by another process")
    check(not os.path.exists(member0), "member 0 written while another process held its lock")
    os.close(lock)  # the holder ends
    out, err = job.communicate(timeout=300)
    check(job.returncode == 0, f"exit {job.returncode}\n{out}\n{err}")
    check(f"{member0} is in use by another process" in err,
          "no word of the member held by another process:\n" + err)
    m = members(d)
    check(sorted(m) == [0, 1] and all(m[i]["status"] == "done" for i in m), f"recorded: {m}")
    for i in m:
        same, diff = h5_same(os.path.join(d, "members", f"{i:04d}.h5"),
                             rerun_alone(m[i]["command"], tmp, tmp))
        check(same, f"member {i} differs from its run alone:\n{diff}")
    check(os.path.exists(member1), "member 1 not written")
    print("busy: ok")


TESTS = {"reader": test_reader, "busy": test_busy, "set_flag": test_set_flag, "mpi_scan": test_mpi_scan, "killed_rank": test_killed_rank,
         "decay": test_decay}

if __name__ == "__main__":
    chosen = sys.argv[3:] or list(TESTS)
    with tempfile.TemporaryDirectory(prefix="nestsim_ensemble_") as tmp:
        for name in chosen:
            sub = os.path.join(tmp, name)
            os.makedirs(sub)
            TESTS[name](sub)
