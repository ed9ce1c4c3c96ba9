"""The long flows of traced ns3dc runs kept in bench/ns3dc/results/grid (tcp_diag.py keep).

Each file must hold exactly the long (>= 1 MB) web-search flows of its run: the flows that
ns3dc_flows.py re-derives from ns3dc's glibc draws for the point and seed, under sharebuf's flow ids
(the replay's order), and as many as the run's own fct file lists. A trace matched to the wrong run,
seed or id mapping fails here."""

import gzip
import importlib
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NS3DC = ROOT / "bench" / "ns3dc"
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc rand() sequence")

KEPT = sorted((NS3DC / "results" / "grid").glob("*/long-*-s*.csv.gz"))


def _bench_module(name):
    """bench/ns3dc's module `name`, imported with its folder on the path while the fixture lives."""
    sys.path.insert(0, str(NS3DC))
    try:
        yield importlib.import_module(name)
    finally:
        sys.path.remove(str(NS3DC))


@pytest.fixture(scope="module")
def grid():
    yield from _bench_module("grid")


def test_some_traced_runs_are_kept():
    assert len(KEPT) >= 8


@pytest.mark.parametrize("path", KEPT, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_kept_flows_are_the_runs_long_flows(grid, path):
    import ns3dc_flows

    alg, seed = path.name.removeprefix("long-").removesuffix(".csv.gz").split("-s")
    p = {q["name"]: q for q in grid.points()}[path.parent.name]
    flows, _start = ns3dc_flows.generate(int(seed), p["launch_s"], **grid.generator(p))
    web = [f for f in flows if f[0] == "websearch"]
    want = {i: f[3] for i, f in enumerate(web) if f[3] >= grid.LONG_MIN}
    with gzip.open(path, "rt") as fh:
        head = fh.readline().strip().split(",")
        rows = [dict(zip(head, line.strip().split(","))) for line in fh]
    assert head == ["flow_id", "size_bytes", "timed_out", "retransmissions"]
    got = {int(r["flow_id"]): int(r["size_bytes"]) for r in rows}
    assert got == want
    assert {r["timed_out"] for r in rows} <= {"0", "1"}
    fct = grid.fct_path(p, alg, int(seed))
    assert fct is not None and len(grid.classes_ns3dc(fct)["long"][0]) == len(rows)
    # a flow that waited out a timeout resent at least the segment the timeout resent
    assert all(int(r["retransmissions"]) >= 1 for r in rows if r["timed_out"] == "1")


@pytest.fixture(scope="module")
def tcp_diag():
    yield from _bench_module("tcp_diag")


def test_recoveries_rank_the_retransmissions_and_name_the_one_a_timeout_resends(tcp_diag):
    """By hand: segments 0..4 sent; a recovery resends 1 (rank 0), sends new 5, resends 3 (rank 1);
    a timeout then resends 3 first. A second recovery resends 6 (rank 0) and ends in open."""
    ev = [(0, "send", s, "open") for s in range(5)]
    ev += [(10, "ack", 1, "disorder"), (11, "ack", 1, "disorder"), (11, "state", None, "recovery"), (11, "send", 1, "recovery"),
           (12, "ack", 1, "recovery"), (12, "send", 5, "recovery"), (13, "send", 3, "recovery"),
           (20, "state", None, "loss"), (20, "send", 3, "loss"), (21, "send", 6, "loss"),
           (30, "ack", 7, "open"), (31, "send", 7, "open"), (40, "ack", 7, "recovery"),
           (40, "send", 6, "recovery"), (50, "ack", 8, "open")]
    a, b = tcp_diag.recoveries_of(ev)
    assert (a["t0"], a["end"], a["acks"], a["sends"], a["rtx"], a["rto_seq"]) == (11, "loss", 1, 3, [(1, 11), (3, 13)], 3)
    assert (b["t0"], b["end"], b["acks"], b["sends"], b["rtx"], b["rto_seq"]) == (40, "open", 1, 1, [(6, 40)], None)
