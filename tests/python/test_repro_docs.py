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


PAGE = """<!-- generated -->
# sharebuf reproductions — full scale

Claims: **3 hold, 1 fail, 1 inconclusive** of 5. Rendered on 2026-11-20 at commit abc1234 on 2 cores (x); seeds: FAB 1,2,3; FB 1,2,3; otherwise each figure’s full-scale seeds; wall time ≈ 12.0 min.

**Reduced from the papers’ seed counts:** fb-fig7 3 of 10 seeds; fb-fig8 3 of 10 seeds. Everything else runs as its spec asks.

| paper | claims | hold | fail | inconclusive | wall time | CPU time of its runs |
|---|---|---|---|---|---|---|
| FB | 3 | 2 | 1 | 0 | 10.0 min *est.* | 20.0 min |
| ABM | 2 | 1 | 0 | 1 | 2.0 min | 3.5 min |

## fb-fig7 — FB Fig. 7: kept

FB's text
| claim | x |

## abm-fig6 — ABM Fig. 6: replaced

ABM's old text
"""


def test_a_partial_render_keeps_the_other_papers_parts_of_the_page(tmp_path):
    from sharebuf.repro import list_figures

    specs = list_figures()
    doc = tmp_path / "page.md"
    doc.write_text(PAGE)
    kp = repro_docs.kept_page(doc, ["FB", "FAB", "CBM", "BSHARE"], specs)
    assert kp["render"] == "2026-11-20 abc1234"
    assert kp["rows"] == {"FB": dict(claims=3, holds=2, fails=1, inconclusive=0, wall="10.0 min *est.*", cpu="20.0 min",
                                     rendered="2026-11-20 abc1234")}
    assert kp["seeds"] == {"FAB": "1,2,3", "FB": "1,2,3"}
    assert kp["reduced"] == ["fb-fig7 3 of 10 seeds", "fb-fig8 3 of 10 seeds"]
    assert list(kp["sections"]) == ["fb-fig7"] and kp["sections"]["fb-fig7"].endswith("| claim | x |")
    assert repro_docs._seconds("10.0 min *est.*") == 600 and repro_docs._seconds("10 s") == 10
