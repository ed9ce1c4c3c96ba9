"""Sweeps: the grid really reaches the scenario, results are checked against closed forms,
bad keys are clear errors, and the Ray backend gives the same table."""

import subprocess
import sys

import pandas as pd
import pytest

import sharebuf
from conftest import EXAMPLES
from sharebuf.sweep import parse_sets, parse_values, plot, scenario_dict, set_path, sweep

B = 1_000_000


def test_parse_values_and_set_path():
    assert parse_values("dt,abm") == ["dt", "abm"]
    assert parse_values("0.25, 1") == [0.25, 1]
    assert parse_values("[[1, 0.5], [1, 1]]") == [[1, 0.5], [1, 1]]
    d = {"switch": {"bm": {}}, "workload": [{"kind": "poisson"}, {"kind": "incast"}]}
    set_path(d, "switch.bm.alpha", 2)
    set_path(d, "workload[1].fan_in", 8)
    assert d["switch"]["bm"]["alpha"] == 2 and d["workload"][1]["fan_in"] == 8
    with pytest.raises(sharebuf.ScenarioError, match=r"workload.*index 5"):
        set_path(d, "workload[5].load", 1)


def test_set_takes_toml_inline_tables_and_strings():
    # A whole section in one --set (TOML inline table), a single-quoted TOML string, bare words.
    sets = parse_sets(['switch.bm={scheme = "dt", alpha = [1, 0.25]}', "transport.cc='dctcp'", "name=my run"])
    assert sets == {"switch.bm": {"scheme": "dt", "alpha": [1, 0.25]}, "transport.cc": "dctcp", "name": "my run"}
    d = scenario_dict("default", sets)
    assert d["switch"]["bm"]["scheme"] == "dt" and d["switch"]["bm"]["alpha"] == [1, 0.25]
    assert d["transport"]["cc"] == "dctcp"
    # Something that looks like a table but is not one stays a string and is refused by validation.
    with pytest.raises(sharebuf.ScenarioError, match=r"switch\.bm"):
        scenario_dict("default", parse_sets(["switch.bm={scheme = dt}"]))


def test_sweep_over_alpha_matches_closed_forms(tmp_path):
    # contract-star-cbr: two egress ports each overloaded 2x by CBR (plus small TCP flows).
    alphas = [0.5, 1.0, 2.0]
    t = sweep(EXAMPLES / "contract-star-cbr.toml", {"switch.bm.scheme": ["dt", "abm"], "switch.bm.alpha": alphas},
              out=tmp_path, jobs=2)
    assert len(t) == 6 and (tmp_path / "sweep.parquet").exists()
    assert all((tmp_path / r / "summary.json").exists() for r in t.run_dir) and t.run_dir.nunique() == 6
    assert pd.read_parquet(tmp_path / "sweep.parquet").equals(t)
    for _, r in t.iterrows():
        a = r["switch.bm.alpha"]
        if r["switch.bm.scheme"] == "dt":
            expect = 2 * a * B / (1 + 2 * a)        # two congested queues under DT
        else:
            expect = a * B / (1 + a)                # ABM caps the priority at alpha*B/(1+alpha)
        # The mean includes the 1-2 ms fill at the start of the 20 ms run.
        assert r["buffer_mean_bytes"] == pytest.approx(expect, rel=0.08), (r["switch.bm.scheme"], a)
    png = plot(tmp_path, "switch.bm.alpha", "buffer_mean_bytes", hue="switch.bm.scheme")
    assert png.exists() and png.stat().st_size > 10_000 and png.with_suffix(".pdf").exists()


def test_sweep_seeds_and_bad_key_from_the_cli(tmp_path):
    r = subprocess.run([sys.executable, "-m", "sharebuf", "sweep", str(EXAMPLES / "contract-star-cbr.toml"),
                        "--grid", "switch.bm.alfa=1,2", "--out", str(tmp_path / "bad")], capture_output=True, text=True)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "alfa" in r.stderr and "allowed" in r.stderr, r.stderr
    assert not (tmp_path / "bad").exists()
    r = subprocess.run([sys.executable, "-m", "sharebuf", "sweep", str(EXAMPLES / "contract-star-cbr.toml"),
                        "--seeds", "1,2", "--out", str(tmp_path / "ok"), "--quiet"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    t = pd.read_parquet(tmp_path / "ok" / "sweep.parquet")
    assert t.seed.tolist() == [1, 2]


def test_ray_backend_gives_the_same_table(tmp_path):
    pytest.importorskip("ray")
    grid = {"switch.bm.alpha": [0.5, 2.0]}
    local = sweep(EXAMPLES / "contract-star-cbr.toml", grid, jobs=1)
    remote = sweep(EXAMPLES / "contract-star-cbr.toml", grid, use_ray=True)
    cols = [c for c in local.columns if c not in ("wall_s",)]
    pd.testing.assert_frame_equal(local[cols], remote[cols])


def test_parallel_runs_are_refused_when_their_memory_sum_exceeds_the_limit(tmp_path, monkeypatch):
    """Each worker process holds its own run: --jobs N needs the N largest estimates at once.
    Three runs of ~E bytes each under a limit of 2.5 E: --jobs 3 is refused naming --jobs 2,
    --jobs 2 passes the check (and runs), and the message names the key, value and what fits."""
    from sharebuf.config import parse_scenario, resolve
    from sharebuf.memory import estimate_spec_memory_bytes
    from sharebuf.sweep import plan, run_many, run_key

    pts = plan(EXAMPLES / "contract-star-cbr.toml", {"switch.bm.alpha": [0.5, 1.0, 2.0]})
    items = [(run_key(d), d) for _, d in pts]
    est = [estimate_spec_memory_bytes(resolve(parse_scenario(d), tmp_path)) for _, d in items]
    assert max(est) - min(est) < 0.01 * max(est)  # alpha does not change the estimate
    monkeypatch.setenv("SHAREBUF_MEMORY_LIMIT_BYTES", str(int(2.5 * max(est))))
    with pytest.raises(sharebuf.ScenarioError, match=r"^sweep --jobs 3: 3 runs at once need about \d+ MiB .* allowed: --jobs 2 or fewer"):
        run_many(items, tmp_path / "a", jobs=3)
    assert not (tmp_path / "a").exists()  # refused before anything ran
    done = run_many(items, tmp_path / "b", jobs=2)
    assert len(done) == 3 and all(done.ran.values())
    # Runs already done are not counted: with all three complete, --jobs 3 has nothing to run.
    assert len(run_many(items, tmp_path / "b", jobs=3)) == 3
