#!/usr/bin/env python3
"""Where an ns3dc run's short flows wait: reads a per-queue sojourn trace of one ns3dc run and
prints, flow by flow, how long each flow's packets waited at each hop.

The trace comes from a scratch copy of ns3dc's `abm-evaluation` with ns-3 trace hooks added (no
ns3dc model code changes; docs/validation.md, DCTCP, "Where ns3dc's short flows wait"): every
root queue disc's `Dequeue` trace source, aggregated per (node, device, TCP 5-tuple, data / ACK /
SYN) over a time window into the count, sum and maximum of the sojourn (dequeue time minus the
item's enqueue stamp) and the first and last dequeue times (`<prefix>-sojourn.txt`), the queue
discs' and device queues' lengths sampled periodically (`<prefix>-queues.txt`), and each node's
devices with their address and queue disc type (`<prefix>-nodes.txt`). The device FIFO under each
queue disc (100 packets) is not in the sojourns; its samples are. The Credence example's tracer
also writes the device FIFOs' sojourns (`<prefix>-devsojourn.txt`, `load_sojourn(device=True)`;
bench/credence/ns3dc_trace.py).

Flows are joined to the grid point's replayed websearch flows (scenarios/replay/<point>/) by
source, destination and the SYN's first dequeue at the source (within 1 ms of the start), and to
ns3dc's fct file by size and start (perflow.py's rule). Hops: the source host's NIC (FqCoDel), the
source leaf's uplink, the spine's port, the destination leaf's port to the host; the ACKs' hops
the other way.

Usage: python3 queue_trace.py PREFIX --point dctcp-b0.75 --seed 1 [--scheme dt] [--slow 10]
                              [--sharebuf-variant profile] [--list]
"""
import argparse
import gzip
import ipaddress
import os
import sys

import numpy as np
import pandas as pd

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import grid  # noqa: E402

BASE_US = 80.0
HOPS = ["host", "uplink", "spine", "downlink"]


def load_nodes(prefix):
    """(node, dev) -> role, host index of each host node, address -> host."""
    n = pd.read_csv(prefix + "-nodes.txt", sep=r"\s+")
    n["ip"] = [int(ipaddress.IPv4Address(a)) for a in n.addr]
    hosts = n[n.qdisc.str.contains("FqCoDel")].sort_values("node")
    first = int(hosts.node.min())
    host_of_node = {int(x): int(x) - first for x in hosts.node}
    host_of_ip = {int(ip): int(nd) - first for ip, nd in zip(hosts.ip, hosts.node)}
    host_nets = {ip >> 10 for ip in hosts.ip}          # each leaf's servers share a /22
    leaves = set(n[n.ip.apply(lambda ip: ip >> 10 in host_nets) & ~n.node.isin(hosts.node)].node)
    role = {}
    for r in n.itertuples():
        if r.node in host_of_node:
            role[(r.node, r.dev)] = "host"
        elif r.node in leaves:
            role[(r.node, r.dev)] = "downlink" if (r.ip >> 10) in host_nets else "uplink"
        else:
            role[(r.node, r.dev)] = "spine"
    return role, host_of_node, host_of_ip


def load_sojourn(prefix, role, host_of_ip, device=False):
    """The queue discs' sojourns, or with ``device`` the device FIFOs' (`<prefix>-devsojourn.txt`,
    written by the Credence example's tracer: Enqueue to Dequeue of each PointToPointNetDevice
    queue, same columns)."""
    s = pd.read_csv(prefix + ("-devsojourn.txt" if device else "-sojourn.txt"), sep=r"\s+")
    s = s[s.src.isin([str(ipaddress.IPv4Address(i)) for i in host_of_ip])].copy()
    ip2h = {str(ipaddress.IPv4Address(i)): h for i, h in host_of_ip.items()}
    s["src_h"] = s.src.map(ip2h)
    s["dst_h"] = s.dst.map(ip2h)
    s["role"] = [role[(a, b)] for a, b in zip(s.node, s.dev)]
    return s


def flows_of(s):
    """One row per data direction (src_h, dst_h, sport, dport): SYN time at the source, per-hop
    sojourn of the data and of the ACKs coming back."""
    key = ["src_h", "dst_h", "sport", "dport"]
    d = s[s.data >= 1]
    syn = d[(d.data == 2) & (d.role == "host")].groupby(key).first_ns.min().rename("syn_ns")
    first = d[(d.data == 1) & (d.role == "host")].groupby(key).first_ns.min().rename("first_data_ns")
    out = pd.concat([syn, first], axis=1)
    data = d[d.data == 1]
    for hop in HOPS:
        g = data[data.role == hop].groupby(key)
        out[f"{hop}_mean_us"] = g.sum_ns.sum() / g.n.sum() / 1e3
        out[f"{hop}_max_us"] = g.max_ns.max() / 1e3
    syn = d[d.data == 2].groupby(key)
    out["syn_wait_us"] = syn.sum_ns.sum() / syn.n.sum() * 4 / 1e3      # one SYN over the 4 hops
    rev = {"src_h": "dst_h", "dst_h": "src_h", "sport": "dport", "dport": "sport"}
    sa = s[s.data == 2].rename(columns=rev)
    sa = sa.set_index(key).loc[lambda x: x.index.isin(out.index)].groupby(key)
    out["synack_wait_us"] = sa.sum_ns.sum() / sa.n.sum() * 4 / 1e3
    a = s[s.data == 0].rename(columns=rev)
    for hop in HOPS:
        g = a[a.role == hop].groupby(key)
        out[f"ack_{hop}_max_us"] = g.max_ns.max() / 1e3
    return out.reset_index()


def join_replay(f, point, seed, t0_s):
    """Attach each flow's replayed websearch row (size, start) by src, dst and SYN time."""
    ws = pd.read_csv(os.path.join(HERE, "scenarios", "replay", point, f"websearch-s{seed}.csv"))
    f = f[f.syn_ns.notna()].copy()
    f["start_s"] = f.syn_ns / 1e9 - t0_s
    rows = []
    for (a, b), g in f.groupby(["src_h", "dst_h"]):
        w = ws[(ws.src == a) & (ws.dst == b)]
        for r in g.itertuples():
            if len(w):
                k = (w.start_s - r.start_s).abs().idxmin()
                if abs(w.start_s[k] - r.start_s) < 1e-3:
                    rows.append((r.Index, k))
    idx = pd.DataFrame(rows, columns=["fi", "wi"])
    out = f.loc[idx.fi].reset_index(drop=True)
    w = ws.loc[idx.wi].reset_index(drop=True)
    out["size_bytes"], out["flow_start_s"] = w.size_bytes.to_numpy(), w.start_s.to_numpy()
    return out


def attach_fct(f, fct_path):
    op = gzip.open if str(fct_path).endswith(".gz") else open
    with op(fct_path, "rt") as fh:
        n = pd.read_csv(fh, sep=r"\s+")
    n = n[n.incast == 0]
    fct = []
    for r in f.itertuples():
        h = n[(n.flowsize - r.size_bytes).abs() <= max(0.5, r.size_bytes * 6e-6)]
        k = (h.flowstart - r.flow_start_s * 1e6).abs().idxmin() if len(h) else None
        fct.append(n.fct[k] / 1e3 if k is not None and abs(h.flowstart[k] - r.flow_start_s * 1e6) < 5 else np.nan)
    f["n_us"] = fct
    f["n_sd"] = f.n_us / (BASE_US + f.size_bytes * 8 / 1e4)
    return f


def attach_sharebuf(f, path):
    s = pd.read_parquet(path)
    s = s[s.workload != "incast"]
    m = f.merge(s[["src", "dst", "size_bytes", "start_s", "fct_s"]], left_on=["src_h", "dst_h", "size_bytes"],
                right_on=["src", "dst", "size_bytes"], how="left", suffixes=("", "_sb"))
    m = m[(m.start_s_sb - m.flow_start_s).abs() < 1e-6].copy()
    m["s_us"] = m.fct_s * 1e6
    return m


def syn_probe(s, bin_ms=5.0):
    """The SYNs' and SYN-ACKs' sojourn at the leaf uplinks (one packet each, in the control queue
    with the ACKs): max and count per leaf and time bin (ms since 10 s)."""
    x = s[(s.data == 2) & (s.n == 1) & (s.role == "uplink")].copy()
    x["bin"] = ((x.first_ns / 1e6 - 1e4) // bin_ms) * bin_ms
    x["leaf"] = x.node - x.node.min()
    return (x.groupby(["bin", "leaf"]).max_ns.max() / 1e3).unstack("leaf").round(0)


def uplink_load(s, flows, t0_s, t1_s, n_up=8):
    """Packets per leaf uplink in [t0, t1) (s since 10 s): ns3dc's measured ACKs and data, and
    sharebuf's flows (their own timing, the packets of each flow spread evenly over its FCT)
    placed by ns3dc's hash of the traced 5-tuples and by sharebuf's "same" hash."""
    from incast_join import ecmp_uplink
    from ns3dc_ecmp import tuple_hash
    out = {}
    u = s[s.role == "uplink"]
    leaf = u.node - u.node.min()
    for lab, sel in (("ns3dc, measured: ACKs", u.data == 0), ("ns3dc, measured: data", u.data == 1)):
        g = u[sel].groupby([leaf[sel], u[sel].dev]).n.sum()
        out[lab] = {k: g.loc[k].tolist() for k in g.index.levels[0]}
    d = s[(s.data >= 1) & (s.role == "host")].groupby(["src_h", "dst_h", "sport", "dport"]).first_ns.min().reset_index()
    f = flows[(flows.end_s > t0_s) & (flows.start_s < t1_s)]
    rows = []
    for r in f.itertuples():
        c = d[(d.src_h == r.src) & (d.dst_h == r.dst)]
        if len(c):
            k = (c.first_ns / 1e9 - 10 - r.start_s).abs().idxmin()
            rows.append((r.Index, k))
    m = pd.DataFrame(rows, columns=["fi", "di"])
    a = f.loc[m.fi].copy()
    a["sport"], a["dport"] = d.sport[m.di].to_numpy(), d.dport[m.di].to_numpy()
    a["pk"] = np.ceil(a.size_bytes / 1400) * (np.minimum(a.end_s, t1_s) - np.maximum(a.start_s, t0_s)).clip(lower=0) / a.fct_s
    a["ns_data"] = [tuple_hash(int(x), int(y), int(p), int(q)) % n_up for x, y, p, q in zip(a.src, a.dst, a.sport, a.dport)]
    a["ns_ack"] = [tuple_hash(int(y), int(x), int(q), int(p)) % n_up for x, y, p, q in zip(a.src, a.dst, a.sport, a.dport)]
    a["sb_data"] = [ecmp_uplink(int(x), int(y), n_up) for x, y in zip(a.flow_id, a.dst)]
    a["sb_ack"] = [ecmp_uplink(int(x), int(y), n_up) for x, y in zip(a.flow_id, a.src)]
    a["sl"], a["dl"] = a.src // 32, a.dst // 32
    for h, name in (("ns", "ns3dc's hash"), ("sb", "sharebuf's hash")):
        ack = a.groupby(["dl", f"{h}_ack"]).pk.sum().unstack(fill_value=0).round(0).astype(int)
        dat = a.groupby(["sl", f"{h}_data"]).pk.sum().unstack(fill_value=0).round(0).astype(int)
        out[f"sharebuf's flows, {name}: ACKs"] = {k: ack.loc[k].tolist() for k in ack.index}
        out[f"sharebuf's flows, {name}: data"] = {k: dat.loc[k].tolist() for k in dat.index}
    return out, len(f), len(m)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("prefix", help="the trace's file prefix (<prefix>-sojourn.txt, -nodes.txt, -queues.txt)")
    ap.add_argument("--point", required=True)
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--scheme", default="dt", choices=["dt", "abm"])
    ap.add_argument("--fct", help="the traced run's fct file (default: the grid's, which it must equal)")
    ap.add_argument("--sharebuf-variant", default="profile")
    ap.add_argument("--slow", type=float, default=10.0, help="slowdown above which a short flow is slow")
    ap.add_argument("--list", action="store_true", help="print every slow short flow")
    ap.add_argument("--window-ms", default="150,220", help="the trace's window, ms after 10 s (uplink loads)")
    a = ap.parse_args()
    p = {q["name"]: q for q in grid.points()}[a.point]
    role, host_of_node, host_of_ip = load_nodes(a.prefix)
    s = load_sojourn(a.prefix, role, host_of_ip)
    f = join_replay(flows_of(s), a.point, a.seed, 10.0)
    f = attach_fct(f, a.fct or grid.fct_path(p, a.scheme, a.seed))
    sbp = grid.sb_path(a.sharebuf_variant, p, a.scheme, a.seed)
    sb = None
    if os.path.exists(sbp):
        f = attach_sharebuf(f, sbp)
        sb = pd.read_parquet(sbp)
    sh = f[(f.size_bytes < grid.SHORT_MAX) & f.n_us.notna() & f.host_mean_us.notna()].copy()
    hop_max = [f"{h}_max_us" for h in HOPS]
    sh["sum_max_us"] = sh[hop_max].fillna(0).sum(axis=1)
    sh["excess_us"] = sh.n_us - (BASE_US + sh.size_bytes * 8 / 1e4)
    slow, fast = sh[sh.n_sd > a.slow], sh[sh.n_sd <= a.slow]
    print(f"{a.point} {a.scheme} seed {a.seed}: {len(f)} websearch flows with their SYN in the trace, "
          f"{len(sh)} short (< {grid.SHORT_MAX // 1000} KB), {len(slow)} with slowdown > {a.slow:g}")
    for lab, x in (("slow", slow), ("the rest", fast)):
        if not len(x):
            continue
        print(f"{lab}: median (p90) per-hop max sojourn of the data, us: "
              + ", ".join(f"{h} {x[c].median():.0f} ({x[c].quantile(.9):.0f})" for h, c in zip(HOPS, hop_max))
              + f"; ACKs' largest {x[[f'ack_{h}_max_us' for h in HOPS]].max(axis=1).median():.0f}"
              + f"; the SYN's wait {x.syn_wait_us.median():.0f} ({x.syn_wait_us.quantile(.9):.0f}), the SYN-ACK's "
              f"{x.synack_wait_us.median():.0f} ({x.synack_wait_us.quantile(.9):.0f})"
              + f"; excess over the ideal FCT {x.excess_us.median():.0f} us")
        where = x[hop_max].fillna(0).idxmax(axis=1).str.replace("_max_us", "")
        print(f"  hop holding the largest wait: " + ", ".join(f"{k} {v}" for k, v in where.value_counts().items()))
    print("largest SYN / SYN-ACK sojourn at a leaf uplink (us), by 5 ms bin (ms after 10 s) and leaf:")
    print(syn_probe(s).to_string())
    if sb is not None:
        t0, t1 = (float(x) / 1e3 for x in a.window_ms.split(","))
        load, n_act, n_m = uplink_load(s, sb, t0, t1)
        print(f"packets per leaf uplink in the window ({n_m} of sharebuf's {n_act} active flows joined to a traced 5-tuple):")
        for k, v in load.items():
            print(f"  {k}: " + "; ".join(f"leaf {lf} {x}" for lf, x in v.items()))
    if a.list and len(slow):
        cols = ["flow_start_s", "src_h", "dst_h", "size_bytes", "n_us"] + (["s_us"] if "s_us" in slow else []) \
            + ["excess_us", "syn_wait_us", "synack_wait_us"] + hop_max
        print(slow.sort_values("flow_start_s")[cols].round(4).to_string(index=False))


if __name__ == "__main__":
    main()
