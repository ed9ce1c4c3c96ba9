"""Property-based fuzzing (short run) and regressions of the bugs the fuzzer found.

The generator and the property live in ``bench/fuzz.py`` (its long run: ``python bench/fuzz.py
--cases 100000 --jobs 2``); here a few hundred cases, derandomized so the suite is repeatable.
"""

import json
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

import sharebuf
from sharebuf.config import load_scenario, resolve
from sharebuf.errors import ScenarioError

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import fuzz  # noqa: E402

FUZZ = settings(max_examples=120, derandomize=True, database=None, deadline=None, suppress_health_check=list(HealthCheck), print_blob=True)


@FUZZ
@given(fuzz.cases())
def test_random_scenarios_run_clean_or_are_refused_clearly(case):
    """No crash, no engine panic (invariants on), determinism, every flow finished or the run hit
    its horizon; near-valid values refused with one line."""
    fuzz.check(case)


@settings(max_examples=40, derandomize=True, database=None, deadline=None, suppress_health_check=list(HealthCheck))
@given(fuzz.cases(near_valid=False))
def test_valid_scenarios_run(case):
    """Without mutations a case runs (only a scheme's refusal of a parameter combination, naming
    switch.bm, is allowed)."""
    outcome = fuzz.check(case)
    assert outcome == "ran" or "switch.bm" in case.refusal, case.refusal


# ----------------------------------------------------------------------------- the harness can fail
def _star(**kw):
    sc = {"topology": {"kind": "star", "hosts": 4}, "switch": {"buffer_bytes": 30_000}, "max_ms": 5,
          "workload": [{"kind": "flows", "flows": [{"src": s, "dst": 0, "size_bytes": 100_000, "start_ms": 0} for s in (1, 2, 3)]}],
          "debug": {"check_invariants": True}}
    sc.update(kw)
    return fuzz.Case(sc)


def test_harness_accepts_a_lossy_run():
    assert fuzz.check(_star()) == "ran"


def test_harness_reports_an_engine_panic(monkeypatch):
    class PanicLike(BaseException):
        pass

    def boom(spec_json, progress):
        raise PanicLike("invariant violated: sent = delivered + dropped + in flight (total)")

    monkeypatch.setattr(fuzz._core, "simulate", boom)
    with pytest.raises(fuzz.Failure, match="crash: PanicLike: invariant violated"):
        fuzz.check(_star())


def test_harness_reports_nondeterminism(monkeypatch):
    real = fuzz._core.simulate
    calls = []

    def flaky(spec_json, progress):
        spec = json.loads(spec_json)
        spec["seed"] += len(calls)
        calls.append(1)
        return real(json.dumps(spec), progress)

    monkeypatch.setattr(fuzz._core, "simulate", flaky)
    with pytest.raises(fuzz.Failure, match="not deterministic"):
        fuzz.check(_star(workload=[{"kind": "poisson", "cdf": "websearch", "load": 0.5, "destinations": "all_to_all"}]))


def test_harness_reports_a_valid_scenario_refused():
    with pytest.raises(fuzz.Failure, match="a valid scenario was refused"):
        fuzz.check(_star(switch={"buffer_bytes": 30_000, "scheduler": "drr", "drr_weights": [1, 2, 3]}))


def test_a_failure_is_written_as_a_scenario_file(tmp_path):
    case = _star()
    case.files["x.cdf"] = "1000 1\n"
    d = fuzz.write_failure(case, "crash: boom", tmp_path)
    import tomllib

    assert tomllib.loads((d / "scenario.toml").read_text())["switch"]["buffer_bytes"] == 30_000
    assert (d / "x.cdf").read_text() == "1000 1\n"
    assert "crash: boom" in (d / "error.txt").read_text()


# ----------------------------------------------------------------------------- [debug] check_invariants
def test_check_invariants_reaches_the_engine_only_when_on():
    sc, base, _ = load_scenario({"topology": {"kind": "star", "hosts": 2}, "switch": {"buffer_bytes": 10_000}})
    assert "debug" not in resolve(sc, base), "a default scenario's engine spec (and hash) is unchanged"
    sc, base, _ = load_scenario({"topology": {"kind": "star", "hosts": 2}, "switch": {"buffer_bytes": 10_000}, "debug": {"check_invariants": True}})
    assert resolve(sc, base)["debug"] == {"check_invariants": True}


def test_check_invariants_gives_the_same_results():
    sc = {"topology": {"kind": "star", "hosts": 5}, "switch": {"buffer_bytes": 40_000}, "max_ms": 20, "arrivals_until_ms": 2,
          "workload": [{"kind": "incast", "request_bytes": 200_000, "fan_in": 4, "responders": "any", "queries_per_s_per_host": 2000}]}
    a = sharebuf.run(sc, quiet=True)
    b = sharebuf.run(dict(sc, debug={"check_invariants": True}), quiet=True)
    assert a.summary["drops_total"] > 0
    assert a.flows.equals(b.flows)


# ----------------------------------------------------------------------------- regressions found by the fuzzer
def test_infinite_horizon_is_refused_not_an_overflow():
    # Found by bench/fuzz.py: max_ms = inf passed validation and crashed with OverflowError.
    with pytest.raises(ScenarioError, match=r"max_ms = inf: Input should be a finite number"):
        sharebuf.run({"topology": {"kind": "star", "hosts": 2}, "switch": {"buffer_bytes": 10_000}, "max_ms": float("inf")}, quiet=True)


def test_cdf_of_zero_mean_is_refused_not_a_division_by_zero(tmp_path):
    # Found by bench/fuzz.py: a CDF whose sizes are all 0 crashed with ZeroDivisionError.
    (tmp_path / "zero.cdf").write_text("0 0\n0 1\n")
    sc = {"topology": {"kind": "star", "hosts": 2}, "switch": {"buffer_bytes": 10_000},
          "workload": [{"kind": "poisson", "cdf": str(tmp_path / "zero.cdf"), "destinations": "all_to_all"}]}
    with pytest.raises(ScenarioError, match=r"workload\[0\]\.cdf = '.*zero.cdf': mean flow size 0 bytes; allowed: a CDF whose mean is >= 1 byte"):
        sharebuf.run(sc, quiet=True)


def test_link_rate_rounding_to_zero_is_refused_not_an_engine_panic():
    # Found by the engine fuzz test (crates/sharebuf-core/tests/fuzz_engine.rs): a rate of 0 b/s
    # divided by zero while the engine built its ports; 1e-12 Gb/s passes `> 0` and rounds to 0.
    with pytest.raises(ScenarioError, match=r"link rate of port 0 is 0; rates must be > 0"):
        sharebuf.run({"topology": {"kind": "star", "hosts": 2, "link_gbps": 1e-12}, "switch": {"buffer_bytes": 10_000}}, quiet=True)


@pytest.mark.parametrize("value", ["inf", "nan", "-inf"])
def test_flow_file_non_finite_start_is_refused(tmp_path, value):
    # Found by the long run of bench/fuzz.py: start_s = inf in a flows file crashed with OverflowError.
    (tmp_path / "f.csv").write_text(f"src,dst,size_bytes,start_s\n0,1,1000,{value}\n")
    sc = {"topology": {"kind": "star", "hosts": 2}, "switch": {"buffer_bytes": 10_000}, "workload": [{"kind": "flows", "file": str(tmp_path / "f.csv")}]}
    with pytest.raises(ScenarioError, match=rf"row 1 \(line 2\), column 'start_s' = '{value}': allowed: a finite time in seconds >= 0"):
        sharebuf.run(sc, quiet=True)
