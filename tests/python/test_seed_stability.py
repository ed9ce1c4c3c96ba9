"""bench/seed_stability.py: which claims are near the bound that decides them, the CPU budget,
and the per-seed table, on hand-made claims."""

import math
import sys
from pathlib import Path

import pytest

from sharebuf.repro.spec import Claim

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import seed_stability as ss  # noqa: E402


def _c(**kw):
    return Claim(id=kw.pop("id", "t"), panel="a", text="t", series="A", **kw)


def test_deciding_bound_and_distance():
    # Holds inside [2.9, 3.1] at 2.99: 0.09 / 2.9 = 0.0310 from the min, 0.11 / 3.1 = 0.0355 from the max.
    b, d = ss.deciding_bound(_c(rule="ratio", min=2.9, max=3.1), 2.99)
    assert b == 2.9 and math.isclose(d, 0.09 / 2.9, rel_tol=1e-12)
    b, d = ss.deciding_bound(_c(rule="ratio", min=2.9, max=3.1), 3.01)
    assert b == 3.1 and math.isclose(d, 0.09 / 3.1, rel_tol=1e-12)
    # Fails above max: the broken bound decides even when the other is nearer in absolute terms.
    b, d = ss.deciding_bound(_c(rule="ratio", min=1.2, max=1.25), 1.28)
    assert b == 1.25 and math.isclose(d, 0.03 / 1.25, rel_tol=1e-12)
    # Only a min: 0.93 holds, 0.03 / 0.9 = 3.33% above it.
    b, d = ss.deciding_bound(_c(rule="ratio", min=0.9), 0.93)
    assert b == 0.9 and math.isclose(d, 0.03 / 0.9, rel_tol=1e-12)
    # `lowest` without max: the bound is 1.
    b, d = ss.deciding_bound(_c(rule="lowest", others=["B"]), 1.07)
    assert b == 1.0 and math.isclose(d, 0.07, rel_tol=1e-12)
    # A bound of 0 ("no drops"): at it only when exactly 0.
    assert ss.deciding_bound(_c(rule="value", max=0), 0.0) == (0, 0.0)
    assert ss.deciding_bound(_c(rule="value", max=0), 3.0)[1] == math.inf
    # Counts: distance in inversions over the allowed count; below it, never near.
    assert ss.deciding_bound(_c(rule="monotone", inversions=1), 2.0) == (1.0, 1.0)
    assert ss.deciding_bound(_c(rule="monotone", inversions=1), 0.0)[1] == math.inf
    # No measured value: not near anything.
    assert ss.deciding_bound(_c(rule="ratio", max=1), None)[1] == math.inf


class _Spec:
    def __init__(self, claims, simulated=True):
        self.claims, self.simulated = claims, simulated


def test_near_claims_margin_and_closed_forms():
    specs = {"f": _Spec([_c(id="in", rule="ratio", max=1.0), _c(id="out", rule="ratio", max=1.0),
                         _c(id="cnt", rule="ordered", others=["B"], inversions=0)]),
             "closed": _Spec([_c(id="x", rule="ratio", max=1.0)], simulated=False)}
    cj = {"f": {"claims": [dict(id="in", measured=0.86, holds=True), dict(id="out", measured=0.84, holds=True),
                           dict(id="cnt", measured=2.0, holds=False)]},
          "closed": {"claims": [dict(id="x", measured=1.0, holds=True)]}}
    near = ss.near_claims(cj, specs, 0.15)
    # 0.86 is 14% below 1 (near), 0.84 is 16% (not); 2 inversions over 0 allowed is 2 from flipping;
    # a closed form has no seed.
    assert [(f, c.id) for f, _, c, _, _ in near] == [("f", "in")]
    assert [c.id for _, _, c, _, _ in ss.near_claims(cj, specs, 0.17)] == ["in", "out"]


def test_budget_drops_the_most_expensive_first():
    rows = [dict(figure="a", est_s=60.0, measured_s=600.0), dict(figure="b", est_s=300.0, measured_s=None),
            dict(figure="c", est_s=120.0, measured_s=60.0)]
    kept, dropped = ss.within_budget(rows, 8 * 60)
    # costs 600, 300, 120 s: dropping a (600) leaves 420 ≤ 480
    assert [r["figure"] for r in dropped] == ["a"] and [r["figure"] for r in kept] == ["b", "c"]
    kept, dropped = ss.within_budget(rows, 100)
    assert [r["figure"] for r in dropped] == ["a", "b", "c"] and kept == []


def test_table_has_per_seed_values_and_counts():
    c = _c(id="c-75", rule="ratio", others=["B"], max=1.25, paper_value=1.053)
    near = [("f", dict(id="c-75", measured=1.28), c, 1.25, 0.024)]
    res = {"f": {"claims": [dict(id="c-75", measured=1.2, holds=True, seeds_total=3, seeds_holding=2,
                                 measured_by_seed={"1": 1.28, "2": 1.1, "3": 1.22})]}}
    md = ss.table_md(near, res)
    assert "| f | `c-75`: t | 1.05 | ≤ 1.25 | s1 1.28, s2 1.1, s3 1.22 | 1.2 | holds | 2/3 |" in md


def test_cli_rejects_bad_margin(capsys):
    with pytest.raises(SystemExit):
        ss.main(["x.json", "--out", "o", "--margin", "15"])
    assert "--margin 15.0: allowed: a fraction in (0, 1)" in capsys.readouterr().err
