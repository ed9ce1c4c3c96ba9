#!/usr/bin/env python3
"""Where ns3dc's Credence example makes short flows slow, hop by hop, against sharebuf on the same
flows (docs/schemes/credence.md §5.8, "Where ns3dc's slow short flows wait").

ns3dc side: a per-queue trace of one run of `credence-evaluation` (a scratch copy with ns-3 trace
hooks added, no ns3dc model code changed), in bench/ns3dc/queue_trace.py's format:
`<prefix>-nodes.txt`, `<prefix>-sojourn.txt` (root queue discs' Dequeue) and
`<prefix>-devsojourn.txt` (the PointToPointNetDevice queues under them, Enqueue to Dequeue). Flows
are joined to the fct file by size and start and to the replayed flows by source, destination and
the SYN's first dequeue at the source (within 20 us of ns3dc's start).

sharebuf side: the point as bench/credence/ns3dc_point.py runs it (ns3dc's flows and hashes,
`--variant`, `--slow-start`, `--host-nic`), with LQD and its per-arrival trace instead of Credence:
the same run wherever neither drops (checked: the run must drop nothing). Waits at switch queues
are arrival to transmission start; sharebuf's host NICs are not traced.

Prints, for the short flows ns3dc makes slow (slowdown > --slow) and for the rest, the mean wait
per packet (us) at each hop: data and ACKs averaged over their packets, the SYN and SYN-ACK summed
over their hops; and the mean excess FCT (FCT - 24 us - size / 10 Gb/s) on both sides.

    python bench/credence/ns3dc_trace.py PREFIX --fct FCT --seed 1 [--variant default|profile]
        [--slow-start on|off] [--host-nic scenario|example] [--slow 5] [--out DIR]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "ns3dc"))

import ns3dc_point  # noqa: E402
import queue_trace  # noqa: E402

KEY = ["src_h", "dst_h", "sport", "dport"]
TYPES = {0: "ack", 1: "data", 2: "syn"}


def ns3dc_packets(prefix):
    """Every traced (node, device, 5-tuple, kind) of servers' flows, queue disc and device FIFO."""
    role, _, host_of_ip = queue_trace.load_nodes(prefix)
    qd = queue_trace.load_sojourn(prefix, role, host_of_ip)
    dev = queue_trace.load_sojourn(prefix, role, host_of_ip, device=True)
    return pd.concat([qd.assign(layer="qd"), dev.assign(layer="dev")], ignore_index=True)


def join_ns3dc(a, fct, websearch):
    """ns3dc's web-search flows (fct file rows) with their 5-tuple."""
    n = pd.read_csv(fct, sep=r"\s+")
    n = n[n.incast == 0]
    syn = a[(a.data == 2) & (a.role == "host") & (a.layer == "qd")].groupby(KEY).first_ns.min().reset_index()
    rows = []
    for r in n.itertuples():
        w = websearch[((websearch.size_bytes - r.flowsize).abs() <= max(0.5, r.flowsize * 6e-6))
                      & ((websearch.start_s * 1e6 - r.flowstart).abs() < 5)]
        if len(w) != 1:
            continue
        w = w.iloc[0]
        c = syn[(syn.src_h == w.src) & (syn.dst_h == w.dst)]
        if not len(c):
            continue
        k = (c.first_ns / 1e3 - 1e7 - r.flowstart).abs().idxmin()
        if abs(c.first_ns[k] / 1e3 - 1e7 - r.flowstart) <= 20:
            rows.append(dict(src_h=int(w.src), dst_h=int(w.dst), sport=c.sport[k], dport=c.dport[k], size=r.flowsize,
                             start_us=r.flowstart, fct_us=r.fct / 1e3, sd=r.slowdown))
    f = pd.DataFrame(rows)
    f["excess_us"] = f.fct_us - 24 - f["size"] * 8 / 1e4
    return f, len(n)


def ns3dc_waits(a, f):
    """Per flow: mean wait (us) per data packet and per ACK at each hop (queue disc + device FIFO),
    and the SYN's and SYN-ACK's summed."""
    a = a.assign(hop=a.role).set_index(KEY).sort_index()
    out = []
    for r in f.itertuples():
        d = {}
        for lab, tup, kind in (("data", (r.src_h, r.dst_h, r.sport, r.dport), 1), ("ack", (r.dst_h, r.src_h, r.dport, r.sport), 0),
                               ("syn", (r.src_h, r.dst_h, r.sport, r.dport), 2), ("synack", (r.dst_h, r.src_h, r.dport, r.sport), 2)):
            try:
                z = a.loc[tup]
            except KeyError:
                continue
            z = z[z.data == kind]
            for (hop, layer), g in z.groupby(["hop", "layer"]):
                v = g.sum_ns.sum() / 1e3 / (g.n.sum() if lab in ("data", "ack") else 1)
                d[f"{lab}@{hop}"] = d.get(f"{lab}@{hop}", 0.0) + v
        out.append(d)
    return pd.DataFrame(out, index=f.index).fillna(0.0)


def sharebuf_waits(trace, flow_ids):
    """Per sharebuf flow: the same waits at the switches (arrival to transmission start)."""
    t = trace[trace.flow.isin(flow_ids)].copy()
    t["w"] = (t.t_fate_ps - t.t_arrival_ps) / 1e6
    t["role"] = np.where(t.switch >= 2, "spine", np.where(t.port >= 16, "uplink", "downlink"))
    fl = t["flags"]
    syn, ack = (fl & 1) > 0, (fl & 2) > 0
    t["kind"] = np.where(syn & ack, "synack", np.where(syn, "syn", np.where((fl & 4) > 0, "data", "ack")))
    g = t.groupby(["flow", "kind", "role"]).w.agg(["sum", "size"])
    v = np.where(g.index.get_level_values("kind").isin(["data", "ack"]), g["sum"] / g["size"], g["sum"])
    s = pd.Series(v, index=g.index)
    s.index = [f"{k}@{r}" for _, k, r in s.index]
    return s.groupby([g.index.get_level_values("flow"), s.index]).sum().unstack(fill_value=0.0)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("prefix", help="the trace's file prefix")
    ap.add_argument("--fct", required=True, help="the traced run's fct file")
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--variant", default="default", choices=("default", "profile"))
    ap.add_argument("--slow-start", choices=("on", "off"), default="on")
    ap.add_argument("--host-nic", choices=("scenario", "example"), default="scenario")
    ap.add_argument("--slow", type=float, default=5.0, help="slowdown above which a short flow is slow")
    ap.add_argument("--out", default="credence-ns3dc-trace")
    a = ap.parse_args(argv)
    ne = ns3dc_point.ns3dc_ecmp_module()
    ex = ne.EXAMPLES["credence-evaluation"]
    flows, start, ports = ne.connections(a.seed, 0.5, load=0.4, request=int(0.5 * ns3dc_point.BUFFER), qrate=2.0, **ex)
    replay = Path(a.out) / "replay"
    ne.F.write_csvs(flows, start, a.seed, str(replay), hashes=ne.flow_hashes(flows, ports, ex["servers"]))
    res = ns3dc_point.sharebuf_run(a.seed, 0.5, 0.4, None, replay, a.variant, "flow", a.slow_start == "on", a.host_nic,
                                   lqd_trace=True)
    if res.summary["drops_total"]:
        raise SystemExit(f"sharebuf dropped {res.summary['drops_total']} packets: LQD is not Credence's run here")
    pk = ns3dc_packets(a.prefix)
    nf, n_rows = join_ns3dc(pk, a.fct, pd.read_csv(replay / f"websearch-s{a.seed}-ecmp.csv"))
    sf = res.flows[res.flows.workload != "incast"]
    m = nf.merge(sf[["flow_id", "src", "dst", "size_bytes", "start_s", "fct_s"]], left_on=["src_h", "dst_h", "size"],
                 right_on=["src", "dst", "size_bytes"])
    m = m[(m.start_s * 1e6 - m.start_us).abs() < 5].reset_index(drop=True)
    m["sb_excess_us"] = m.fct_s * 1e6 - 24 - m["size"] * 8 / 1e4
    sh = m[m["size"] < 100_000].reset_index(drop=True)
    nw = ns3dc_waits(pk, sh).add_prefix("ns3dc ")
    sw = sharebuf_waits(res.lqd_trace, sh.flow_id).reindex(sh.flow_id).fillna(0.0).add_prefix("sharebuf ")
    sw.index = sh.index
    w = pd.concat([nw, sw], axis=1).fillna(0.0)
    w["ns3dc excess FCT"], w["sharebuf excess FCT"] = sh.excess_us, sh.sb_excess_us
    slow = sh.sd > a.slow
    print(f"seed {a.seed}, sharebuf {a.variant}, slow start {a.slow_start}, host NICs {a.host_nic}: {len(nf)} of {n_rows} "
          f"ns3dc web-search flows joined to a traced 5-tuple, {len(sh)} short joined to sharebuf's, {int(slow.sum())} "
          f"with ns3dc slowdown > {a.slow:g}; sharebuf's largest host NIC backlog {res.summary['host_nic']['peak_pkts']} packets")
    cols = sorted(w.columns, key=lambda c: (c.split(" ")[-1].split("@")[-1], c.split(" ")[-1], c))
    tab = pd.DataFrame({"slow (mean, us)": w[slow][cols].mean(), "the rest (mean, us)": w[~slow][cols].mean()})
    print(tab[tab.max(axis=1) >= 0.05].round(1).to_string())
    return 0


if __name__ == "__main__":
    sys.exit(main())
