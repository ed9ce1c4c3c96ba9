"""Golden digests: the engine's outputs on the bundled scenarios and on small cases covering
every buffer-management scheme and every congestion control stay byte-identical.

Each case runs the Rust engine directly (``_core.simulate``) and hashes, with sha256,
a canonical serialization of its raw output: every column of the flow, query, constant-rate
and buffer-sample tables (column name, dtype, little-endian bytes, in sorted column order),
and separately the run's counters (sent, delivered, drops by cause, ECN marks, NIC peaks,
packets still in flight, end time). The number of events processed is stored on its own:
an optimization that removes events (same outputs, fewer events) changes only that number.

The digests live in ``golden_digests.json`` beside this file and were recorded from
unmodified ``main``. A change that is meant to change outputs (a model change, or a new tie
order) regenerates them in a commit of its own that says why and what moved:

    SHAREBUF_GOLDEN_UPDATE=1 python -m pytest -q tests/python/test_golden.py
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np
import pytest

DIGESTS = Path(__file__).with_name("golden_digests.json")
UPDATE = os.environ.get("SHAREBUF_GOLDEN_UPDATE") == "1"

SCHEMES = ["cs", "cp", "dt", "fab", "ib", "fb", "fba", "abm", "abm_approx", "cbm", "bshare", "lqd", "credence", "reverie"]
CCS = ["newreno", "dctcp", "cubic", "timely", "powertcp", "theta_powertcp", "hpcc"]

# Stats that are not simulation results: wall time, and the pool's high-water mark (how
# many packet slots were ever allocated depends on free-list order, not on the model).
NOT_RESULTS = {"wall_s", "pool_capacity_pkts", "events"}


def _small(scheme: str, cc: str, **sets) -> dict:
    """`default` shrunk: 20 ms of arrivals, queries at 50/s per host so there is incast."""
    base = {
        "arrivals_until_ms": 20,
        "max_ms": 400,
        "switch.bm.scheme": scheme,
        "transport.cc": cc,
        # Complete sharing/partitioning and LQD take no alpha: the whole table is replaced for them.
        **({"switch.bm": {"scheme": scheme}} if scheme in ("cs", "cp", "lqd") else {}),
        # Credence without a predictor file: "drop nothing" (shadow-LQD thresholds, B/N gate).
        **({"switch.bm": {"scheme": scheme, "prediction": "none"}} if scheme == "credence" else {}),
        "workload[1].queries_per_s_per_host": 50,
        "output.queue_sample_us": 0,
    }
    base.update(sets)
    return {"scenario": "default", "sets": base}


CASES: dict[str, dict] = {
    "default": {"scenario": "default", "sets": {}},
    "standard-20ms": {"scenario": "standard", "sets": {"arrivals_until_ms": 20}},
    "abm-eval-20ms": {"scenario": "abm-eval", "sets": {"arrivals_until_ms": 20, "max_ms": 400}},
}
# Every scheme, each with a different congestion control (rotating through all of them).
for i, s in enumerate(SCHEMES):
    CASES[f"small-{s}-{CCS[i % len(CCS)]}"] = _small(s, CCS[i % len(CCS)])
# Transport and host/switch variants the scheme sweep does not reach.
CASES.update({
    "small-dt-newreno-nosack-delack": _small("dt", "newreno", **{"transport.sack": False, "transport.delayed_ack_packets": 2}),
    "small-dt-cubic-prr-fqcodel": _small("dt", "cubic", **{"transport.recovery": "prr", "host.nic_qdisc": "fq_codel"}),
    "small-dt-hpcc-delack-int": _small("dt", "hpcc", **{"transport.delayed_ack_packets": 2}),
    "small-dt-dctcp-devq-sp": _small("dt", "dctcp", **{"switch.device_queue_packets": 2, "switch.scheduler": "sp"}),
    "small-abm-dctcp-ns3dc": _small("abm", "dctcp", profile="ns3dc"),
    "small-dt-newreno-drr-ippayload": _small("dt", "newreno", **{"switch.scheduler": "drr", "switch.buffer_accounting": "ip_payload"}),
    # FB on PISA with all four approximations (synced state, γ count, pow2, α levels).
    # No congestion control (the ABM code's AEM "theta-PowerTCP" class): fixed 20-segment window.
    "small-dt-fixed_window": _small("dt", "fixed_window", **{"transport.cc_params": {"window_packets": 20}}),
    # DCQCN (docs/lossless.md §3) on the lossy default: a CNP per ECN-echoing ACK.
    "small-dt-dcqcn": _small("dt", "dcqcn"),
    # The RoCE transport (docs/transports/roce.md) with DCQCN on a lossless priority under PFC,
    # marked at dequeue on a RED ramp.
    "small-dt-roce-dcqcn": _small("dt", "dcqcn", **{"transport.kind": "roce", "transport.handshake": False, "switch.lossless_priorities": [1],
                                                  "switch.ecn_k_bytes": [], "switch.red_kmin_bytes": 20_000, "switch.red_kmax_bytes": 80_000, "switch.red_pmax": 0.2}),
    "small-fb_pisa-newreno-sync": _small("fb_pisa", "newreno", **{"switch.bm.sync_period_us": 20, "switch.bm.alpha_levels": [0.5, 1, 2, 4, 8, 16]}),
})
CASES["star-cbr-contract"] = {"scenario": "examples/contract-star-cbr.toml", "sets": {}}
CASES["leaf-spine-contract"] = {"scenario": "examples/contract-leaf-spine.toml", "sets": {}}


def _spec_json(case: dict) -> str:
    from sharebuf.config import engine_spec_json, load_scenario, resolve
    from sharebuf.sweep import scenario_dict

    root = Path(__file__).resolve().parents[2]
    scen = case["scenario"]
    if scen.endswith(".toml"):
        scen = str(root / scen)
    sets = dict(case["sets"])
    profile = sets.pop("profile", None)
    if not sets:
        sc, base, _ = load_scenario(scen, profile)
    else:
        sc, base, _ = load_scenario(scenario_dict(scen, sets), profile)
    return engine_spec_json(resolve(sc, base))


def _hash_tables(raw: dict) -> str:
    h = hashlib.sha256()
    for table in ("flows", "queries", "cbr", "buffer", "queue_occupancy"):
        cols = raw.get(table) or {}
        h.update(f"[{table}]".encode())
        for name in sorted(cols):
            val = cols[name]
            if isinstance(val, tuple):
                dtype, buf = val
                arr = np.frombuffer(buf, dtype=np.dtype(dtype).newbyteorder("<"))
                h.update(f"{name}:{np.dtype(dtype).str}:{len(arr)}".encode())
                h.update(arr.astype(arr.dtype.newbyteorder("<"), copy=False).tobytes())
            else:
                h.update(f"{name}={json.dumps(val, sort_keys=True, default=str)}".encode())
    return h.hexdigest()


def _hash_counters(raw: dict) -> str:
    stats = {k: v for k, v in raw["stats"].items() if k not in NOT_RESULTS}
    extra = {k: raw[k] for k in ("switch_peak_bytes", "switch_final_bytes", "switch_buffer_bytes")}
    return hashlib.sha256(json.dumps([stats, extra], sort_keys=True).encode()).hexdigest()


def digest(case: dict) -> dict:
    from sharebuf import _core

    raw = _core.simulate(_spec_json(case), None)
    return {
        "tables": _hash_tables(raw),
        "counters": _hash_counters(raw),
        "events": int(raw["stats"]["events"]),
        "flows": int(len(np.frombuffer(raw["flows"]["src"][1], dtype=raw["flows"]["src"][0]))),
        "drops": int(sum(raw["stats"]["drops_pkts"].values())),
    }


@pytest.fixture(scope="module")
def stored() -> dict:
    if UPDATE:
        return {}
    assert DIGESTS.exists(), f"{DIGESTS} missing: record it with SHAREBUF_GOLDEN_UPDATE=1"
    return json.loads(DIGESTS.read_text())


_recorded: dict = {}


@pytest.mark.parametrize("name", list(CASES))
def test_golden_digest(name, stored):
    got = digest(CASES[name])
    if UPDATE:
        _recorded[name] = got
        old = json.loads(DIGESTS.read_text()) if DIGESTS.exists() else {}
        old[name] = got
        DIGESTS.write_text(json.dumps({k: old[k] for k in CASES if k in old}, indent=1, sort_keys=False) + "\n")
        return
    assert name in stored, f"no stored digest for {name}: record with SHAREBUF_GOLDEN_UPDATE=1"
    want = stored[name]
    # Compare the outputs first: a moved result is the failure to explain.
    assert got["flows"] == want["flows"] and got["drops"] == want["drops"], f"{name}: flows/drops {got['flows']}/{got['drops']} != {want['flows']}/{want['drops']}"
    assert got["tables"] == want["tables"], f"{name}: output tables changed"
    assert got["counters"] == want["counters"], f"{name}: counters changed"
    assert got["events"] == want["events"], f"{name}: events {got['events']} != stored {want['events']} (outputs unchanged)"


def test_digest_detects_a_one_picosecond_change():
    """The digest is sensitive: moving one flow's end by 1 ps changes it."""
    raw = {"flows": {"end_ps": ("<u8", np.array([5, 7], dtype="<u8").tobytes())}}
    moved = {"flows": {"end_ps": ("<u8", np.array([5, 8], dtype="<u8").tobytes())}}
    assert _hash_tables(raw) != _hash_tables(moved)


def test_cases_cover_every_scheme_and_cc():
    from sharebuf import _core  # noqa: F401  (the engine's registries)

    covered_s = {c["sets"].get("switch.bm.scheme") for c in CASES.values()}
    covered_c = {c["sets"].get("transport.cc") for c in CASES.values()}
    assert set(_core.schemes()) <= covered_s, "a registered scheme has no golden case"
    assert set(_core.congestion_controls()) <= covered_c, "a registered congestion control has no golden case"


def test_fifo_nic_backlog_marks_and_peaks_by_hand(star_scenario):
    """A FIFO host NIC's backlog, computed from departures fixed at enqueue, equals the hand
    count: a pre-opened DCTCP flow of exactly 20 full segments leaves in one burst of 20
    packets at t = 0 (init cwnd 20). Packet k (0-based) finds k - 1 packets of 1502 wire bytes
    waiting behind the one on the wire; with K = 3 packets' bytes it is CE-marked iff
    k - 1 >= 3, so packets 4..19 are marked (16); the largest backlog is 19 packets, 19 * 1502 B."""
    from sharebuf import _core
    from sharebuf.config import engine_spec_json, load_scenario, resolve

    wire = 1448 + 54
    sc = star_scenario(hosts=2, buffer_bytes=10_000_000)
    sc["transport"] = {"cc": "dctcp", "init_cwnd_packets": 20, "handshake": False}
    sc["host"] = {"nic_ecn_k_bytes": 3 * wire}
    sc["switch"]["ecn_k_bytes"] = 10_000_000
    sc["workload"] = [{"kind": "flows", "flows": [{"src": 0, "dst": 1, "size_bytes": 20 * 1448, "start_s": 0.0}]}]
    s, base, _ = load_scenario(sc)
    st = _core.simulate(engine_spec_json(resolve(s, base)), None)["stats"]
    assert st["nic_ecn_marks"] == 16
    assert st["nic_peak_pkts"] == 19
    assert st["nic_peak_bytes"] == 19 * wire
    assert st["ecn_marks"] == 0
