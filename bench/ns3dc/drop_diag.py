#!/usr/bin/env python3
"""Where and which packets a grid point's short flows lose, from sharebuf's drop log
(`[output] drop_log`), against ns3dc's timeouts on the same flows.

  python3 drop_diag.py run   [--point buf3.44-dctcp] [--alg dt] [--variants profile,profile_ns3hash] --out DIR
  python3 drop_diag.py table [--point ...] --out DIR

`run` replays the point's ns3dc flows (as grid.py sharebuf does) with drop_log on, one run at a
time, into DIR/<variant>/<alg>-s<seed>/; `table` classifies every short flow (< 100 KB web search)
that waited out a timeout in sharebuf: which of its packets dropped (SYN, SYN-ACK, data of the
first flight or later, its last segment, a resend, an ACK), where (leaf downlink to the receiver,
leaf uplink, spine downlink), by which cause, and what the queue and the switch held then.
"""
import argparse
import gzip
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import grid  # noqa: E402
import ns3dc_ecmp  # noqa: E402
import ns3dc_flows  # noqa: E402
from compare import BASE_RTT_S, HOST_BPS, SHORT_MAX  # noqa: E402
from run_sharebuf import VARIANTS, with_keys  # noqa: E402

SERVERS, LEAVES = 32, 2


def point(name):
    return next(p for p in grid.points() if p["name"] == name)


def cmd_run(a):
    import sharebuf
    p = point(a.point)
    for seed in p["seeds"]:
        flows, start = ns3dc_flows.generate(seed, p["launch_s"], load=p["load"], request=p["request"],
                                            qrate=p["query_rate"], nprio=p["nprio"],
                                            per_flow_prio=p["binary"].endswith("nprio"))
        replay = HERE / "scenarios" / "replay" / p["name"]
        plain = ns3dc_flows.write_csvs(flows, start, seed, replay)
        hashed = None
        for variant in a.variants.split(","):
            prof, keys = VARIANTS[variant]
            if keys.get("topology.ecmp_hash") == "flow":
                if hashed is None:
                    ports = ns3dc_ecmp.flow_ports(seed, p["launch_s"], load=p["load"], request=p["request"],
                                                  qrate=p["query_rate"], nprio=p["nprio"])
                    hashed = ns3dc_flows.write_csvs(flows, start, seed, replay, hashes=ns3dc_ecmp.flow_hashes(flows, ports))
                csvs = hashed
            else:
                csvs = plain
            sc = with_keys(grid.scenario(p, a.alg, seed, *csvs), {**keys, "output.drop_log": True})
            out = Path(a.out) / variant / f"{a.alg}-s{seed}"
            t0 = time.time()
            r = sharebuf.run(sc, profile=prof, quiet=True, out=out)
            print(f"{variant} {a.alg} s{seed}: {time.time() - t0:.0f} s, drops {r.summary['drops']}", flush=True)


def ns3dc_short(p, alg, seed):
    """ns3dc's short web-search flows: size -> [(start us, FCT s, FCT >= ideal + 10 ms)]."""
    with gzip.open(grid.GRID / p["name"] / f"fct-{alg}-s{seed}.txt.gz", "rt") as f:
        hdr = f.readline().split()
        rows = [ln.split() for ln in f if len(ln.split()) == len(hdr)]
    d = pd.DataFrame(np.array(rows, dtype=float), columns=hdr)
    d = d[(d.incast < 0.5) & (d.flowsize < SHORT_MAX)]
    ideal = BASE_RTT_S + d.flowsize * 8.0 / HOST_BPS
    late = d.fct * 1e-9 - ideal >= grid.RTO_S
    out = {}
    for size, start, fct, lt in zip(d.flowsize.astype(int), d.flowstart, d.fct * 1e-9, late):
        out.setdefault(size, []).append((start, fct, bool(lt)))
    return out


def match(ns, size, start_us):
    """ns3dc's (FCT s, late) of the flow of this size starting nearest start_us (its fct file
    prints 6 significant digits), or None."""
    c = ns.get(int(size), [])
    if not c:
        return None
    st, fct, lt = min(c, key=lambda x: abs(x[0] - start_us))
    return (fct, lt) if abs(st - start_us) <= max(0.01, 1e-5 * start_us) else None


def where(node, port):
    if node >= LEAVES:
        return "spine down"
    return "leaf down" if port < SERVERS else "leaf up"


def classify(flows, drops, mss, first_flight_pkts):
    """Per dropped packet of a flow: (category, place, cause)."""
    size = flows.size_bytes
    out = []
    seen = set()
    for r in drops.itertuples():
        if r.kind == "data":
            key = (r.flow_id, r.seq)
            if key in seen:
                cat = "data resend"
            elif r.seq + mss >= size[r.flow_id]:
                cat = "data last segment"
            elif r.seq < first_flight_pkts * mss:
                cat = "data first flight"
            else:
                cat = "data later"
            seen.add(key)
        else:
            cat = r.kind
        out.append((cat, where(r.node, r.port), r.cause))
    return out


def cmd_table(a):
    p = point(a.point)
    for variant in a.variants.split(","):
        tot = Counter()
        per_flow = Counter()
        both = sb_only = ns_only = n_short = 0
        fill = Counter()
        fast_ns = 0
        lines = []
        for seed in p["seeds"]:
            d = Path(a.out) / variant / f"{a.alg}-s{seed}"
            f = pd.read_parquet(d / "flows.parquet")
            dr = pd.read_parquet(d / "drops.parquet")
            import tomllib
            sc = tomllib.loads((d / "scenario.toml").read_text())
            mss = sc["transport"]["mss_bytes"]
            ns = ns3dc_short(p, a.alg, seed)
            short = f[(f.workload == "websearch") & (f.size_bytes < SHORT_MAX)]
            n_short += len(short)
            ideal = BASE_RTT_S + short.size_bytes * 8.0 / HOST_BPS
            sb_late = short.fct_s - ideal >= grid.RTO_S
            m = [match(ns, z, t * 1e6) for z, t in zip(short.size_bytes, short.start_s)]
            nl = np.array([x is not None and x[1] for x in m])
            nf = np.array([np.nan if x is None else x[0] for x in m])
            missing = sum(x is None for x in m)
            both += int((sb_late & nl).sum())
            sb_only += int((sb_late & ~nl).sum())
            ns_only += int((~sb_late & nl).sum())
            lines.append(f"  s{seed}: {len(short)} short, sharebuf late {int(sb_late.sum())}, ns3dc late {int(nl.sum())}, "
                         f"both {int((sb_late & nl).sum())} (unmatched {missing})")
            first = min(sc["transport"].get("init_cwnd_packets", 10), 65535 // (mss + 32))
            by_flow = dr.groupby("flow_id")
            for i, (fid, row) in enumerate(short[sb_late].iterrows()):
                fd = by_flow.get_group(row.flow_id) if row.flow_id in by_flow.groups else dr.iloc[:0]
                cats = classify(f, fd, mss, first)
                kinds = tuple(sorted(set(c[0] for c in cats)))
                places = tuple(sorted(set((c[0], c[1], c[2]) for c in cats)))
                only = not nl[list(short.index).index(fid)]
                fast = nf[list(short.index).index(fid)] < 1e-3
                fast_ns += only and fast
                per_flow[("sb-only" if only else "both", kinds)] += 1
                for c in cats:
                    tot[("sb-only" if only else "both",) + c] += 1
                # what the queue held at the flow's drops: other drops at that port within 200 us
                for r in fd.itertuples():
                    near = dr[(dr.node == r.node) & (dr.port == r.port) & ((dr.time_ns - r.time_ns).abs() < 200e3)]
                    others = near[near.flow_id != r.flow_id]
                    wl = f.workload.to_numpy()[others.flow_id.to_numpy()] if len(others) else []
                    n_inc = int((np.asarray(wl) == "incast").sum())
                    # active incast responses to the same receiver at the drop
                    t = r.time_ns * 1e-9
                    act = f[(f.dst == row.dst) & (f.start_s <= t) & (f.end_s >= t) & (f.index != row.flow_id)]
                    fill[("sb-only" if only else "both", where(r.node, r.port), r.cause,
                          "incast drops near" if n_inc else ("other drops near" if len(others) else "no other drop near"),
                          "incast to rcv active" if (act.workload == "incast").any() else "no incast to rcv")] += 1
                    if a.verbose:
                        print(f"s{seed} flow {row.flow_id} size {row.size_bytes} {r.kind} seq {r.seq} t {r.time_ns/1e6:.3f} ms "
                              f"{where(r.node, r.port)} n{r.node} p{r.port} q{r.queue} {r.cause} qB {r.queue_bytes} occ {r.switch_occupied_bytes} "
                              f"| other drops near {len(others)} (incast {n_inc}) | active to rcv: "
                              f"{(act.workload == 'incast').sum()} incast, {(act.workload != 'incast').sum()} ws; "
                              f"ns3dc fct {nf[list(short.index).index(fid)]*1e3:.2f} ms; retx {row.retransmits} to {row.timeouts}")
        print(f"== {variant}: {n_short} short flows; late in sharebuf {both + sb_only} ({sb_only} sharebuf only), "
              f"ns3dc {both + ns_only}, both {both}; sharebuf-only with ns3dc FCT < 1 ms: {fast_ns}")
        print("\n".join(lines))
        print("  per late flow, kinds of its dropped packets:")
        for k, v in sorted(per_flow.items(), key=lambda x: -x[1]):
            print(f"    {v:4d}  {k}")
        print("  per dropped packet of a late flow (side, category, place, cause):")
        for k, v in sorted(tot.items(), key=lambda x: -x[1]):
            print(f"    {v:4d}  {k}")
        print("  per dropped packet: what else was there (side, place, cause, drops at that port within 200 us, incast to the receiver):")
        for k, v in sorted(fill.items(), key=lambda x: -x[1]):
            print(f"    {v:4d}  {k}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cmd", choices=["run", "table"])
    ap.add_argument("--point", default="buf3.44-dctcp")
    ap.add_argument("--alg", default="dt")
    ap.add_argument("--variants", default="profile,profile_ns3hash")
    ap.add_argument("--out", required=True)
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()
    {"run": cmd_run, "table": cmd_table}[a.cmd](a)


if __name__ == "__main__":
    main()
