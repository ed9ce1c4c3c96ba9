"""The queues of the ABM authors' nPrior = 8 runs (bench/ns3dc_priority_draws.py) and abm-fig12's use of them.

The replicated glibc draw sequence is checked against ns3dc's own output: its fct files' priority
column for run-interval.sh's setup at two FlowLaunchEndTimes (runs on this machine, 2026-11-23)."""

import importlib.util
import sys
from pathlib import Path

import pytest

from sharebuf.repro.spec import load_specs

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc rand() sequence")


def _draws():
    spec = importlib.util.spec_from_file_location("ns3dc_priority_draws", ROOT / "bench" / "ns3dc_priority_draws.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _queues(rows):
    return [(r["websearch_priority"], r["incast_priority"]) for r in rows]


def test_draws_match_ns3dc_fct_files():
    d = _draws()
    # ns3dc fct files: web search priorities {3, 6}, incast {2, 6} at 10.15 s; {3, 2} and {5, 4} at 10.5 s.
    assert _queues(d.priorities(10.15)) == [(3, 2), (6, 6)]
    assert _queues(d.priorities(10.5)) == [(3, 5), (2, 4)]
    # nPrior 2 (every other ABM script): always queue 1.
    assert _queues(d.priorities(13, nprior=2)) == [(1, 1), (1, 1)]


def test_abm_fig12_uses_the_published_runs_queues():
    (l0, l1) = _draws().priorities(13.0)  # run-interval.sh: FlowLaunchEndTime 13
    wl = load_specs()["abm-fig12"].scenario.set["workload"]
    by = {w["name"]: w for w in wl}
    assert by["websearch-leaf0"]["priority"] == l0["websearch_priority"] == 3
    assert by["websearch-leaf1"]["priority"] == l1["websearch_priority"] == 4
    # leaf L's incast: requesters on L, responders (the senders, whose priority it is) on L + 1
    assert by["incast-leaf0"]["priority"] == l0["incast_priority"] == 5
    assert by["incast-leaf1"]["priority"] == l1["incast_priority"] == 5
    assert by["websearch-leaf0"]["sources"] == list(range(32)) and by["incast-leaf0"]["requesters"] == list(range(32))
