#!/usr/bin/env python3
"""Property-based fuzzing of sharebuf through its Python API (Hypothesis).

Each case is a random scenario: a small star or leaf-spine, every registered buffer-management
scheme with random valid parameters, every congestion control, a mix of workloads (Poisson over a
bundled or file CDF, incast, constant rate, flow lists inline or from a CSV file), random queues,
schedulers, ECN, device FIFOs, NIC disciplines, buffer accounting; one case in four also carries a
near-valid mutation (a value just outside what is allowed: zero, negative, NaN, one too many, a
misspelt name, a malformed file). Each case is validated and resolved as `sharebuf run` does and
simulated with the engine's invariants on (`[debug] check_invariants`), and must:

- never crash: no exception other than a one-line `ScenarioError` naming what is wrong, no engine
  panic (an invariant violation is a panic);
- if it was refused, it carried a near-valid mutation (or scheme parameters whose combination the
  scheme refuses, with a message naming `switch.bm`);
- if it ran: the same case run again gives identical flows, queries, constant-rate, buffer and
  counter tables (determinism); packets and bytes sent = delivered + dropped + in flight; every
  flow finished, or the run hit its horizon and the flow is reported unfinished.

Short run: `tests/python/test_fuzz.py` (a few hundred cases). Long run:

    python bench/fuzz.py --cases 100000 --jobs 2 [--seed 1] [--out fuzz-failures]

prints cases per second as it goes and writes every failure, minimized by Hypothesis, as
`<out>/failure-<n>/scenario.toml` (plus its CDF/flow files and `error.txt`); exit code 1 if any.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Optional

# Engine panics are caught and reported; their backtraces would drown the log.
os.environ["RUST_BACKTRACE"] = "0"

import numpy as np  # noqa: E402
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

import sharebuf  # noqa: F401  (the package, so `_core` is the installed engine)
from sharebuf import _core
from sharebuf.scenario.engine_spec import engine_spec_json, resolve
from sharebuf.scenario.load import load_scenario
from sharebuf.errors import ScenarioError

SCHEMES = list(_core.schemes())
CCS = list(_core.congestion_controls())

# ----------------------------------------------------------------------------- strategies
small_pos = st.floats(0.05, 64.0, allow_nan=False)
frac = st.floats(0.05, 1.0, allow_nan=False)
interval_us = st.floats(5.0, 2000.0, allow_nan=False)


def _alpha(nq):
    """One alpha, or one per queue."""
    return st.one_of(small_pos, st.lists(small_pos, min_size=nq, max_size=nq))


def scheme_params(scheme: str, nq: int):
    """Random valid parameters of `scheme` (a random subset of its documented keys)."""
    keys = {
        "cs": {},
        "cp": {},
        "dt": {"alpha": _alpha(nq)},
        "fab": {"preset": st.sampled_from(["paper", "code"]), "alpha": _alpha(nq), "alpha_young": st.lists(st.floats(1.0, 1024.0), min_size=1, max_size=1),
                "age_unit": st.sampled_from(["packets", "bytes"]), "age_includes_packet": st.booleans(), "idle_reset_us": st.floats(0.0, 10_000.0)},
        "ib": {"mode": st.sampled_from(["nexus", "abm_code"]), "alpha": _alpha(nq), "afd": st.booleans(), "afd_per": st.sampled_from(["flow", "queue"]),
               "afd_count": st.sampled_from(["bytes", "packets"]), "afd_window_us": interval_us, "dpp": st.booleans(),
               "dpp_packets": st.integers(1, 200).map(float), "flow_idle_us": interval_us},
        "fb": {"alpha_low": small_pos, "alpha_high": small_pos, "congested": st.sampled_from(["threshold", "bytes", "soft"]),
               "np_count": st.sampled_from(["queues", "ports"]), "gamma": st.sampled_from(["scheduler", "measured"]), "gamma_min": st.floats(0.001, 0.5)},
        "fba": {"alpha_low": small_pos, "alpha_high": small_pos, "interval_us": interval_us, "np_count": st.sampled_from(["queues", "ports"])},
        "abm": {"preset": st.sampled_from(["paper", "eval", "code"]), "alpha": _alpha(nq), "alpha_unscheduled": st.floats(1.0, 1024.0),
                "headroom_bytes": st.floats(0.0, 200_000.0), "np_update": st.sampled_from(["instant", "interval"]),
                "mu_source": st.sampled_from(["scheduler", "measured"]), "mu_norm": st.sampled_from(["fastest", "port"]), "update_interval_us": interval_us},
        "abm_approx": {"preset": st.sampled_from(["paper", "eval", "code"]), "alpha": _alpha(nq), "update_interval_us": interval_us,
                       "mu_norm": st.sampled_from(["fastest", "port"])},
        "cbm": {"alpha": _alpha(nq), "alpha_unscheduled": st.floats(1.0, 1024.0), "min_bytes": st.floats(0.0, 5000.0), "update_interval_us": interval_us,
                "congested": st.sampled_from(["threshold", "buffer"]), "congested_fraction": frac, "safeguard_fraction": st.floats(0.5, 1.0)},
        "bshare": {"alpha": _alpha(nq), "alpha_unscheduled": st.floats(1.0, 1024.0), "min_bytes": st.floats(0.0, 5000.0), "update_interval_us": interval_us,
                   "congested": st.sampled_from(["threshold", "buffer"]), "congested_fraction": frac, "safeguard_fraction": st.floats(0.5, 1.0)},
        # prediction = "none" (the others need a recorded LQD trace or a trained forest)
        "credence": {"thresholds": st.sampled_from(["shadow", "code", "none"])},
        "reverie": {"gamma": st.floats(0.0, 0.999999), "alpha": _alpha(nq), "alpha_unscheduled": st.floats(1.0, 1024.0),
                    "sat_bytes": st.floats(100.0, 100_000.0), "filter": st.sampled_from(["integer", "real"])},
    }.get(scheme, {})
    required = {"credence": {"prediction": st.just("none")}}.get(scheme, {})
    if not keys and not required:
        return st.just({})
    return st.fixed_dictionaries(required, optional=keys)


@dataclass
class Case:
    scenario: dict
    #: Input files (name -> text), written next to the scenario.
    files: Dict[str, str] = field(default_factory=dict)
    #: The near-valid mutation applied ("" for none): a dotted key and what was done.
    near: str = ""
    #: Scheme parameters were drawn (their combination may be refused by the scheme).
    bm_params: bool = False
    #: The refusal message, if the case was refused.
    refusal: str = ""


def _cdf_text(draw) -> str:
    n = draw(st.integers(2, 5))
    # Sizes >= 500 B: a CDF of tiny flows at a high load means millions of flows per second.
    sizes = sorted(draw(st.lists(st.integers(500, 200_000), min_size=n, max_size=n)))
    probs = sorted(draw(st.lists(st.floats(0.0, 1.0), min_size=n - 1, max_size=n - 1))) + [1.0]
    return "".join(f"{s} {p!r}\n" for s, p in zip(sizes, probs))


@st.composite
def cases(draw, near_valid: bool = True) -> Case:
    files: Dict[str, str] = {}
    # Topology: small.
    if draw(st.booleans()):
        hosts = draw(st.integers(2, 6))
        topo = dict(kind="star", hosts=hosts, link_gbps=draw(st.sampled_from([1, 10, 25, 40, 100])), link_delay_us=draw(st.floats(0.1, 10.0)))
        n_hosts, leaves, spl = hosts, 1, hosts
    else:
        leaves, spl = draw(st.integers(1, 3)), draw(st.integers(1, 3))
        topo = dict(kind="leaf_spine", leaves=leaves, spines=draw(st.integers(1, 2)), servers_per_leaf=spl,
                    links_per_leaf_spine=draw(st.integers(1, 2)), host_link_gbps=draw(st.sampled_from([1, 10, 25, 40, 100])),
                    link_delay_us=draw(st.floats(0.1, 10.0)), ecmp_hash=draw(st.sampled_from(["salted", "same"])))
        if draw(st.booleans()):
            topo["fabric_link_gbps"] = draw(st.sampled_from([10, 40, 100]))
        n_hosts = leaves * spl
    if n_hosts < 2:
        topo["servers_per_leaf"] = spl = 2
        n_hosts = leaves * spl
    nq = draw(st.integers(1, 4))
    sched = draw(st.sampled_from(["sp", "rr", "drr"]))
    scheme = draw(st.sampled_from(SCHEMES))
    params = draw(scheme_params(scheme, nq))
    sw = dict(buffer_bytes=draw(st.integers(3_000, 2_000_000)), queues_per_port=nq, scheduler=sched, bm=dict(scheme=scheme, **params))
    if sched == "drr" and draw(st.booleans()):
        sw["drr_weights"] = draw(st.lists(st.integers(1, 8), min_size=nq, max_size=nq))
        sw["drr_quantum_bytes"] = draw(st.integers(64, 9000))
    if draw(st.booleans()):
        sw["ecn_k_bytes"] = draw(st.one_of(st.integers(0, 200_000), st.lists(st.integers(0, 200_000), min_size=nq, max_size=nq)))
    sw["device_queue_packets"] = draw(st.sampled_from([0, 0, 1, 2, 10]))
    header = draw(st.integers(22, 80))
    sw["buffer_accounting"] = draw(st.sampled_from(["wire", "ip_payload"]))
    cc = draw(st.sampled_from(CCS))
    mss = draw(st.one_of(st.integers(500, 9000), st.integers(100, 500)))
    sack = draw(st.booleans())
    tr = dict(cc=cc, mss_bytes=mss, header_bytes=header, init_cwnd_packets=draw(st.integers(1, 20)),
              min_rto_us=draw(st.floats(100.0, 5000.0)), handshake=draw(st.booleans()), delayed_ack_packets=draw(st.integers(1, 3)),
              delayed_ack_timeout_us=draw(st.floats(1.0, 500.0)), ack_priority=draw(st.integers(0, 7)), sack=sack,
              recovery=draw(st.sampled_from(["rfc6675", "prr"])) if sack else "rfc6675",
              timestamp_tick_us=draw(st.sampled_from([0.0, 0.0, 1000.0])), unscheduled_acks=draw(st.booleans()))
    host = dict(nic_qdisc=draw(st.sampled_from(["fifo", "fq_codel"])), device_queue_packets=draw(st.sampled_from([0, 0, 1, 5])),
                nic_ecn_k_bytes=draw(st.sampled_from(["switch", "none", 30_000])))
    link = topo.get("link_gbps", topo.get("host_link_gbps"))
    # Workloads: 1 to 3, any mix.
    wls = []
    hosts = st.integers(0, n_hosts - 1)

    def pair():
        s = draw(hosts)
        d = draw(hosts.filter(lambda x: x != s))
        return s, d

    arrivals_ms = draw(st.floats(0.02, 0.5))
    for i in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["poisson", "incast", "cbr", "flows", "flows_file"]))
        prio = draw(st.integers(0, 7))
        if kind == "poisson":
            w = dict(kind="poisson", load=draw(st.floats(0.05, 0.9)), priority=prio, destinations="all_to_all")
            if draw(st.integers(0, 3)) == 0:
                w["cdf"] = draw(st.sampled_from(["websearch", "datamining", "hadoop"]))
            else:
                name = f"cdf{i}.txt"
                files[name] = _cdf_text(draw)
                w["cdf"] = name
            if leaves > 1 and draw(st.booleans()):
                w["destinations"] = "inter_leaf"
                w["load_definition"] = draw(st.sampled_from(["host", "uplink"]))
        elif kind == "incast":
            responders = n_hosts - 1 if leaves == 1 else n_hosts - spl
            w = dict(kind="incast", request_bytes=draw(st.integers(1_000, 400_000)), fan_in=draw(st.integers(1, responders)),
                     queries_per_s_per_host=draw(st.floats(100.0, 5000.0)), responders="any" if leaves == 1 else draw(st.sampled_from(["any", "other_leaf"])),
                     priority=prio)
        elif kind == "cbr":
            fl = []
            for _ in range(draw(st.integers(1, 3))):
                s, d = pair()
                start = draw(st.floats(0.0, 0.2))
                fl.append(dict(src=s, dst=d, rate_gbps=draw(st.floats(0.1, float(link))), start_ms=start, stop_ms=start + draw(st.floats(0.0, 0.1)),
                               packet_bytes=draw(st.integers(500, 9000))))
            w = dict(kind="cbr", flows=fl, priority=prio)
        else:
            rows = []
            for j in range(draw(st.integers(1, 6))):
                s, d = pair()
                rows.append(dict(src=s, dst=d, size_bytes=draw(st.integers(1, 300_000)), start_s=draw(st.floats(0.0, 2e-4)),
                                 priority=draw(st.integers(0, 7))))
            if kind == "flows":
                w = dict(kind="flows", flows=[dict(src=r["src"], dst=r["dst"], size_bytes=r["size_bytes"], start_ms=r["start_s"] * 1e3, priority=r["priority"]) for r in rows])
            else:
                name = f"flows{i}.csv"
                files[name] = "id,src,dst,size_bytes,start_s,priority\n" + "".join(
                    f"{j},{r['src']},{r['dst']},{r['size_bytes']},{r['start_s']!r},{r['priority']}\n" for j, r in enumerate(rows))
                w = dict(kind="flows", file=name)
            if draw(st.booleans()):
                w["handshake"] = draw(st.booleans())
        if kind != "cbr" and draw(st.integers(0, 4)) == 0:
            w["cc"] = draw(st.sampled_from(CCS))
        wls.append(w)
    # A tiny simulation: about 3,000 full packets per host link at most before the horizon.
    max_ms = min(draw(st.floats(0.3, 3.0)), 3000 * (mss + header) * 8 / (link * 1e6))
    sc = dict(seed=draw(st.integers(0, 2**32)), max_ms=max_ms, arrivals_until_ms=arrivals_ms, topology=topo, switch=sw,
              host=host, transport=tr, workload=wls,
              output=dict(buffer_sample_us=draw(st.sampled_from([20.0, 100.0, 500.0])), queue_sample_us=draw(st.sampled_from([0.0, 0.0, 50.0]))),
              debug=dict(check_invariants=True))
    case = Case(sc, files, bm_params=bool(params))
    if near_valid and draw(st.integers(0, 3)) == 0:
        draw(st.sampled_from(MUTATIONS))(draw, case, n_hosts, nq)
    return case


# ----------------------------------------------------------------------------- near-valid values
def _set(case: Case, dotted: str, value, what: str = "") -> None:
    d = case.scenario
    *path, leaf = dotted.split(".")
    for k in path:
        d = d[int(k)] if isinstance(d, list) else d.setdefault(k, {})
    d[leaf] = value
    case.near = f"{dotted} = {value!r}{' ' + what if what else ''}"


def _workload(case: Case, kind: str) -> Optional[int]:
    for i, w in enumerate(case.scenario["workload"]):
        if w["kind"] == kind and (kind != "flows" or "flows" in w):
            return i
    return None


def m_buffer(draw, c, n, nq):
    _set(c, "switch.buffer_bytes", draw(st.sampled_from([0, -1, 1.5, "1MB"])))


def m_queues(draw, c, n, nq):
    _set(c, "switch.queues_per_port", draw(st.sampled_from([0, 9, -1])))


def m_sched(draw, c, n, nq):
    _set(c, "switch.scheduler", draw(st.sampled_from(["wfq", "SP", ""])))


def m_drr(draw, c, n, nq):
    c.scenario["switch"]["scheduler"] = "drr"
    _set(c, "switch.drr_weights", draw(st.sampled_from([[1] * (nq + 1), [0] * nq, [-1] * nq])))


def m_ecn(draw, c, n, nq):
    _set(c, "switch.ecn_k_bytes", draw(st.sampled_from([[1000] * (nq + 1), -5, [float("nan")] * nq])))


def m_scheme(draw, c, n, nq):
    _set(c, "switch.bm.scheme", draw(st.sampled_from(["dtt", "DT", "", "python"])))


def m_scheme_param(draw, c, n, nq):
    key = draw(st.sampled_from(["alpha", "alpha_x", "update_interval_us", "congested_fraction", "interval_us"]))
    _set(c, f"switch.bm.{key}", draw(st.sampled_from([-0.5, 0.0, float("nan"), float("inf"), "high", [1.0] * (nq + 1), True])))


def m_cc(draw, c, n, nq):
    _set(c, "transport.cc", draw(st.sampled_from(["reno2", "Cubic", ""])))


def m_cc_param(draw, c, n, nq):
    cc = c.scenario["transport"]["cc"]
    key = {"dctcp": "g", "cubic": "beta", "timely": "t_low_us", "powertcp": "gamma", "theta_powertcp": "gamma", "hpcc": "eta"}.get(cc, "x")
    _set(c, f"transport.cc_params.{key}", draw(st.sampled_from([-1.0, 0.0, float("nan"), "fast", 1e300])))


def m_transport(draw, c, n, nq):
    key, val = draw(st.sampled_from([("mss_bytes", 0), ("mss_bytes", 70000), ("init_cwnd_packets", 0), ("min_rto_us", 0.0), ("min_rto_us", -1.0),
                                     ("ack_priority", 8), ("header_bytes", -1), ("delayed_ack_packets", 0), ("max_rto_us", float("nan")),
                                     ("recovery", "prr2"), ("timestamp_tick_us", -1.0)]))
    _set(c, f"transport.{key}", val)


def m_topology(draw, c, n, nq):
    t = c.scenario["topology"]
    if t["kind"] == "star":
        key, val = draw(st.sampled_from([("hosts", 1), ("hosts", 0), ("link_gbps", 0), ("link_gbps", -10), ("link_delay_us", -1.0), ("link_gbps", float("nan"))]))
    else:
        key, val = draw(st.sampled_from([("leaves", 0), ("spines", 0), ("servers_per_leaf", 0), ("host_link_gbps", 0), ("fabric_link_gbps", -1),
                                         ("links_per_leaf_spine", 0), ("ecmp_hash", "random")]))
    _set(c, f"topology.{key}", val)


def m_incast(draw, c, n, nq):
    c.scenario["workload"].append(dict(kind="incast", request_bytes=10_000, fan_in=n + draw(st.integers(0, 3)), queries_per_s_per_host=1000.0))
    c.near = f"workload[{len(c.scenario['workload']) - 1}].fan_in = {c.scenario['workload'][-1]['fan_in']} (hosts: {n})"


def m_cbr(draw, c, n, nq):
    what = draw(st.sampled_from(["stop<start", "src=n", "rate0", "self", "rate_nan"]))
    f = dict(src=0, dst=1, rate_gbps=1.0, start_ms=0.1, stop_ms=0.2)
    if what == "stop<start":
        f["stop_ms"] = 0.05
    elif what == "src=n":
        f["src"] = n
    elif what == "rate0":
        f["rate_gbps"] = 0.0
    elif what == "self":
        f["dst"] = 0
    else:
        f["rate_gbps"] = float("nan")
    c.scenario["workload"].append(dict(kind="cbr", flows=[f]))
    c.near = f"cbr flow {what}"


def m_flows(draw, c, n, nq):
    what = draw(st.sampled_from(["self", "dst=n", "size0", "start<0", "size_nan"]))
    f = dict(src=0, dst=1, size_bytes=1000, start_ms=0.0)
    if what == "self":
        f["dst"] = 0
    elif what == "dst=n":
        f["dst"] = n
    elif what == "size0":
        f["size_bytes"] = 0
    elif what == "start<0":
        f["start_ms"] = -1.0
    else:
        f["size_bytes"] = float("nan")
    c.scenario["workload"].append(dict(kind="flows", flows=[f]))
    c.near = f"flows entry {what}"


def m_flow_file(draw, c, n, nq):
    row = draw(st.sampled_from(["0,1,nan,0.0", "0,1,1000,nan", "0,1,1000,inf", "0,1,,0.0", "0,1,-5,0.0", "0,1,1.5,0.0", f"0,{n},1000,0.0",
                                "0,0,1000,0.0", "x,1,1000,0.0", "0,1,1000"]))
    c.files["bad_flows.csv"] = "src,dst,size_bytes,start_s\n1,0,500,0.0\n" + row + "\n"
    c.scenario["workload"].append(dict(kind="flows", file="bad_flows.csv"))
    c.near = f"flows file row {row!r}"


def m_cdf_file(draw, c, n, nq):
    text = draw(st.sampled_from(["100 0.5\n50 1.0\n", "100 0.2\n200 0.9\n", "100 0.5\n200 1.5\n", "100 -0.1\n200 1.0\n", "100 nan\n200 1.0\n",
                                 "100 1.0\n", "", "abc\n", "-100 0.5\n200 1.0\n", "0 0\n0 1\n"]))
    c.files["bad.cdf"] = text
    c.scenario["workload"].append(dict(kind="poisson", cdf="bad.cdf", load=0.3, destinations="all_to_all"))
    c.near = f"cdf file {text!r}"


def m_unknown(draw, c, n, nq):
    sect = draw(st.sampled_from(["", "switch.", "transport.", "host.", "output.", "debug.", "topology."]))
    _set(c, f"{sect}bogus_key", 1)


def m_times(draw, c, n, nq):
    key, val = draw(st.sampled_from([("max_ms", 0.0), ("max_ms", -1.0), ("max_ms", float("inf")), ("arrivals_until_ms", -1.0), ("seed", -1),
                                     ("output.buffer_sample_us", -1.0), ("output.queue_sample_us", float("nan")), ("debug.check_invariants", 2)]))
    _set(c, key, val)


def m_host(draw, c, n, nq):
    key, val = draw(st.sampled_from([("host.nic_qdisc", "red"), ("host.device_queue_packets", -1), ("host.nic_ecn_k_bytes", -1),
                                     ("switch.device_queue_packets", 100_001), ("switch.buffer_accounting", "ip")]))
    _set(c, key, val)


MUTATIONS = [m_buffer, m_queues, m_sched, m_drr, m_ecn, m_scheme, m_scheme_param, m_cc, m_cc_param, m_transport, m_topology,
             m_incast, m_cbr, m_flows, m_flow_file, m_cdf_file, m_unknown, m_times, m_host]


# ----------------------------------------------------------------------------- the property
class Failure(AssertionError):
    """A case broke a property: the message says which."""


def _materialize(case: Case, d: Path) -> dict:
    """Write the case's files into `d`; the scenario with absolute file references."""
    sc = json.loads(json.dumps(case.scenario, allow_nan=True))
    for name, text in case.files.items():
        (d / name).write_text(text)
    for w in sc.get("workload", []):
        for k in ("cdf", "file"):
            if isinstance(w.get(k), str) and w[k] in case.files:
                w[k] = str(d / w[k])
    return sc


def _table(raw: dict) -> dict:
    """Everything a run returns that must be identical across identical runs."""
    out = {k: raw[k] for k in ("flows", "queries", "cbr", "buffer", "queue_occupancy")}
    out["stats"] = {k: v for k, v in raw["stats"].items() if k != "wall_s"}
    return out


def check(case: Case) -> str:
    """Run one case; return "ran" or "refused"; raise Failure on a broken property."""
    with tempfile.TemporaryDirectory(prefix="sharebuf-fuzz-") as tmp:
        sc_dict = _materialize(case, Path(tmp))
        try:
            try:
                sc, base, _ = load_scenario(sc_dict)
                spec = resolve(sc, base)
                spec_json = engine_spec_json(spec)
                raw = _core.simulate(spec_json, None)
            except ValueError as e:  # the engine's own refusals: `sharebuf.run` maps them to ScenarioError
                raise ScenarioError(str(e)) from None
        except ScenarioError as e:
            msg = str(e)
            if not msg or "\n" in msg.strip() or len(msg) > 1000:
                raise Failure(f"unclear refusal (must be one line naming the key): {msg!r}")
            case.refusal = msg
            if case.near:
                return "refused"
            if case.bm_params and "switch.bm" in msg:
                return "refused"
            raise Failure(f"a valid scenario was refused: {msg}")
        except Failure:
            raise
        except BaseException as e:  # noqa: BLE001  (an engine panic is a BaseException)
            if isinstance(e, KeyboardInterrupt):
                raise
            raise Failure(f"crash: {type(e).__name__}: {e}\n{traceback.format_exc()}") from None
        s = raw["stats"]
        end = np.frombuffer(raw["flows"]["end_ps"][1], dtype=raw["flows"]["end_ps"][0])
        if not s["hit_max_time"] and (end == np.iinfo(np.uint64).max).any():
            raise Failure(f"{int((end == np.iinfo(np.uint64).max).sum())} flows unfinished in a run that drained")
        try:
            raw2 = _core.simulate(spec_json, None)
        except BaseException as e:  # noqa: BLE001
            raise Failure(f"second run crashed: {type(e).__name__}: {e}") from None
        a, b = _table(raw), _table(raw2)
        if a != b:
            diff = [k for k in a if a[k] != b[k]]
            raise Failure(f"not deterministic: the same case twice differs in {diff}")
        return "ran"


# ----------------------------------------------------------------------------- driver
def write_failure(case: Case, error: str, out: Path) -> Path:
    import tomli_w

    out.mkdir(parents=True, exist_ok=True)
    n = 1
    while (out / f"failure-{n}").exists():
        n += 1
    d = out / f"failure-{n}"
    d.mkdir()
    for name, text in case.files.items():
        (d / name).write_text(text)
    try:
        (d / "scenario.toml").write_text(tomli_w.dumps(case.scenario))
    except Exception:  # noqa: BLE001  (a value TOML cannot hold)
        (d / "scenario.json").write_text(json.dumps(case.scenario, indent=1, allow_nan=True))
    (d / "error.txt").write_text(f"near-valid mutation: {case.near or '(none)'}\n\n{error}\n")
    return d


def run_chunk(n: int, chunk_seed: int, out: Path, counts: dict) -> Optional[Path]:
    """Run `n` cases with Hypothesis from `chunk_seed`; on a failure write its minimized case."""
    last: dict = {}

    @seed(chunk_seed)
    @settings(max_examples=n, database=None, deadline=None, derandomize=False, phases=[Phase.generate, Phase.shrink],
              suppress_health_check=list(HealthCheck), print_blob=False)
    @given(cases())
    def prop(case):
        counts["cases"] += 1
        try:
            counts[check(case)] += 1
        except Failure as e:
            last["case"], last["error"] = case, str(e)
            raise

    try:
        prop()
    except Failure:
        return write_failure(last["case"], last["error"], out)
    return None


def worker(args) -> dict:
    cases_n, first_seed, chunk, out, deadline = args
    counts = {"cases": 0, "ran": 0, "refused": 0, "failures": []}
    done, k = 0, 0
    t0 = time.perf_counter()
    while done < cases_n and time.time() < deadline:
        n = min(chunk, cases_n - done)
        f = run_chunk(n, first_seed + k, Path(out), counts)
        if f is not None:
            counts["failures"].append(str(f))
            print(f"[seed {first_seed + k}] FAILURE written to {f}", flush=True)
        done += n
        k += 1
        el = time.perf_counter() - t0
        print(f"[worker {first_seed}] {counts['cases']} cases ({counts['ran']} ran, {counts['refused']} refused), "
              f"{counts['cases'] / el:.1f} cases/s, {len(counts['failures'])} failures", flush=True)
    counts["wall_s"] = time.perf_counter() - t0
    return counts


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=10_000)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--chunk", type=int, default=500, help="cases per Hypothesis run (a failure ends its chunk)")
    ap.add_argument("--out", default="fuzz-failures")
    ap.add_argument("--max-minutes", type=float, default=None, help="stop starting chunks after this long (reports the cases done)")
    a = ap.parse_args(argv)
    per = [a.cases // a.jobs + (1 if i < a.cases % a.jobs else 0) for i in range(a.jobs)]
    deadline = time.time() + (a.max_minutes * 60 if a.max_minutes else 1e12)
    jobs = [(per[i], a.seed * 1_000_003 + i * 100_000, a.chunk, a.out, deadline) for i in range(a.jobs)]
    t0 = time.perf_counter()
    if a.jobs == 1:
        results = [worker(jobs[0])]
    else:
        import multiprocessing as mp

        with mp.get_context("fork").Pool(a.jobs) as pool:
            results = pool.map(worker, jobs)
    wall = time.perf_counter() - t0
    tot = {k: sum(r[k] for r in results) for k in ("cases", "ran", "refused")}
    fails = [f for r in results for f in r["failures"]]
    print(json.dumps(dict(**tot, failures=len(fails), wall_s=round(wall, 1), cases_per_s=round(tot["cases"] / wall, 2),
                          jobs=a.jobs, seed=a.seed, engine=_core.__file__, failure_dirs=fails)))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
