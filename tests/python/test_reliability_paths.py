"""Scenario files are data: no key makes sharebuf write outside ``--out``, and no key runs code
(docs/reliability.md). Hostile names (``..``, absolute paths, NUL, very long names, shell and
Python snippets) go everywhere a name can go: the scenario name, workload names, sweep values,
--set values, plot columns, figure ids, input file references. Every file that appears must be
under the output directory."""

from __future__ import annotations

import json

import pytest

from sharebuf.cli import main

HOSTILE = ["../../escape", "../../../../../../tmp/sharebuf-escape", "/tmp/sharebuf-abs-escape", "a\u0000b", "x" * 5000,
           "$(touch pwned)", "`touch pwned`", "__import__('os').system('touch pwned')", "run-000000000000/../../up", ".", ".."]


def toml_str(s: str) -> str:
    return json.dumps(s)  # a JSON string is a valid TOML basic string (\\u0000 included)


def scenario(name: str = "ok", workload_name: str = "w") -> str:
    return f'''name = {toml_str(name)}
max_ms = 2
[topology]
kind = "star"
hosts = 4
[switch]
buffer_bytes = 200000
[[workload]]
kind = "flows"
name = {toml_str(workload_name)}
flows = [{{ src = 0, dst = 1, size_bytes = 3000, start_s = 0 }}]
'''


@pytest.fixture
def work(tmp_path, monkeypatch):
    """A working directory three levels below tmp_path, so that `..` escapes stay observable."""
    w = tmp_path / "a" / "b" / "work"
    w.mkdir(parents=True)
    monkeypatch.chdir(w)
    yield w
    assert not (w / "pwned").exists() and not (tmp_path / "pwned").exists()
    for p in ("/tmp/sharebuf-escape", "/tmp/sharebuf-abs-escape"):
        assert not __import__("os").path.exists(p)


def only_under(root, allowed):
    """Every file under ``root`` is one of / under one of ``allowed`` (relative paths)."""
    bad = [p for p in root.rglob("*") if p.is_file() and not any(p.relative_to(root).parts[:len(a.parts)] == a.parts for a in allowed)]
    assert not bad, bad


@pytest.mark.parametrize("name", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_scenario_and_workload_names_stay_data(work, tmp_path, name):
    from pathlib import Path

    (work / "s.toml").write_text(scenario(name, name))
    rc = main(["run", "s.toml", "--out", "out", "--quiet"])
    assert rc == 0
    s = json.loads((work / "out" / "summary.json").read_text())
    assert s["scenario"] == name and name in s["slowdown"]  # kept as data, verbatim
    only_under(tmp_path, [Path("a/b/work/s.toml"), Path("a/b/work/out")])


def test_hostile_sweep_values_and_sets(work, tmp_path):
    from pathlib import Path

    (work / "s.toml").write_text(scenario())
    grid = json.dumps(HOSTILE[:4] + HOSTILE[5:8])
    rc = main(["sweep", "s.toml", "--grid", f"name={grid}", "--grid", f"workload[0].name={json.dumps(HOSTILE[:2])}",
               "--set", f"description={json.dumps(HOSTILE[0])}", "--jobs", "1", "--out", "sw", "--quiet"])
    assert rc == 0
    only_under(tmp_path, [Path("a/b/work/s.toml"), Path("a/b/work/sw")])
    assert all(p.name.startswith("run-") or p.name == "sweep.parquet" for p in (work / "sw").iterdir())


@pytest.mark.parametrize("col", ["../../evil", "/tmp/sharebuf-abs-escape", "a/b", "x" * 5000])
def test_plot_file_names_stay_in_the_directory(work, col):
    import pandas as pd

    from sharebuf.sweep import _fname, plot

    name = _fname("drops", col)
    assert "/" not in name and "\x00" not in name and not name.startswith(".") and len(name) <= 160
    t = pd.DataFrame({col: [1, 2], "drops": [3, 4]})
    (work / "sw").mkdir()
    t.to_parquet(work / "sw" / "sweep.parquet")
    path = plot(work / "sw", col, "drops")
    assert path.parent == work / "sw" and path.is_file()


def test_hostile_set_keys_and_figure_ids_are_refused(work, capsys):
    (work / "s.toml").write_text(scenario())
    assert main(["run", "s.toml", "--out", "out", "--set", "../x=1"]) == 2
    assert "key '../x': '' is not a key name" in capsys.readouterr().err
    assert main(["repro", "/tmp/sharebuf-abs-escape", "--out", "r"]) == 2
    assert "figure id '/tmp/sharebuf-abs-escape' is not known" in capsys.readouterr().err
    assert sorted(p.name for p in work.iterdir()) == ["r", "s.toml"] or sorted(p.name for p in work.iterdir()) == ["s.toml"]


@pytest.mark.parametrize("key,value", [("switch.bm.scheme", "__import__('os').system('touch pwned')"),
                                       ("transport.cc", "$(touch pwned)"),
                                       ("profile", "`touch pwned`"),
                                       ("workload[0].kind", "__import__('os').system('touch pwned')")])
def test_no_key_runs_code(work, capsys, key, value):
    (work / "s.toml").write_text(scenario())
    assert main(["run", "s.toml", "--out", "out", "--set", f"{key}={json.dumps(value)}"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1
    assert sorted(p.name for p in work.iterdir()) == ["s.toml"]


@pytest.mark.parametrize("ref", ["/etc/passwd", "../../../../../../etc/passwd", "/dev/zero", "/proc/self/environ", "."])
def test_hostile_input_references_are_read_only_and_refused(work, capsys, ref):
    sc = scenario().replace('flows = [{ src = 0, dst = 1, size_bytes = 3000, start_s = 0 }]', f"file = {toml_str(ref)}")
    (work / "s.toml").write_text(sc)
    assert main(["run", "s.toml", "--out", "out"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: workload[0].file = '{ref}': ") and err.count("\n") == 1
    assert sorted(p.name for p in work.iterdir()) == ["s.toml"]


def test_hostile_recorded_section_is_validated(work, capsys):
    (work / "s.toml").write_text(scenario() + '[recorded]\ninputs = "/dev/zero"\n')
    assert main(["run", "s.toml", "--out", "out"]) == 2
    assert capsys.readouterr().err.startswith("error: recorded.inputs = '/dev/zero': Input should be a valid dictionary")
