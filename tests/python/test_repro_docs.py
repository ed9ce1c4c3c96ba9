"""bench/repro_docs.py's per-paper wall time on a render resumed across calls."""

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("repro_docs", ROOT / "bench" / "repro_docs.py")
repro_docs = importlib.util.module_from_spec(spec)
spec.loader.exec_module(repro_docs)


def test_wall_is_the_sum_of_the_calls_when_they_could_do_the_work():
    # two calls on 2 workers: 600 s + 300 s of wall, capacity 1800 CPU-s >= 1700 CPU-s of runs
    papers = {"ABM": {"seeds": "1,2,3", "calls": [{"wall_s": 600.0, "jobs": 2}, {"wall_s": 300.0, "jobs": 2, "interrupted": True}]}}
    walls, est = repro_docs.paper_walls(papers, {"ABM": 1700.0}, cores=2)
    assert walls == {"ABM": 900.0} and est == set()


def test_runs_made_by_unrecorded_calls_give_an_estimate():
    # the recorded call (100 s on 2 workers) could not have done 1700 CPU-s: estimated 1700 / 2
    papers = {"ABM": {"seeds": None, "calls": [{"wall_s": 100.0, "jobs": 2}]}}
    walls, est = repro_docs.paper_walls(papers, {"ABM": 1700.0, "FB": 40.0}, cores=2)
    assert walls == {"ABM": 850.0, "FB": 20.0} and est == {"ABM", "FB"}


def test_the_table_marks_an_estimated_wall():
    from sharebuf.repro import list_figures, report

    specs = list_figures()
    allc = {"abm-fig6": {"claims": [{"verdict": "holds"}]}, "fab-fig3": {"claims": [{"verdict": "fails"}]}}
    lines = report.paper_table(allc, specs, {"ABM": 900.0, "FAB": 5.0}, {"ABM": 1700.0, "FAB": 9.0}, {"ABM"})
    assert any(line.startswith("| ABM |") and "15.0 min *est.*" in line for line in lines)
    assert any(line.startswith("| FAB |") and "| 5 s |" in line and "est." not in line for line in lines)
