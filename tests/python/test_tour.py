"""examples/tour.md: every python block runs, in order, in one namespace."""

import re

from conftest import ROOT

TOUR = ROOT / "examples" / "tour.md"


def test_tour_runs(tmp_path, monkeypatch, capsys):
    blocks = re.findall(r"^```python\n(.*?)^```", TOUR.read_text(), flags=re.S | re.M)
    assert len(blocks) >= 5
    monkeypatch.chdir(tmp_path)
    ns = {"__name__": "__tour__"}
    for i, code in enumerate(blocks):
        exec(compile(code, f"{TOUR.name} block {i + 1}", "exec"), ns)
    out = capsys.readouterr().out
    assert "incast p99 slowdown: dt" in out
    assert (tmp_path / "tour" / "dt" / "run.png").is_file() and (tmp_path / "tour" / "compare" / "compare.png").is_file()
    assert ns["s"]["drops_total"] > 0
