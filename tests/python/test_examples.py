"""The examples of examples/python run and give what they say (shortened here: the
suite runs them at a tenth of their length)."""
import csv
import os
import subprocess
import sys

from conftest import SOURCE_DIR

EXAMPLES = os.path.join(SOURCE_DIR, "examples", "python")


def run_example(name, *args, cwd):
    env = dict(os.environ, MPLBACKEND="Agg")
    result = subprocess.run([sys.executable, os.path.join(EXAMPLES, name), *args], cwd=cwd,
                            capture_output=True, text=True, env=env, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def test_receptor_scan(tmp_path):
    out = run_example("receptor_scan.py", "--steps", "200", "--every", "50", cwd=tmp_path)
    assert out.count("free receptors on the cell") == 9
    assert (tmp_path / "receptor_scan.png").stat().st_size > 10_000
    with open(tmp_path / "receptor_scan.csv") as f:
        rows = list(csv.DictReader(f))
    series = {(r["rate"], r["seed"]) for r in rows}
    assert len(series) == 9 and len(rows) == 9 * 5  # 3 rates x 3 seeds, steps 0..200 by 50
    for r in rows:
        n = int(r["free_receptors_on_cell"])
        assert 0 <= n <= 400 and (float(r["time_us"]) > 0 or n == 400)


def test_broadphase_random(tmp_path):
    out = run_example("broadphase_random.py", "--bodies", "20000", cwd=tmp_path)
    assert "against a direct test: same pairs" in out
    hsx, ssx = [int(line.split(":")[1].split()[0]) for line in out.splitlines()
                if "pairs in" in line]
    assert 0 < hsx < ssx
