"""Provenance (issue 16): a run directory records what made it, and re-running the record gives
byte-identical Parquet files."""

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pyarrow.parquet as pq

import sharebuf
from sharebuf import sweep as sw

SHORT = ["--set", "arrivals_until_ms=30", "--set", "max_ms=300"]


def cli(*args):
    return subprocess.run([sys.executable, "-m", "sharebuf", *map(str, args)], capture_output=True, text=True)


def _parquets(d: Path):
    return sorted(p.name for p in d.glob("*.parquet"))


def test_rerun_of_recorded_scenario_is_byte_identical(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    r = cli("run", "default", *SHORT, "--set", "switch.bm.scheme=abm", "--seed", "5", "--out", a, "--quiet")
    assert r.returncode == 0, r.stderr
    rec = tomllib.loads((a / "scenario.toml").read_text())
    assert rec["seed"] == 5 and rec["switch"]["bm"]["scheme"] == "abm" and rec["arrivals_until_ms"] == 30
    assert rec["transport"]["mss_bytes"] == 1448  # defaults are filled in
    assert rec["recorded"]["sharebuf_version"] == sharebuf.__version__
    r = cli("run", a / "scenario.toml", "--out", b, "--quiet")
    assert r.returncode == 0 and "warning" not in r.stderr, r.stderr
    assert _parquets(a) == _parquets(b) and "flows.parquet" in _parquets(a)
    for name in _parquets(a):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    # The record in summary.json and in the Parquet metadata.
    pa_, pb = (json.loads((d / "summary.json").read_text())["provenance"] for d in (a, b))
    assert pa_["engine_spec_sha256"] == pb["engine_spec_sha256"] and len(pa_["engine_spec_sha256"]) == 64
    assert pa_["sharebuf_version"] == sharebuf.__version__ and pa_["host"]["cores"] >= 1
    assert "--seed 5" in pa_["command"] and pa_["wall_s"] > 0 and pa_["started_utc"].endswith("+00:00")
    meta = pq.read_schema(a / "flows.parquet").metadata
    assert meta[b"sharebuf.engine_spec_sha256"].decode() == pa_["engine_spec_sha256"]
    assert meta[b"sharebuf.version"].decode() == sharebuf.__version__
    from sharebuf.provenance import model_revision

    rev = model_revision()
    assert pa_["model_revision"] == rev == rec["recorded"]["model_revision"] == meta[b"sharebuf.model_revision"].decode()
    # show prints the record.
    r = cli("show", b)
    assert r.returncode == 0 and pb["engine_spec_sha256"] in r.stdout and "incast" in r.stdout


def test_recorded_file_inputs_and_version_warning(tmp_path):
    cdf = tmp_path / "my.cdf"
    cdf.write_text("1000 0\n5000 0.5\n20000 1\n")
    sc = {"seed": 1, "max_ms": 20, "topology": {"kind": "star", "hosts": 4},
          "switch": {"buffer_bytes": 200000, "bm": {"scheme": "dt"}},
          "workload": [{"kind": "poisson", "cdf": "my.cdf", "load": 0.3}]}
    scen = tmp_path / "s.toml"
    import tomli_w

    scen.write_text(tomli_w.dumps(sc))
    assert cli("run", scen, "--out", tmp_path / "a", "--quiet").returncode == 0
    rec = tomllib.loads((tmp_path / "a" / "scenario.toml").read_text())
    path = rec["workload"][0]["cdf"]
    assert Path(path).is_absolute() and Path(path).resolve() == cdf.resolve()
    assert len(rec["recorded"]["inputs"][path]) == 64
    # From another directory, the record needs nothing but the files it names.
    r = subprocess.run([sys.executable, "-m", "sharebuf", "run", str(tmp_path / "a" / "scenario.toml"), "--out", str(tmp_path / "b"), "--quiet"],
                       capture_output=True, text=True, cwd="/")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "a" / "flows.parquet").read_bytes() == (tmp_path / "b" / "flows.parquet").read_bytes()
    # Another version, or a changed input: said before the run.
    text = (tmp_path / "a" / "scenario.toml").read_text().replace(f'sharebuf_version = "{sharebuf.__version__}"', 'sharebuf_version = "0.0.1"')
    (tmp_path / "old.toml").write_text(text)
    cdf.write_text("1000 0\n8000 0.5\n20000 1\n")
    r = cli("run", tmp_path / "old.toml", "--out", tmp_path / "c", "--quiet")
    assert r.returncode == 0
    assert "recorded by sharebuf 0.0.1" in r.stderr and "changed since the scenario was recorded" in r.stderr
    # The same version from another build of the engine (or other summary code): said too.
    rev = rec["recorded"]["model_revision"]
    text = (tmp_path / "a" / "scenario.toml").read_text().replace(f'model_revision = "{rev}"', 'model_revision = "0123456789abcdef-01234567"')
    (tmp_path / "other.toml").write_text(text)
    r = cli("run", tmp_path / "other.toml", "--out", tmp_path / "d", "--quiet")
    assert r.returncode == 0 and "another build of sharebuf" in r.stderr and "0123456789abcdef-01234567" in r.stderr, r.stderr


def test_model_revision_is_the_engine_source_and_the_summary_code():
    """The revision names the engine build (build.rs: a 16-hex-digit hash of its sources) and the
    summary modules' source; the run key follows it, so another build never reuses a run directory."""
    from sharebuf import _core, provenance
    from sharebuf.executor import run_key

    rev = provenance.model_revision()
    eng, summ = rev.split("-")
    assert eng == _core.ENGINE_SOURCE and len(eng) == 16 and int(eng, 16) >= 0
    assert len(summ) == 8 and int(summ, 16) >= 0
    sc = sw.scenario_dict("default", {"arrivals_until_ms": 20, "max_ms": 200})
    k = run_key(sc)
    assert run_key(sc) == k and len(k) == 12
    saved = dict(provenance._REVISION)
    try:
        provenance._REVISION["value"] = "0000000000000000-" + summ
        assert run_key(sc) != k
    finally:
        provenance._REVISION.clear()
        provenance._REVISION.update(saved)
    assert run_key(sc) == k


def test_sweep_point_rerun_is_byte_identical(tmp_path):
    out = tmp_path / "sw"
    base = sw.scenario_dict("default", {"arrivals_until_ms": 20, "max_ms": 200})
    sw.sweep(base, {"switch.bm.alpha": [0.25, 1.0]}, out=out, jobs=1)
    runs = sorted(p for p in out.iterdir() if p.is_dir() and p.name.startswith("run-"))
    assert len(runs) == 2
    one = runs[1]
    rec = tomllib.loads((one / "scenario.toml").read_text())
    assert rec["switch"]["bm"]["alpha"] in (0.25, 1.0) and rec["arrivals_until_ms"] == 20
    assert cli("run", one / "scenario.toml", "--out", tmp_path / "again", "--quiet").returncode == 0
    for name in _parquets(one):
        assert (one / name).read_bytes() == (tmp_path / "again" / name).read_bytes(), name
