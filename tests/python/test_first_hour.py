"""The first hour (issue #14): the default run shows DT vs ABM, --set reaches the engine and
bad keys are one clear error, compare, resumable sweeps, Ctrl-C, and plots of a single run."""

import json
import tomllib
import os
import shutil
import signal
import subprocess
import sys
import time

import pandas as pd
import pytest

import sharebuf
from conftest import EXAMPLES
from sharebuf.compare import compare, summarize
from sharebuf.sweep import sweep

B = 1_000_000
CBR = EXAMPLES / "contract-star-cbr.toml"  # two egress ports, each overloaded 2x by CBR


def cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "sharebuf", *map(str, args)], capture_output=True, text=True, cwd=cwd)


def one_error_line(r, *needles):
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert "Traceback" not in r.stderr
    lines = [line for line in r.stderr.strip().splitlines() if line]
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    for n in needles:
        assert n in lines[0], (n, lines[0])


def test_readme_first_command_dt_drops_and_abm_differs(tmp_path):
    # `sharebuf run` as in the README: the bundled default under DT...
    r = cli("run", "--out", tmp_path / "dt")
    assert r.returncode == 0, r.stderr
    for needle in ("incast responses", "short (<100 KB)", "long (>=1 MB)", "query completion", "drops:",
                   "shared buffer occupancy", "next: sharebuf compare default --schemes dt,cs,abm"):
        assert needle in r.stdout, needle
    dt = json.loads((tmp_path / "dt" / "summary.json").read_text())
    assert dt["drops"]["bm_threshold"] > 1000 and dt["queries"]["finished"] == dt["queries"]["total"] > 50
    # ... and the same with --set switch.bm.scheme=abm. Long Cubic flows hold the buffer; DT
    # leaves the incast burst α(B-Q) and drops responses into 10 ms RTOs (ideal FCT ~0.1 ms:
    # slowdown ~100), ABM admits them as unscheduled packets (α_unsched = 64; ABM §3).
    r = cli("run", "--set", "switch.bm.scheme=abm", "--out", tmp_path / "abm", "--quiet")
    assert r.returncode == 0, r.stderr
    abm = json.loads((tmp_path / "abm" / "summary.json").read_text())
    assert abm["overrides"] == {"switch.bm.scheme": "abm"}
    assert tomllib.loads((tmp_path / "abm" / "scenario.toml").read_text())["switch"]["bm"]["scheme"] == "abm"
    p99 = lambda s: s["slowdown_by_class"]["incast"]["p99"]  # noqa: E731
    assert p99(dt) > 50 and p99(abm) < 25 and p99(dt) > 4 * p99(abm), (p99(dt), p99(abm))
    assert dt["slowdown_by_class"]["incast"]["flows"] == abm["slowdown_by_class"]["incast"]["flows"]
    # Beside each class's tail, the % of its flows that waited out an RTO, counted here from the flows:
    # DT's incast p99 is a timeout (>= 1 % of the responses), ABM's is not.
    for run, s in (("dt", dt), ("abm", abm)):
        f = pd.read_parquet(tmp_path / run / "flows.parquet")
        inc = f[f.query_id >= 0]
        assert s["slowdown_by_class"]["incast"]["rto_pct"] == pytest.approx(100 * (inc.timeouts > 0).mean(), rel=1e-12)
    assert dt["slowdown_by_class"]["incast"]["rto_pct"] >= 1 > abm["slowdown_by_class"]["incast"]["rto_pct"]


def test_set_reaches_the_engine_closed_form(tmp_path):
    # DT steady state with N = 2 congested queues: each holds α·B/(1+2α), total 2αB/(1+2α).
    for alpha in (0.25, 2.0):
        out = tmp_path / f"a{alpha}"
        r = cli("run", CBR, "--set", f"switch.bm.alpha={alpha}", "--out", out, "--json")
        assert r.returncode == 0, r.stderr
        s = json.loads(r.stdout)
        assert s["overrides"] == {"switch.bm.alpha": alpha}
        assert s["buffer"]["mean_bytes"] == pytest.approx(2 * alpha * B / (1 + 2 * alpha), rel=0.08), alpha
        assert tomllib.loads((out / "scenario.toml").read_text())["switch"]["bm"]["alpha"] == alpha
    # sweep takes --set too: ABM caps a priority at α·B/(1+α) whatever the number of queues.
    r = cli("sweep", CBR, "--set", "switch.bm.scheme=abm", "--grid", "switch.bm.alpha=0.5,2", "--out", tmp_path / "sw", "--quiet")
    assert r.returncode == 0, r.stderr
    t = pd.read_parquet(tmp_path / "sw" / "sweep.parquet")
    for _, row in t.iterrows():
        a = row["switch.bm.alpha"]
        assert row["buffer_mean_bytes"] == pytest.approx(a * B / (1 + a), rel=0.08), a


@pytest.mark.parametrize("item,needles", [
    ("switch.bm.alfa=1", ["switch.bm.alfa", "allowed", "alpha"]),
    ("switch.buffer_bytes=lots", ["--set switch.buffer_bytes", "lots"]),
    ("switch.bufer_bytes=5", ["switch.bufer_bytes", "bufer_bytes", "allowed"]),
    ("workload[7].load=0.5", ["workload[7].load", "index 7"]),
    ("switch.bm.scheme=magic", ["switch.bm.scheme", "magic", "allowed", "abm"]),
    ("nokeyvalue", ["--set 'nokeyvalue'", "KEY=VALUE"]),
], ids=["engine-param", "type", "unknown-key", "index", "scheme", "form"])
def test_bad_set_is_one_clear_error(tmp_path, item, needles):
    out = tmp_path / "out"
    one_error_line(cli("run", CBR, "--set", item, "--out", out), *needles)
    assert not out.exists()


def test_sweep_resumes_runs_each_once_and_table_is_unchanged(tmp_path):
    grid = {"switch.bm.alpha": [0.5, 1.0, 2.0, 1.0]}  # 1.0 twice: the same run, one row
    t1 = sweep(CBR, grid, out=tmp_path, jobs=2)
    assert len(t1) == 3 and t1.attrs == {"ran": 3, "reused": 0}
    dirs = [tmp_path / d for d in t1.run_dir]
    mtimes = {d: (d / "summary.json").stat().st_mtime_ns for d in dirs}
    # Interrupted: one run's directory and the table are gone, a half-written run is left over.
    shutil.rmtree(dirs[1])
    (tmp_path / "sweep.parquet").unlink()
    (tmp_path / f".{dirs[1].name}.partial-x").mkdir()
    time.sleep(0.02)
    t2 = sweep(CBR, grid, out=tmp_path, jobs=2)
    assert t2.attrs == {"ran": 1, "reused": 2}
    assert [(d / "summary.json").stat().st_mtime_ns == mtimes[d] for d in dirs] == [True, False, True]
    assert not list(tmp_path.glob(".run-*"))
    cols = [c for c in t1.columns if c != "wall_s"]
    pd.testing.assert_frame_equal(t1[cols], pd.read_parquet(tmp_path / "sweep.parquet")[cols])
    # A third time: nothing runs.
    assert sweep(CBR, grid, out=tmp_path).attrs == {"ran": 0, "reused": 3}


def test_ctrl_c_keeps_finished_runs_and_says_where(tmp_path):
    out = tmp_path / "sw"
    p = subprocess.Popen([sys.executable, "-m", "sharebuf", "sweep", CBR, "--grid", "switch.bm.alpha=0.25,0.5,1,2,4,8,16,32",
                          "--jobs", "1", "--out", out], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    deadline = time.time() + 60
    while time.time() < deadline and not list(out.glob("run-*")):
        time.sleep(0.05)
    os.killpg(p.pid, signal.SIGINT)  # as Ctrl-C in a terminal: the whole process group
    _, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    assert "Traceback" not in err and "interrupted:" in err and str(out) in err and "again" in err, err
    done = list(out.glob("run-*"))
    assert 1 <= len(done) < 8 and all((d / "summary.json").is_file() for d in done)
    assert not (out / "sweep.parquet").exists()


def test_compare_table_figure_and_defaults(tmp_path):
    # Each scheme with its documented defaults ([switch.bm] replaced), --set switch.bm.alpha
    # applied to all: DT holds 2αB/(1+2α) in two congested queues, ABM αB/(1+α) per priority.
    c = compare(CBR, ["dt", "abm"], seeds=[1, 2], sets={"switch.bm.alpha": 1.0}, out=tmp_path, jobs=2)
    assert len(c.runs) == 4 and set(c.runs["switch.bm.scheme"]) == {"dt", "abm"}
    for _, r in c.runs.iterrows():
        expect = 2 * B / 3 if r["switch.bm.scheme"] == "dt" else B / 2
        assert r["buffer_mean_bytes"] == pytest.approx(expect, rel=0.08)
    for f in ("compare.md", "compare.parquet", "compare.png", "compare.pdf", "sweep.parquet"):
        assert (tmp_path / f).is_file(), f
    assert (tmp_path / "compare.png").stat().st_size > 20_000
    md = (tmp_path / "compare.md").read_text()
    assert "| metric | dt | abm |" in md and "buffer occupancy p99 (KB)" in md
    # ABM's buffer is far below DT's in every seed: marked.
    row = c.table[(c.table.metric == "buffer_p99_bytes") & (c.table.scheme == "abm")].iloc[0]
    assert row.marked and row.seeds == 2
    # Resumed into the same directory: nothing runs again.
    assert compare(CBR, ["dt", "abm"], seeds=[1, 2], sets={"switch.bm.alpha": 1.0}, out=tmp_path).runs.attrs["ran"] == 0


def test_compare_marks_only_differences_beyond_the_seed_spread():
    runs = pd.DataFrame({"switch.bm.scheme": ["dt"] * 3 + ["abm"] * 3 + ["fb"] * 3 + ["cs"],
                         "drops": [10, 12, 14, 15, 16, 17, 13, 20, 30, 1], "seed": [1, 2, 3] * 3 + [1]})
    t = summarize(runs, ["dt", "abm", "fb", "cs"]).set_index("scheme")
    assert t.loc["dt", "mean"] == 12 and (t.loc["dt", "min"], t.loc["dt", "max"]) == (10, 14)
    # abm 15..17 lies above dt 10..14: marked; fb 13..30 overlaps: not; cs has one seed: not.
    assert list(t.marked) == [False, True, False, False]


def test_compare_bad_scheme_and_set_scheme_are_clear_errors(tmp_path):
    one_error_line(cli("compare", CBR, "--schemes", "dt,magic", "--out", tmp_path / "x"), "--schemes", "magic", "allowed", "abm")
    one_error_line(cli("compare", CBR, "--schemes", "dt,abm", "--set", "switch.bm.scheme=fb", "--out", tmp_path / "x"),
                   "switch.bm.scheme", "--schemes")
    assert not (tmp_path / "x").exists()


def test_plot_a_run_dir_and_a_sweep_dir(tmp_path):
    run_dir = tmp_path / "run"
    assert cli("run", CBR, "--out", run_dir, "--quiet").returncode == 0
    r = cli("plot", run_dir)
    assert r.returncode == 0, r.stderr
    assert (run_dir / "run.png").stat().st_size > 20_000 and (run_dir / "run.pdf").is_file()
    # The sweep form still works, and a sweep dir without --x/--y is a clear error.
    sweep(CBR, {"switch.bm.alpha": [0.5, 1.0]}, out=tmp_path / "sw", jobs=2)
    r = cli("plot", tmp_path / "sw", "--x", "switch.bm.alpha", "--y", "drops")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "sw" / "drops-vs-switch.bm.alpha.png").is_file()
    one_error_line(cli("plot", tmp_path / "sw"), "--x", "--y")


def test_python_api_sets():
    r = sharebuf.run(CBR, sets={"switch.bm.alpha": 2.0, "max_ms": 5})
    assert r.summary["overrides"] == {"switch.bm.alpha": 2.0, "max_ms": 5}
    assert r.summary["sim_s"] <= 0.005 + 1e-9


def test_compare_notes_fb_without_a_high_class():
    """FB with every queue low gives bursts α_L/N_p (far less than DT): compare says why its column looks so."""
    from sharebuf.compare import scheme_notes
    from sharebuf.sweep import scenario_dict

    d = scenario_dict("default")
    d["switch"]["bm"] = {"scheme": "dt"}
    notes = scheme_notes(d, ["dt", "abm", "fb", "fb_pisa"])
    assert len(notes) == 2 and notes[0].startswith("fb: no queue is marked high") and "α_L/N_p" in notes[0]
    assert notes[1].startswith("fb_pisa: no queue is marked high")  # FB's hardware design: the same classes
    d["switch"]["bm"]["high"] = [0, 1]
    assert scheme_notes(d, ["fb"]) == []
    d["switch"]["bm"] = {"scheme": "fb", "mode": "single"}
    assert scheme_notes(d, ["fb", "fba"]) == []
