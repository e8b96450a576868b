#!/usr/bin/python3
"""Runs the README as a user types it after cloning: one folder, in the order written.

    test_readme.py SOURCE_DIR BINARY_DIR

The folder is laid out like the clone after `./build.sh run` (models/, examples/, tools/
link to the real ones, build/cpu/ to BINARY_DIR, nothing else), and nothing is put on
PATH or PYTHONPATH but what the README's own `export` lines put there. In the order they
appear in SOURCE_DIR/README.md:
  - ```sh lines run through bash in that folder, each in the environment the `export`
    lines before it made. `export` lines are applied (bash evaluates them; `$PWD` is the
    folder). `./build.sh run` is stood in for by its job (`./build/cpu/nestsim run -o out.h5 --force`
    and `./build/cpu/nestsim analyze out.h5`, with 2,000 of the default model's 60,000 steps, the
    same file for the lines after it); `./build.sh test` (this suite), `./build.sh cuda`,
    `./build/cuda/` lines (a GPU), `git`, `cd`, `sudo` and `apt-get` (a clone, the
    network) are not run. `cmake --install build/cpu --prefix P` installs into a
    temporary prefix, and P/bin/nestsim must then exist. A line whose comment says
    `prints X` must print X.
  - ```yaml blocks that are whole models (a top-level `nestsim:` key) are saved under the
    name their first line gives (`# first.yaml: ...`), else as model-K.yaml; a model that
    no command of the README runs is run at the end. Fragments (e.g. a `reactions:` list)
    are inserted into the last whole model before them (replacing a key the model has)
    and that model is run.
  - ```python blocks run with /usr/bin/python3, as saved files, in the same folder and
    environment.
Every command must exit with 0. Exit code 0: all passed; 1: a failure; 77 (ctest's
SKIP_RETURN_CODE): nothing could run.

--python PY (CMake passes NESTSIM_TEST_PYTHON where it is not /usr/bin/python3: a machine
without Debian's Python, such as a GPU host's own python3 with its numpy): the README's
`/usr/bin/python3` commands and Python blocks run with PY, each saying so; and where
/usr/bin/python3 there has no matplotlib, the `--plot` lines (nestsim's plots run
/usr/bin/python3) are skipped, saying so. On Debian (no --python) every line runs.

Only the standard library (Debian's /usr/bin/python3).
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

TIMEOUT_S = 300
# `./build.sh run`'s job, shortened: the default model's first 2,000 steps.
BUILD_SH_RUN = ("./build/cpu/nestsim run -o out.h5 --force --steps 2000 && "
                "./build/cpu/nestsim analyze out.h5")
NOT_RUN = ("./build.sh test", "./build.sh cuda", "./build.sh sanitize", "./build/cuda/",
           "git ", "cd ", "sudo ", "apt-get ")


def blocks(text):
    """The fenced code blocks of a Markdown text: (language, body) in order."""
    return [(m.group(1), m.group(2))
            for m in re.finditer(r"^```(\w*)\n(.*?)^```", text, re.S | re.M)]


def top_level_keys(yaml_text):
    return [m.group(1) for m in re.finditer(r"^([A-Za-z_][\w-]*):", yaml_text, re.M)]


def sections(yaml_text):
    """A YAML text as [(key or None, lines)]: each top-level key with the lines under it;
    None for the comments and blank lines before the first key."""
    out = [(None, [])]
    for line in yaml_text.splitlines():
        m = re.match(r"^([A-Za-z_][\w-]*):", line)
        if m:
            out.append((m.group(1), [line]))
        else:
            out[-1][1].append(line)
    return out


def insert(model, fragment):
    """The model with the fragment's top-level keys put in (replacing the model's own)."""
    parts = sections(model)
    for key, lines in sections(fragment):
        if key is None:
            continue
        for i, (k, _) in enumerate(parts):
            if k == key:
                parts[i] = (key, lines)
                break
        else:
            parts.append((key, lines))
    return "\n".join(line for _, lines in parts for line in lines) + "\n"


class Runner:
    def __init__(self, work, env):
        self.work, self.env = work, env
        self.passed, self.failed, self.skipped = [], [], []

    def bash(self, command):
        """(exit code or "timeout", output) of command run by bash in the folder."""
        try:
            p = subprocess.run(["/bin/bash", "-c", command], cwd=self.work, env=self.env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               timeout=TIMEOUT_S)
            return p.returncode, p.stdout.decode(errors="replace")
        except subprocess.TimeoutExpired as e:
            return "timeout", (e.stdout or b"").decode(errors="replace")

    def run(self, shown, command=None, expect=None, check=None):
        """Runs command (default: shown); check(output) may name a further problem."""
        start = time.monotonic()
        command = command or shown
        if command.startswith("mpirun") and "ASAN_OPTIONS" in self.env:
            # Under the sanitize preset, ranks of mpirun run without LeakSanitizer: Open
            # MPI keeps its own allocations to the end (as tests/ensemble does).
            command = ("ASAN_OPTIONS=\"$ASAN_OPTIONS:detect_leaks=0\" " + command)
        rc, out = self.bash(command)
        seconds = time.monotonic() - start
        problem = None
        if rc != 0:
            problem = f"exit code {rc}"
        elif expect is not None and expect not in out:
            problem = f"did not print {expect}"
        elif check is not None:
            problem = check(out)
        last = out.strip().splitlines()[-1] if out.strip() else ""
        if problem:
            self.failed.append(shown)
            print(f"FAIL ({problem}, {seconds:.1f} s): {shown}\n" +
                  "".join("    " + line + "\n" for line in out.splitlines()[-30:]))
        else:
            self.passed.append(shown)
            print(f"ok   ({seconds:.1f} s): {shown}\n    -> {last}")

    def export(self, line):
        """Applies an `export` line to the environment of the lines after it."""
        rc, out = self.bash(line + "\nenv -0")
        if rc != 0:
            self.failed.append(line)
            print(f"FAIL (exit code {rc}): {line}\n{out}")
            return
        self.env = dict(item.split("=", 1) for item in out.split("\0") if "=" in item)
        self.passed.append(line)
        print(f"ok   (applied): {line}")

    def skip(self, line, why):
        self.skipped.append(line)
        print(f"skip ({why}): {line}")


def install_check(prefix):
    def check(_):
        if not os.access(os.path.join(prefix, "bin", "nestsim"), os.X_OK):
            return f"no {prefix}/bin/nestsim"
        return None
    return check


def main():
    args = sys.argv[1:]
    # --without-python: CMake says this build has no Python module (the sanitize preset,
    # whose runtime a plain Python cannot load); the README's Python lines are then
    # skipped, saying so. Without it a missing module fails them.
    without_python = "--without-python" in args
    args = [a for a in args if a != "--without-python"]
    python = "/usr/bin/python3"
    if "--python" in args:
        i = args.index("--python")
        python = os.path.abspath(args[i + 1])
        del args[i:i + 2]
    # nestsim's --plot runs Debian's python3, which needs matplotlib (README, "Plots").
    plots_run = python == "/usr/bin/python3" or subprocess.run(
        ["/usr/bin/python3", "-c", "import matplotlib"], stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL).returncode == 0
    if len(args) != 2:
        sys.exit("usage: test_readme.py SOURCE_DIR BINARY_DIR [--without-python] [--python PY]")
    source, binary = (os.path.abspath(a) for a in args)
    with open(os.path.join(source, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    if not os.access(os.path.join(binary, "nestsim"), os.X_OK):
        sys.exit(f"test_readme: {binary}/nestsim is not built")

    work = tempfile.mkdtemp(prefix="nestsim-readme-")
    try:
        for name in ("models", "examples", "tools"):
            os.symlink(os.path.join(source, name), os.path.join(work, name))
        os.mkdir(os.path.join(work, "build"))
        os.symlink(binary, os.path.join(work, "build", "cpu"))
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
        # The PATH of a fresh login, without any nestsim on it.
        env["PATH"] = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
        env["PWD"] = work
        # As build.sh runs the tests: idle OpenMP threads sleep instead of spinning.
        env.setdefault("OMP_WAIT_POLICY", "passive")
        env["MPLBACKEND"] = "Agg"
        runner = Runner(work, env)

        commands = []  # every README command line, for the models' "is it run?" check
        for language, body in blocks(readme):
            if language == "sh":
                commands += [line.strip() for line in body.splitlines()]
        pending = []   # whole models that no README command runs: run at the end
        last_model = None
        fragments = snippets = 0
        for language, body in blocks(readme):
            if language == "yaml":
                if "nestsim" in top_level_keys(body):
                    first = body.splitlines()[0]
                    m = re.match(r"#\s*([\w.-]+\.yaml)\b", first)
                    name = m.group(1) if m else f"model-{len(pending) + 1}.yaml"
                    with open(os.path.join(work, name), "w", encoding="utf-8") as f:
                        f.write(body)
                    last_model = body
                    if not any(re.search(r"\brun\b.*\b" + re.escape(name) + r"\b", c)
                               for c in commands):
                        pending.append(name)
                elif last_model is None:
                    runner.skip("a YAML fragment with keys " + ", ".join(top_level_keys(body)),
                                "no model before it")
                else:
                    fragments += 1
                    name = f"fragment-{fragments}.yaml"
                    with open(os.path.join(work, name), "w", encoding="utf-8") as f:
                        f.write(insert(last_model, body))
                    runner.run(f"(the fragment with keys {', '.join(top_level_keys(body))} "
                               f"in the model before it)",
                               f"nestsim run {name} -o {name[:-5]}.h5")
            elif language == "python" and without_python:
                runner.skip(f"(a Python block: {body.splitlines()[0]} ...)",
                            "this build has no Python module")
            elif language == "python":
                snippets += 1
                name = f"snippet-{snippets}.py"
                with open(os.path.join(work, name), "w", encoding="utf-8") as f:
                    f.write(body)
                runner.run(f"(the Python block {snippets}: {body.splitlines()[0]} ...)",
                           f"{python} {name}")
            elif language == "sh":
                for line in body.splitlines():
                    line = line.strip()
                    if not line or line.startswith("#"):
                        continue
                    m = re.match(r"cmake --install (\S+) --prefix (\S+)", line)
                    if line.startswith("./build.sh run") and line.split("#")[0].strip() == "./build.sh run":
                        runner.run(line, BUILD_SH_RUN)
                    elif line.startswith("export "):
                        runner.export(line)
                    elif m:
                        prefix = os.path.join(work, ".prefix")
                        runner.run(line, f"cmake --install {m.group(1)} --prefix {prefix}",
                                   check=install_check(prefix))
                    elif line.startswith(NOT_RUN):
                        runner.skip(line, "installs, builds, tests or fetches")
                    elif without_python and re.match(r"(/usr/bin/)?python3\b", line):
                        runner.skip(line, "this build has no Python module")
                    elif not plots_run and re.search(r"\s--plot\b", line):
                        runner.skip(line, "/usr/bin/python3 here has no matplotlib")
                    elif python != "/usr/bin/python3" and line.startswith("/usr/bin/python3 "):
                        m = re.search(r"#.*\bprints (\S+)", line)
                        runner.run(line + f"   [with {python}]",
                                   python + line[len("/usr/bin/python3"):],
                                   expect=m.group(1) if m else None)
                    else:
                        m = re.search(r"#.*\bprints (\S+)", line)
                        runner.run(line, expect=m.group(1) if m else None)
        for name in pending:
            runner.run(f"nestsim run {name} -o {name[:-5]}-check.h5")

        print(f"test_readme: {len(runner.passed)} passed, {len(runner.failed)} failed, "
              f"{len(runner.skipped)} skipped")
        if runner.failed:
            return 1
        return 0 if runner.passed else 77
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
