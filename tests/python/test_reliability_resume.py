"""Interrupted work loses nothing (must-show 3): real `sharebuf` processes killed part-way.

* `run`: SIGTERM or Ctrl-C (SIGINT) during the simulation leaves no output directory and no
  temporary one; a temporary directory left by a SIGKILL is removed by the next run into the
  same place.
* `sweep` and `repro` killed with SIGKILL after k of n runs finished, then started again with
  the same command into the same directory: only the n - k missing runs run (the k finished
  run directories are untouched: same files, same modification times), and the table holds
  each run exactly once with the same numbers as an uninterrupted sweep / repro.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

SCENARIO = '''name = "resume"
max_ms = 50
seed = 1
[topology]
kind = "star"
hosts = 8
[switch]
buffer_bytes = 300000
[transport]
cc = "dctcp"
[[workload]]
kind = "poisson"
cdf = "websearch"
load = 0.6
destinations = "all_to_all"
[output]
buffer_sample_us = 10
'''


def _start(args, cwd, **kw):
    return subprocess.Popen([sys.executable, "-m", "sharebuf", *args], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, **kw)


def _finished(runs_dir: Path) -> list:
    return sorted(p.parent.name for p in runs_dir.glob("run-*/summary.json"))


def _kill_after(proc, runs_dir: Path, k: int, timeout_s: float = 240) -> list:
    """SIGKILL ``proc`` as soon as ``k`` runs have finished; return the finished runs then."""
    t0 = time.time()
    while len(_finished(runs_dir)) < k:
        assert proc.poll() is None, f"finished before being killed: {proc.communicate()}"
        assert time.time() - t0 < timeout_s
        time.sleep(0.02)
    proc.kill()
    proc.wait()
    return _finished(runs_dir)


def _snapshot(runs_dir: Path, names) -> dict:
    return {str(f.relative_to(runs_dir)): f.stat().st_mtime_ns for n in names for f in (runs_dir / n).rglob("*")}


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


NUMBERS = ["flows", "flows_finished", "drops", "buffer_mean_bytes", "buffer_p99_bytes", "events", "sim_s"]


def test_sweep_killed_after_k_of_n_resumes_without_rerun_or_duplicate(tmp_path):
    (tmp_path / "s.toml").write_text(SCENARIO)
    n = 6
    cmd = ["sweep", "s.toml", "--seeds", ",".join(map(str, range(1, n + 1))), "--grid", "workload[0].load=0.6", "--jobs", "1", "--out", "sw"]
    p = _start(cmd, tmp_path)
    done = _kill_after(p, tmp_path / "sw", 3)
    k = len(done)
    assert 3 <= k < n
    before = _snapshot(tmp_path / "sw", done)
    assert not (tmp_path / "sw" / "sweep.parquet").exists()
    # A temporary directory as a SIGKILL during a write leaves it: removed when started again.
    stale = tmp_path / "sw" / f".run-0123456789ab.partial-{_dead_pid()}-x1y2"
    stale.mkdir()
    (stale / "flows.parquet").write_bytes(b"half")

    r = subprocess.run([sys.executable, "-m", "sharebuf", *cmd], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert f"sweep: {n} runs ({n - k} ran, {k} done before)" in r.stdout
    assert _snapshot(tmp_path / "sw", done) == before, "finished runs untouched"
    assert not stale.exists()
    assert len(_finished(tmp_path / "sw")) == n and not list((tmp_path / "sw").glob(".*partial*"))
    resumed = pd.read_parquet(tmp_path / "sw" / "sweep.parquet")

    # The same sweep, uninterrupted, in-process.
    from sharebuf.sweep import sweep

    ref = sweep(str(tmp_path / "s.toml"), {"workload[0].load": [0.6]}, seeds=list(range(1, n + 1)), out=tmp_path / "ref", jobs=1)
    assert len(resumed) == n and resumed.run_dir.is_unique and sorted(resumed.seed) == list(range(1, n + 1))
    cols = ["seed", "run_dir", *NUMBERS]
    pd.testing.assert_frame_equal(resumed[cols].sort_values("seed").reset_index(drop=True), ref[cols].sort_values("seed").reset_index(drop=True))


def test_repro_killed_after_k_of_n_resumes_without_rerun_or_duplicate(tmp_path):
    cmd = ["repro", "fab-fig3", "--scale", "tiny", "--jobs", "1", "--quiet", "--set", "topology.link_gbps=0.01"]
    p = _start([*cmd, "--out", "r"], tmp_path)
    done = _kill_after(p, tmp_path / "r" / "runs", 2)
    k = len(done)
    before = _snapshot(tmp_path / "r" / "runs", done)
    r = subprocess.run([sys.executable, "-m", "sharebuf", *cmd, "--out", "r"], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert "6 runs (%d already done)" % k in r.stderr
    assert _snapshot(tmp_path / "r" / "runs", done) == before
    ref = subprocess.run([sys.executable, "-m", "sharebuf", *cmd, "--out", "ref"], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert ref.returncode == 0, ref.stderr
    a, b = (pd.read_parquet(tmp_path / d / "points.parquet").drop(columns=["wall_s", "cpu_s"]) for d in ("r", "ref"))
    assert len(a) == len(b) and not a.duplicated(["figure", "series", "x", "seed"]).any()
    key = ["figure", "series", "x", "seed"]
    pd.testing.assert_frame_equal(a.sort_values(key).reset_index(drop=True), b.sort_values(key).reset_index(drop=True))
    assert (tmp_path / "r" / "claims.json").read_text() == (tmp_path / "ref" / "claims.json").read_text()


# ~36 s of this machine at one core (3 s of simulated time took 3.6 s, too close to the 4 s the tests
# wait before they interrupt it); the tests stop it long before the end
LONG = SCENARIO.replace("max_ms = 50", "max_ms = 30000")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_run_interrupted_leaves_no_result_directory(tmp_path, sig):
    (tmp_path / "s.toml").write_text(LONG)
    p = _start(["run", "s.toml", "--out", "out", "--quiet"], tmp_path)
    time.sleep(4.0)  # well inside the simulation (it takes much longer)
    assert p.poll() is None
    p.send_signal(sig)
    _, err = p.communicate(timeout=120)
    assert p.returncode == 130
    assert err.strip() in ("terminated", "interrupted"), err
    assert sorted(x.name for x in tmp_path.iterdir()) == ["s.toml"]


def test_run_cleans_a_stale_temporary_directory(tmp_path):
    """SIGKILL during the write leaves `.out.partial-PID-*` (no cleanup can run): the next run
    into `out` removes it; one whose process is alive (a concurrent writer) is left alone."""
    import sharebuf

    (tmp_path / "s.toml").write_text(SCENARIO)
    stale = tmp_path / f".out.partial-{_dead_pid()}-abcd"
    stale.mkdir()
    (stale / "summary.json").write_text("{")
    live = tmp_path / f".out.partial-{os.getpid()}-efgh"
    live.mkdir()
    sharebuf.run(tmp_path / "s.toml", out=tmp_path / "out", quiet=True)
    assert not stale.exists() and live.exists()
    assert (tmp_path / "out" / "summary.json").is_file()


def test_run_killed_leaves_nothing(tmp_path):
    (tmp_path / "s.toml").write_text(LONG)
    p = _start(["run", "s.toml", "--out", "out", "--quiet"], tmp_path)
    time.sleep(4.0)
    p.kill()
    p.wait()
    assert sorted(x.name for x in tmp_path.iterdir()) == ["s.toml"]
