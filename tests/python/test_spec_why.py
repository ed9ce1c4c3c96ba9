"""A claim's ``why`` explains a mechanism; it quotes no measured value (spec.why_lint)."""
import pytest

from sharebuf.repro import list_figures
from sharebuf.repro.spec import FigureSpec, why_lint

SPECS = list_figures()


@pytest.mark.parametrize("fid", list(SPECS))
def test_no_measured_number_in_a_why(fid):
    assert why_lint(SPECS[fid]) == []


def _spec(why: str, text: str = "ABM is 39% lower than DT at 12.5%") -> FigureSpec:
    return FigureSpec.model_validate(dict(
        id="t-fig1", paper="ABM", figure="Fig. 1", title="t", kind="packet", description="d", sources=[],
        scenario=dict(base="default", set={"workload[0].load": 0.4}),
        x=dict(key="workload[1].request_fraction_of_buffer", values=[0.125, 0.5], label="x", display_scale=100),
        series=[dict(name="ABM"), dict(name="DT")], scales=dict(quick=dict(), full=dict()),
        panels=[dict(id="a", metric="slowdown.p99.incast", label="p99")],
        claims=[dict(id="c", panel="a", text=text, rule="ratio", series="ABM", others=["DT"], at=0.125, max=0.85,
                     paper_value=0.61, why=why)]))


@pytest.mark.parametrize("why", [
    "ABM 9.7 vs DT 11.7: the burst fits",                    # measured values
    "475 of 704 incast responses time out under DT",         # a count from a run
    "DT's p99 is 8× ABM's",                                  # a measured multiplier
    "at 12.5% 23% of the incast flows wait out an RTO",      # a measured percentage
    "4/416 short flows time out",
])
def test_measured_numbers_are_refused(why):
    assert why_lint(_spec(why)), why


@pytest.mark.parametrize("why", [
    "",
    "A 12.5% request fits in DT's share (α = 0.5 of the free buffer), so no response waits out the 10 ms RTO "
    "and no scheme's p99 is a timeout: ABM has nothing to cut (ABM.md §4.2, Fig. 7; figures.md A-X6).",
    "ns-3.39's TcpCubic exits slow start by HyStart; RFC 6937 PRR; the 100-packet device FIFO below each queue.",
    "The paper's 0.61 is a ratio of p99s over the 40 ms window; see docs/validation.md.",
    "From 12.5% to 50% of the buffer the same holds.",
])
def test_mechanisms_pass(why):
    assert why_lint(_spec(why)) == [], why
