"""The figure specs resolve to exactly the recorded runs.

Runs are content-addressed (``sharebuf.sweep.run_key``), so a spec edit that is meant to change
only how a spec is written (named lists, indexed keys instead of whole arrays) must leave every
``(series, x, seed, run key)`` of every packet figure, at every scale and its planned seeds,
as it was. ``spec_run_keys.json`` beside this file holds, per figure and scale, the number of
runs, the sorted run keys and a sha256 of the sorted ``(series, x, seed, run key)`` rows.

The keys are computed with a fixed model revision (the engine's source hash changes with every
engine edit; ``test_provenance`` checks that it enters the key), so this file follows the specs.
A change that is meant to change runs (a new series, another seed, a new engine parameter, a
version bump) regenerates the file in a commit of its own that says why:

    SHAREBUF_SPEC_KEYS_UPDATE=1 python -m pytest -q tests/python/test_spec_compact.py
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from sharebuf.repro.spec import SCALES, expand_defs, load_specs, points
from sharebuf.sweep import run_key

KEYS = Path(__file__).with_name("spec_run_keys.json")
UPDATE = os.environ.get("SHAREBUF_SPEC_KEYS_UPDATE") == "1"


def _rows(spec, scale):
    rows = [[sr, x, seed, run_key(sc)] for sr, x, seed, sc in points(spec, scale)]
    return sorted(rows, key=lambda r: json.dumps(r, ensure_ascii=False))


def _record(rows):
    return {
        "runs": len(rows),
        "points": hashlib.sha256(json.dumps(rows, ensure_ascii=False).encode()).hexdigest(),
        "keys": sorted(r[3] for r in rows),
    }


def _current():
    return {fid: {scale: _record(_rows(s, scale)) for scale in SCALES}
            for fid, s in load_specs().items() if s.simulated}


def _dump(d) -> str:
    """One line per figure and scale, so a diff shows which moved."""
    lines = []
    for i, (fid, scales) in enumerate(d.items()):
        inner = ",\n".join(f"  {json.dumps(sc)}: {json.dumps(rec)}" for sc, rec in scales.items())
        lines.append(f" {json.dumps(fid)}: {{\n{inner}\n }}" + ("," if i < len(d) - 1 else ""))
    return "{\n" + "\n".join(lines) + "\n}\n"


@pytest.fixture
def fixed_revision(monkeypatch):
    from sharebuf import provenance

    monkeypatch.setitem(provenance._REVISION, "value", "spec-test")


def test_specs_resolve_to_the_recorded_runs(fixed_revision):
    now = _current()
    if UPDATE:
        KEYS.write_text(_dump(now))
    want = json.loads(KEYS.read_text())
    assert sorted(now) == sorted(want), "packet figures added or removed"
    moved = []
    for fid, scales in want.items():
        for scale, rec in scales.items():
            got = now[fid][scale]
            if got != rec:
                lost = sorted(set(rec["keys"]) - set(got["keys"]))
                new = sorted(set(got["keys"]) - set(rec["keys"]))
                moved.append(f"{fid} {scale}: {rec['runs']} -> {got['runs']} runs, "
                             f"{len(lost)} keys gone {lost[:3]}, {len(new)} new {new[:3]}"
                             + ("" if lost or new else ", same keys on other (series, x, seed)"))
    assert not moved, "runs changed:\n" + "\n".join(moved)


def test_defs_and_for_expand_as_documented():
    d = expand_defs({
        "defs": {"f": {"@for": {"src": [3, 5], "priority": [1, 3]}, "dst": 0}, "wl": [{"flows": ["@f", {"src": 9, "dst": 0}]}],
                 "at": {"0.4": {"workload[0].load": 0.1}}},
        "series": [{"set": {"workload": "@wl"}, "x_set": "@at"}, {"set": {"workload": "@wl"}}],
    })
    assert "defs" not in d
    assert d["series"][0]["set"]["workload"] == [{"flows": [{"src": 3, "priority": 1, "dst": 0}, {"src": 4, "priority": 2, "dst": 0},
                                                             {"src": 5, "priority": 3, "dst": 0}, {"src": 9, "dst": 0}]}]
    assert d["series"][1]["set"] == d["series"][0]["set"] and d["series"][0]["x_set"] == {"0.4": {"workload[0].load": 0.1}}
    d["series"][0]["set"]["workload"][0]["flows"].clear()  # copies, not shared
    assert len(d["series"][1]["set"]["workload"][0]["flows"]) == 4
    for bad, msg in [({"x": "@nope"}, "no such entry"), ({"defs": {"a": "@b", "b": ["@a"]}, "x": "@a"}, "loop"),
                     ({"defs": {"a": 1}}, "never used"), ({"x": [{"@for": {"src": [5, 3]}}]}, "@for"),
                     ({"x": [{"@for": {"src": [1, 3], "p": [1, 2]}}]}, "equal length")]:
        with pytest.raises(ValueError, match=msg):
            expand_defs(bad)


def test_shared_runs_are_shared():
    """Every figure a spec names in ``shares_runs_with`` has runs of the same key (the recorded
    runs, which the test above holds the specs to)."""
    recorded = json.loads(KEYS.read_text())
    keys = {fid: {k for rec in scales.values() for k in rec["keys"]} for fid, scales in recorded.items()}
    wrong = [f"{fid} -> {other}" for fid, s in load_specs().items() for other in s.shares_runs_with
             if not keys.get(fid, set()) & keys.get(other, set())]
    assert not wrong, "shares_runs_with names a figure with none of the same runs: " + ", ".join(wrong)
