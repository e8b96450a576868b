#!/usr/bin/python3
"""Runs the README's commands and models as written.

    test_readme.py SOURCE_DIR BINARY_DIR

Reads SOURCE_DIR/README.md and, in the order they appear:
  - ```yaml blocks that are whole models (a top-level `nestsim:` key) are saved under the
    name their first line gives (`# first.yaml: ...`), else as model-K.yaml; a model that
    no command of the README runs is run here (`nestsim run FILE -o FILE.h5`);
  - ```yaml blocks that are fragments (e.g. a `reactions:` list) are checked by inserting
    their top-level keys into the last whole model before them (replacing a key the model
    has) and running that model; a fragment with no model before it is reported, not run;
  - ```sh lines that start with `./build/cpu/` (the nestsim program and the examples'
    programs) or `nestsim ` run as written, through bash, in a temporary folder laid out
    like the repository (models/, examples/, tools/ and build/cpu/ are links to the real
    ones, `nestsim` is on PATH). A line whose comment says `prints X` must print X.
    Lines for the CUDA build (`./build/cuda/`) need a GPU and are skipped; other lines
    (`./build.sh`, `git`, `cd`) install, build or fetch and are not run here.
Every command must exit with 0. Exit code 0: all passed; 1: a failure; 77 (ctest's
SKIP_RETURN_CODE): nothing could run.

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


def has_matplotlib():
    """Whether `nestsim analyze --plot` can draw here (Debian's python3-matplotlib)."""
    return subprocess.run(["/usr/bin/python3", "-c", "import matplotlib"],
                          capture_output=True).returncode == 0


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

    def run(self, command, expect=None):
        start = time.monotonic()
        try:
            p = subprocess.run(["/bin/bash", "-c", command], cwd=self.work, env=self.env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               timeout=TIMEOUT_S)
            rc, out = p.returncode, p.stdout.decode(errors="replace")
        except subprocess.TimeoutExpired as e:
            rc, out = "timeout", (e.stdout or b"").decode(errors="replace")
        seconds = time.monotonic() - start
        problem = None
        if rc != 0:
            problem = f"exit code {rc}"
        elif expect is not None and expect not in out:
            problem = f"did not print {expect}"
        if problem:
            self.failed.append(command)
            print(f"FAIL ({problem}, {seconds:.1f} s): {command}\n" +
                  "".join("    " + line + "\n" for line in out.splitlines()[-30:]))
        else:
            self.passed.append(command)
            print(f"ok   ({seconds:.1f} s): {command}")


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: test_readme.py SOURCE_DIR BINARY_DIR")
    source, binary = (os.path.abspath(a) for a in sys.argv[1:3])
    with open(os.path.join(source, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    nestsim = os.path.join(binary, "nestsim")
    if not os.access(nestsim, os.X_OK):
        sys.exit(f"test_readme: {nestsim} is not built")

    work = tempfile.mkdtemp(prefix="nestsim-readme-")
    try:
        for name in ("models", "examples", "tools"):
            os.symlink(os.path.join(source, name), os.path.join(work, name))
        os.mkdir(os.path.join(work, "build"))
        os.symlink(binary, os.path.join(work, "build", "cpu"))
        bin_dir = os.path.join(work, ".bin")
        os.mkdir(bin_dir)
        os.symlink(nestsim, os.path.join(bin_dir, "nestsim"))
        env = dict(os.environ)
        env["PATH"] = bin_dir + os.pathsep + env.get("PATH", "/usr/bin:/bin")
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
        fragments = 0
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
                    runner.skipped.append("a YAML fragment before any whole model")
                    print("skip (no model before it): a YAML fragment with keys "
                          + ", ".join(top_level_keys(body)))
                else:
                    fragments += 1
                    name = f"fragment-{fragments}.yaml"
                    with open(os.path.join(work, name), "w", encoding="utf-8") as f:
                        f.write(insert(last_model, body))
                    print(f"     the fragment with keys {', '.join(top_level_keys(body))}"
                          f" inserted into the model before it: {name}")
                    runner.run(f"nestsim run {name} -o {name[:-5]}.h5")
            elif language == "sh":
                for line in body.splitlines():
                    line = line.strip()
                    if not line or line.startswith("#"):
                        continue
                    if line.startswith("./build/cuda/"):
                        runner.skipped.append(line)
                        print(f"skip (needs a GPU): {line}")
                    elif "--plot" in line and not has_matplotlib():
                        runner.skipped.append(line)
                        print(f"skip (/usr/bin/python3 has no matplotlib): {line}")
                    elif line.startswith("./build/cpu/") or line.startswith("nestsim "):
                        m = re.search(r"#.*\bprints (\S+)", line)
                        runner.run(line, m.group(1) if m else None)
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
