"""A panic inside the engine reaches the user as one ``internal error:`` line naming the
scenario and how to report it, exit code 3, no output directory: tested through the debug
fault hook ``SHAREBUF_DEBUG_FAULT`` (read once when the engine is built; release builds have
it, so CI exercises it). docs/reliability.md."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import sharebuf
from sharebuf.errors import InternalError

SCENARIO = '''name = "faulty"
max_ms = 2
[topology]
kind = "star"
hosts = 4
[switch]
buffer_bytes = 200000
[[workload]]
kind = "flows"
flows = [{ src = 0, dst = 1, size_bytes = 10000, start_s = 0 }]
'''


def _cli(tmp_path, fault, *args):
    env = {**os.environ, "SHAREBUF_DEBUG_FAULT": fault, "RUST_BACKTRACE": "1"}  # a global RUST_BACKTRACE changes nothing
    env.pop("SHAREBUF_DEBUG_BACKTRACE", None)
    return subprocess.run([sys.executable, "-m", "sharebuf", *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)


def _one_internal_line(stderr: str) -> str:
    lines = [l for l in stderr.splitlines() if l.strip()]
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr and "panicked at" not in stderr and "stack backtrace" not in stderr
    line = lines[0]
    assert line.startswith("internal error: the engine failed running scenario 'faulty' (seed 1): engine panicked: SHAREBUF_DEBUG_FAULT=")
    assert "This is a bug in sharebuf, not in the scenario: please report it on the sharebuf issue tracker, attaching " in line
    return line


@pytest.mark.parametrize("fault", ["panic_at_build", "panic_in_run"])
def test_panic_is_one_internal_error_line_exit_3_nothing_written(tmp_path, fault):
    (tmp_path / "s.toml").write_text(SCENARIO)
    r = _cli(tmp_path, fault, "run", "s.toml", "--out", "out")
    assert r.returncode == 3
    line = _one_internal_line(r.stderr)
    assert f"SHAREBUF_DEBUG_FAULT={fault}: deliberate panic" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.toml"], "no output directory, no temporary one"
    # The scenario to attach is saved outside --out, and it runs as it was.
    attach = line.split("attaching ")[1].split(" (the scenario as resolved)")[0]
    assert attach.endswith("scenario.toml") and not attach.startswith(str(tmp_path))
    res = sharebuf.run(attach, quiet=True)
    assert res.summary["flows"]["finished"] == 1


def test_panic_through_the_python_api(tmp_path, monkeypatch):
    (tmp_path / "s.toml").write_text(SCENARIO)
    monkeypatch.setenv("SHAREBUF_DEBUG_FAULT", "panic_at_build")
    with pytest.raises(InternalError, match=r"scenario 'faulty' \(seed 1\): engine panicked: SHAREBUF_DEBUG_FAULT=panic_at_build"):
        sharebuf.run(tmp_path / "s.toml", out=tmp_path / "out", quiet=True)
    assert not (tmp_path / "out").exists()
    monkeypatch.delenv("SHAREBUF_DEBUG_FAULT")
    assert sharebuf.run(tmp_path / "s.toml", quiet=True).summary["flows"]["finished"] == 1  # the engine is usable after a panic


def test_panic_in_a_sweep_worker(tmp_path):
    """Worker processes: the error crosses the process pool as the same one line, exit 3."""
    (tmp_path / "s.toml").write_text(SCENARIO)
    r = _cli(tmp_path, "panic_in_run", "sweep", "s.toml", "--seeds", "1,2", "--jobs", "2", "--out", "sw", "--quiet")
    assert r.returncode == 3
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    assert len(lines) == 1 and lines[0].startswith("internal error: the engine failed running scenario 'faulty' (seed "), r.stderr
    assert not list(tmp_path.glob("sw/run-*")), "no run directory for a run that panicked"


def test_an_unknown_fault_value_changes_nothing(tmp_path):
    (tmp_path / "s.toml").write_text(SCENARIO)
    r = _cli(tmp_path, "nothing", "run", "s.toml", "--out", "out", "--quiet")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "out" / "summary.json").is_file()


def test_an_unexpected_python_exception_is_one_line_exit_3(monkeypatch, capsys, tmp_path):
    """A bug outside the engine (here: a command that raises) is one `internal error:` line and
    exit code 3 too; SHAREBUF_DEBUG_TRACEBACK=1 shows the traceback instead."""
    import sharebuf.cli as cli

    def broken(args):
        raise KeyError("boom")

    monkeypatch.setattr(cli, "cmd_list", broken)
    monkeypatch.delenv("SHAREBUF_DEBUG_TRACEBACK", raising=False)
    assert cli.main(["list"]) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("internal error: KeyError: 'boom' (running `sharebuf list`). This is a bug in sharebuf")
    monkeypatch.setenv("SHAREBUF_DEBUG_TRACEBACK", "1")
    with pytest.raises(KeyError):
        cli.main(["list"])
