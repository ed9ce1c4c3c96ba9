"""Issue #25 must-show 2: Credence's error sweep (bench/credence/error_sweep.py,
docs/schemes/credence.md §5.7) on one seed of its open-loop scenario (8-port star, CBR bursts,
~0.1 s per run). Checks what can fail: the error counts read from the run match the configured
rates, the measured ratio LQD / Credence never exceeds min(1.707·η, N) (OPT ≥ LQD, so a ratio above
the bound on OPT / Credence would contradict the paper's theorem or the implementation), the
ratio grows with the false-positive rate, and all-false-negative predictions are the "drop
nothing" fallback exactly."""

import importlib.util
import math
from pathlib import Path

import pytest

import sharebuf

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "credence" / "error_sweep.py"


@pytest.fixture(scope="module")
def es():
    spec = importlib.util.spec_from_file_location("error_sweep", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def sweep(es, tmp_path_factory):
    return es.sweep("cbr", [1], (0.0, 0.2, 0.5, 1.0), (0.3, 1.0), tmp_path_factory.mktemp("sweep"), log=lambda *_: None)


def test_error_counts_match_the_configured_rates(sweep):
    """FP (fn_rate 0) and FN (fp_rate 0) read from the run's counters are binomial draws of the
    configured rate over the consulted negatives / positives: within 99 % intervals; η from the
    run's counts is then within the η of those interval ends."""
    cr = sweep[sweep.scheme == "credence"]
    for r in cr.itertuples():
        neg, pos = r.pred_n - r.pred_pos, r.pred_pos
        assert neg > 1000 and pos > 1000
        for rate, n, got in ((r.fp_rate, neg, r.fp), (r.fn_rate, pos, r.fn)):
            half = 2.576 * math.sqrt(n * rate * (1 - rate)) + 1
            print(f"{r.error} fp {r.fp_rate} fn {r.fn_rate}: {got} of {n} (expected {rate * n:.0f} ± {half:.0f}); "
                  f"eta {r.eta:.3f}, eta_run {r.eta_run:.3f}, ratio {r.ratio:.4f}")
            assert abs(got - rate * n) <= half


def test_ratio_within_the_bound_and_monotone_in_false_positives(es, sweep):
    """LQD / Credence delivered bytes ≤ min(1.707·η, N) for η of the run's own counts and for the
    trace-wide η; the ratio rises with fp_rate (measured 1.0006, 1.14, 1.28, 1.70 at 0, 0.2,
    0.5, 1); the oracle (both rates 0) within 0.2 % of LQD."""
    cr = sweep[sweep.scheme == "credence"]
    n = int(sweep.n_ports.iloc[0])
    for r in cr.itertuples():
        assert r.ratio <= es.bound(r.eta_run, n) and r.ratio <= es.bound(r.eta, n)
    fp = cr[cr.error == "fp"].sort_values("fp_rate")
    assert list(fp.fp_rate) == [0.0, 0.2, 0.5, 1.0]
    assert fp.ratio.is_monotonic_increasing and fp.ratio.iloc[-1] - fp.ratio.iloc[0] > 0.3
    assert 1.0 <= fp.ratio.iloc[0] <= 1.002
    assert math.isinf(fp.eta.iloc[-1])  # every negative a false positive: TN = 0
    cs = sweep[sweep.scheme == "cs"].ratio.iloc[0]
    assert 1.2 < cs < n  # the scenario separates LQD from Complete Sharing


def test_all_false_negatives_is_drop_nothing(es, sweep, tmp_path):
    """fn_rate = 1 (fp 0) predicts "accept" for every arrival: the run equals prediction = "none"
    (the threshold-following drop-tail of §5.4) exactly."""
    fn1 = sweep[(sweep.error == "fn") & (sweep.fn_rate == 1.0)].iloc[0]
    none = sharebuf.run(es.cbr_scenario("credence", 1, prediction="none"))
    assert fn1.delivered_bytes == int(none.cbr.delivered_bytes.sum())
    assert fn1.drops == none.summary["drops_total"]
