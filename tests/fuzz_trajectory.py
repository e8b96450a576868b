#!/usr/bin/python3
"""Hostile trajectories: every dataset of a real trajectory mutated, each mutant read.

Usage: fuzz_trajectory.py NESTSIM WORKDIR [--view] [--stride N]

A small model (a cell, vesicles inside, receptors on its membrane, ligands outside, two
reaction rules) is run by NESTSIM to a trajectory of a few frames. Then every dataset in
it (found by walking the file, so a dataset added to the layout is fuzzed too) is
mutated with h5py in turn: its shape (more or fewer slots or rows, an extra or missing
column, one rank more or less, a scalar, empty), its type (integers for floats and back,
strings, narrow integers), its values (NaN, infinities, huge, negative, out of every
table), its attributes (removed, or of another shape or type), or it is deleted. The
attributes of the groups (box boundary, creator) are mutated too. On each mutant
`nestsim analyze`, `nestsim export --format xyz`, `nestsim run --resume` and, with
--view, the server of `nestsim view` (/api/meta and /api/frame/0, the server started
once and the file under it replaced) must end with exit 0 or 2 (the server: answer 200
or an error and stay up); a signal, another exit code or a hang (30 s) fails the test.
A mutant that is accepted must also have been accepted whole: exit 0 of analyze and
export on the unmutated file is checked first, with the live bodies export lists.

--stride N tries every N-th mutant only (the sanitizer build: each process is 5-10x
slower there). Exit 0 when every mutant held, 1 otherwise.
"""
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

try:
    import h5py
    import numpy as np
except ImportError as e:  # the CI machine has Debian's python3-h5py: a missing one fails
    print(f"FAIL: h5py/numpy are not importable ({e}); apt-get install python3-h5py")
    sys.exit(1)

MODEL = """\
nestsim: 1
units: {length: nm, time: us}
box: {size: [300, 300, 300], boundary: periodic}
simulation:
  dt: 0.002
  steps: 20
  seed: 7
  output: {every: 10, file: out.h5}
medium: {temperature: 310, viscosity: 0.003}
compartments:
  cell:    {radius: 120, thickness: 8, diffusion: 0}
  vesicle: {radius: 30, thickness: 6, diffusion: 20}
species:
  ligand:   {radius: 2, diffusion: 45}
  receptor: {radius: 3, diffusion: 1, membrane: true}
  complex:  {radius: 3.5, diffusion: 0.5, membrane: true}
interactions: {repulsion: 0.5}
place:
  - {compartment: cell, at: [150, 150, 150]}
  - {compartment: vesicle, count: 3, in: cell}
  - {species: receptor, count: 20, on: cell}
  - {species: complex, count: 4, on: vesicle}
  - {species: ligand, count: 30, outside: cell}
reactions:
  - {name: binding, rule: "ligand outside cell + receptor on cell -> complex on cell", rate: 20, radius: 12}
  - {name: unbinding, rule: "complex on cell -> ligand outside cell + receptor on cell", rate: 0.5}
"""

TIMEOUT = 30
WORKERS = 2  # the CI machine's cores
STEPS = 20


def datasets(path):
    """Every dataset (each object once) and every group holding attributes."""
    found, groups = [], []
    with h5py.File(path, "r") as f:
        def visit(name, obj):
            if isinstance(obj, h5py.Dataset):
                found.append("/" + name)
            elif len(obj.attrs):
                groups.append("/" + name)
        f.visititems(visit)
    return found, groups


def replace(f, name, data, dtype=None):
    """Recreates dataset `name` (this link only: the others of a hard link keep the old)."""
    attrs = dict(f[name].attrs) if name in f else {}
    del f[name]
    if dtype is None:
        d = f.create_dataset(name, data=data)
    else:
        d = f.create_dataset(name, data=data, dtype=dtype)
    for k, v in attrs.items():
        d.attrs[k] = v


def grown(a, axis, by):
    shape = list(a.shape)
    shape[axis] = by
    fill = np.full(shape, 7, dtype=a.dtype) if a.dtype.kind in "iuf" else np.zeros(shape, a.dtype)
    return np.concatenate([a, fill], axis=axis)


def dataset_mutations(name, a):
    """(label, function of the open file) for dataset `name` holding array `a`."""
    m = []
    numeric = a.dtype.kind in "iuf"
    m.append(("deleted", lambda f: f.__delitem__(name)))
    m.append(("scalar", lambda f: replace(f, name, a.flat[0] if a.size else 0)))
    m.append(("empty", lambda f: replace(f, name, a[:0] if a.ndim else np.zeros(0, a.dtype))))
    m.append(("one more rank", lambda f: replace(f, name, np.stack([a, a], axis=-1))))
    if a.ndim >= 1:
        m.append(("rank one less", lambda f: replace(f, name, a.reshape(-1)[: max(1, a.size // 2)]
                                                     if a.ndim == 1 else a[..., 0])))
        m.append(("more rows", lambda f: replace(f, name, grown(a, 0, 5))))
        if a.shape[0] > 1:
            m.append(("fewer rows", lambda f: replace(f, name, a[:1])))
    if a.ndim >= 2:
        m.append(("854 more slots", lambda f: replace(f, name, grown(a, 1, 854))))
        if a.shape[1] > 1:
            m.append(("fewer slots", lambda f: replace(f, name, a[:, : a.shape[1] // 2])))
        m.append(("extra column", lambda f: replace(f, name, grown(a, a.ndim - 1, 1))))
        if a.shape[-1] > 1:
            m.append(("missing column", lambda f: replace(f, name, a[..., :-1])))
    if numeric:
        if a.dtype.kind == "f":
            m.append(("as integers", lambda f: replace(f, name, a.astype(np.int64))))
            m.append(("NaN", lambda f: replace(f, name, np.full_like(a, np.nan))))
            m.append(("infinite", lambda f: replace(f, name, np.full_like(a, -np.inf))))
            m.append(("huge", lambda f: replace(f, name, np.full_like(a, 1e300))))
            m.append(("negative", lambda f: replace(f, name, -np.abs(a) - 1)))
            m.append(("zero", lambda f: replace(f, name, np.zeros_like(a))))
        else:
            m.append(("as floats", lambda f: replace(f, name, a.astype(np.float64) + 0.5)))
            m.append(("narrow integers", lambda f: replace(f, name, a.astype(np.int8))))
            m.append(("unsigned", lambda f: replace(f, name, a.astype(np.uint64))))
            big = np.iinfo(a.dtype).max
            m.append(("largest", lambda f: replace(f, name, np.full_like(a, big))))
            m.append(("minus 5", lambda f: replace(f, name, np.full_like(a, -5))))
            m.append(("out of tables", lambda f: replace(f, name, np.full_like(a, 1000003))))
            if a.size > 1:  # a value copied from one slot or row into another
                m.append(("shuffled", lambda f: replace(f, name, np.roll(a, 1, axis=-1))))
        m.append(("as strings", lambda f: replace(f, name, np.full(a.shape, "x", dtype=object),
                                                   h5py.string_dtype())))
    else:
        m.append(("renamed", lambda f: replace(
            f, name, np.array([(x.decode() if isinstance(x, bytes) else str(x)) + "x"
                               for x in a.reshape(-1)], dtype=object).reshape(a.shape),
            h5py.string_dtype())))
        m.append(("as integers", lambda f: replace(f, name, np.zeros(a.shape, np.int64))))
        m.append(("fixed-length text", lambda f: replace(f, name, np.full(a.shape, b"xyz", "S3"))))
        m.append(("many strings", lambda f: replace(f, name, np.full(50, "y", dtype=object),
                                                    h5py.string_dtype())))
    if len(dict(attrs_of(name))):
        m.append(("attributes removed", lambda f: [f[name].attrs.__delitem__(k)
                                                   for k in list(f[name].attrs)]))
    return m


ATTRS = {}


def attrs_of(name):
    return ATTRS.get(name, {})


def group_mutations(name, attrs):
    m = [("attributes removed", lambda f: [f[name].attrs.__delitem__(k) for k in list(attrs)])]
    for k, v in attrs.items():
        m.append((f"attribute {k} as 5 strings",
                  lambda f, k=k: f[name].attrs.__setitem__(k, np.array(["periodic"] * 5, dtype=object))))
        m.append((f"attribute {k} as a number", lambda f, k=k: f[name].attrs.__setitem__(k, 3)))
        m.append((f"attribute {k} as one string",
                  lambda f, k=k: f[name].attrs.__setitem__(k, "periodic")))
    return m


def run(cmd):
    """(exit code or -signal, stderr tail); a hang is reported as 'hang'."""
    try:
        r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           timeout=TIMEOUT, text=True, errors="replace")
        return r.returncode, r.stderr[-400:]
    except subprocess.TimeoutExpired:
        return "hang", ""


def acceptable(code):
    return code in (0, 2)


class ViewServer:
    """`nestsim view` on one path, under which each mutant is put in turn."""

    def __init__(self, nestsim, path, base):
        self.path = path
        shutil.copyfile(base, path)
        # Its log goes to a file: a pipe nobody reads would fill and stop the server.
        self.log = open(path + ".log", "w")
        self.p = subprocess.Popen([nestsim, "view", path, "--port", "0"],
                                  stdout=subprocess.PIPE, stderr=self.log, text=True)
        self.url = None
        deadline = time.time() + TIMEOUT
        while time.time() < deadline and self.url is None:
            line = self.p.stdout.readline()
            if not line:
                break
            if "http://" in line:
                self.url = line[line.index("http://"):].split()[0].rstrip("/") + "/"
        if self.url is None:
            self.p.kill()
            self.log.close()
            with open(path + ".log") as log:
                raise SystemExit("FAIL: nestsim view did not start: " + log.read()[-600:])
        # The rest of its standard output is read away, so that it never fills.
        threading.Thread(target=self.p.stdout.read, daemon=True).start()
        self.requests = 0

    def check(self, mutant):
        """None when the server answered and is up, else what went wrong."""
        shutil.copyfile(mutant, self.path + ".tmp")
        os.replace(self.path + ".tmp", self.path)
        for route in ("api/meta", "api/frame/0?max=%d" % (1000 + self.requests)):
            self.requests += 1
            try:
                urllib.request.urlopen(self.url + route, timeout=TIMEOUT).read()
            except urllib.error.HTTPError as e:
                if e.code != 500:
                    return f"{route}: HTTP {e.code}"
            except Exception as e:  # no answer: the server died or hangs
                return f"{route}: {type(e).__name__} {e}"
            if self.p.poll() is not None:
                return f"{route}: the server ended with {self.p.returncode}"
        return None

    def stop(self):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGINT)
            try:
                self.p.wait(TIMEOUT)
            except subprocess.TimeoutExpired:
                self.p.kill()


def try_mutant(nestsim, work, base, index, label, mutate, servers):
    path = os.path.join(work, f"m{index}.h5")
    shutil.copyfile(base, path)
    try:
        with h5py.File(path, "r+") as f:
            mutate(f)
    except Exception as e:  # h5py cannot make this one: nothing to test
        os.remove(path)
        return index, label, None, f"not made ({type(e).__name__})"
    results = []
    results.append(("analyze",) + run([nestsim, "analyze", path, "--csv", path + ".analysis"]))
    results.append(("export",) + run([nestsim, "export", path, "--format", "xyz",
                                      "-o", path + ".xyz"]))
    resume_copy = path + ".resume.h5"
    shutil.copyfile(path, resume_copy)
    results.append(("resume",) + run([nestsim, "run", "--resume", resume_copy,
                                      "--steps", str(STEPS + 10)]))
    bad = [(what, code, err) for what, code, err in results if not acceptable(code)]
    if servers is not None:  # one server per worker: each takes a free one
        server = servers.get()
        try:
            problem = server.check(path)
        finally:
            servers.put(server)
        if problem:
            bad.append(("view", problem, ""))
    for name in (resume_copy, path + ".xyz"):
        if os.path.exists(name):
            os.remove(name)
    shutil.rmtree(path + ".analysis", ignore_errors=True)
    return index, label, path, bad


def special_files(nestsim, work):
    """A FIFO (no writer: an open would wait forever), /dev/zero and a loop of symbolic
    links as every input: exit 2 at once, the message naming what the file is."""
    fifo = os.path.join(work, "f.h5")
    os.mkfifo(fifo)
    loop_a, loop_b = os.path.join(work, "loop_a.h5"), os.path.join(work, "loop_b.h5")
    os.symlink(loop_a, loop_b)
    os.symlink(loop_b, loop_a)
    ok = True
    for target, kind in ((fifo, "FIFO"), ("/dev/zero", "character device"),
                         (loop_a, "symbolic links")):
        for cmd in (["analyze", target], ["export", target, "--format", "xyz", "-o", "-"],
                    ["view", target, "--port", "0"], ["run", "--resume", target, "--steps", "9"],
                    ["run", target, "-o", os.path.join(work, "x.h5")], ["pairs", target]):
            if cmd[0] == "view" and not VIEW:
                continue
            try:
                r = subprocess.run([nestsim] + cmd, capture_output=True, text=True, timeout=10)
                code, err = r.returncode, r.stderr
            except subprocess.TimeoutExpired:
                code, err = "hang", ""
            if code != 2 or kind.lower() not in err.lower():
                print(f"FAIL {kind} as input of {' '.join(cmd)}: {code} {err[-300:]}")
                ok = False
    if ok:
        print("ok   a FIFO, a device and a loop of links as every input: exit 2 at once, "
              "naming the kind of file")
    return ok


VIEW = False


def main():
    global VIEW
    args = sys.argv[1:]
    view = VIEW = "--view" in args
    stride = 1
    if "--stride" in args:
        stride = int(args[args.index("--stride") + 1])
    nestsim, workdir = args[0], args[1]
    os.makedirs(workdir, exist_ok=True)
    work = tempfile.mkdtemp(prefix="fuzz-", dir=workdir)
    model = os.path.join(work, "model.yaml")
    with open(model, "w") as out:
        out.write(MODEL)
    base = os.path.join(work, "base.h5")
    r = subprocess.run([nestsim, "run", model, "-o", base, "--steps", str(STEPS)],
                       capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        print("FAIL: the base run:", r.returncode, r.stderr[-800:])
        return 1
    # The unmutated file is read whole: the reader refuses nothing real.
    for cmd in (["analyze", base, "--csv", base + ".analysis"],
                ["export", base, "--format", "xyz", "-o", base + ".xyz"]):
        code, err = run([nestsim] + cmd)
        if code != 0:
            print("FAIL: the unmutated trajectory is refused:", cmd[0], code, err)
            return 1
    with open(base + ".xyz") as xyz:
        first = int(xyz.readline())
    with h5py.File(base, "r") as f:
        live = int((f["particles/bodies/id/value"][0] >= 0).sum())
    if first != live:
        print(f"FAIL: export lists {first} bodies in frame 0, the file holds {live}")
        return 1

    if not special_files(nestsim, work):
        return 1

    names, groups = datasets(base)
    mutants = []
    with h5py.File(base, "r") as f:
        for name in names:
            ATTRS[name] = dict(f[name].attrs)
            a = f[name][()]
            a = np.asarray(a) if not isinstance(a, (bytes, str)) else np.array([a], dtype=object)
            for label, mutate in dataset_mutations(name, a):
                mutants.append((f"{name}: {label}", mutate))
        for name in groups:
            for label, mutate in group_mutations(name, dict(f[name].attrs)):
                mutants.append((f"{name}: {label}", mutate))
    chosen = list(enumerate(mutants))[::stride]
    print(f"{len(names)} datasets, {len(groups)} groups with attributes: {len(mutants)} "
          f"mutants, {len(chosen)} tried (every {stride}){', view server too' if view else ''}",
          flush=True)
    if not view:
        print("NOTE: the view server is not fuzzed in this build (its page is not built, "
              "NESTSIM_BUILD_VIEWER=OFF); its frame reader is io::read_frame, fuzzed here "
              "through analyze and export", flush=True)
    servers = None
    if view:
        servers = queue.Queue()
        for k in range(WORKERS):
            servers.put(ViewServer(nestsim, os.path.join(work, f"viewed{k}.h5"), base))
    failures, refused, accepted, unmade = [], 0, 0, 0
    start = time.time()
    try:
        with ThreadPoolExecutor(max_workers=WORKERS) as pool:
            jobs = [pool.submit(try_mutant, nestsim, work, base, i, label, mutate, servers)
                    for i, (label, mutate) in chosen]
            for job in jobs:
                index, label, path, bad = job.result()
                if path is None:
                    unmade += 1
                    continue
                if bad:
                    failures.append((label, bad))
                    print(f"FAIL {label}: " + "; ".join(f"{w} -> {c} {e.strip()[-200:]}"
                                                       for w, c, e in bad), flush=True)
                else:
                    os.remove(path)
                    accepted += 1
    finally:
        while servers is not None and not servers.empty():
            servers.get().stop()
    print(f"{accepted} mutants held (exit 0 or 2 everywhere), {len(failures)} failed, "
          f"{unmade} not makeable by h5py; {time.time() - start:.1f} s")
    if failures:
        print(f"the failing mutants are kept in {work}")
        return 1
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
