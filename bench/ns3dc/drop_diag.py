#!/usr/bin/env python3
"""Where and which packets a grid point's short flows lose, from sharebuf's drop log
(`[output] drop_log`), against ns3dc's timeouts on the same flows.

  python3 drop_diag.py run   [--point buf3.44-dctcp] [--alg dt] [--variants profile,profile_ns3hash] [--seed S --one-seed] [--queue-sample-us 10] --out DIR
  python3 drop_diag.py table [--point ...] --out DIR
  python3 drop_diag.py ns3dc --trace PREFIX --seed S [--variant profile_ns3hash] --out DIR

`ns3dc` reads a drop trace of ns3dc's run of the point (PREFIX-drops.txt, one line per packet a
root queue disc drops: t_ns node dev src dst sport dport flags seq ack payload item_bytes
qdisc_bytes [occupied_bytes ...], with a header line; occupied_bytes is the leaf's shared-buffer
occupancy (at a leaf's queue disc); from a scratch copy of the example with a hook on the queue
discs' `Drop` trace source, which this repository does not keep) and compares it with sharebuf's drop log of the same
seed, up to where the trace ends: drops by place and class, leaf-uplink drop episodes, the long
flows' uplink drops, and the short flows that time out on either side.

`ns3dc` also sets the leaf uplinks' queues side by side (DT) when the trace has ns3dc's queue
samples (PREFIX-qs.txt, format in `uplinks_at_threshold`) and the run sharebuf's
(`run --queue-sample-us`).

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
from compare import BASE_RTT_S, HOST_BPS, SHORT_MAX  # noqa: E402
from run_sharebuf import VARIANTS, with_keys  # noqa: E402

SERVERS, LEAVES = 32, 2
#: ns3dc's queue disc counts a data packet's IP bytes (1452), its shared buffer only the payload
#: accounting sharebuf's `ip_payload` uses (1432): a queue disc's bytes in the buffer's terms
QDISC_TO_BM = 1432 / 1452


def point(name):
    return next(p for p in grid.points() if p["name"] == name)


def cmd_run(a):
    import sharebuf
    p = point(a.point)
    for seed in ([a.seed] if a.one_seed else p["seeds"]):
        for variant in a.variants.split(","):
            prof, keys = VARIANTS[variant]
            csvs = grid.replay_csvs(p, seed, hashed=keys.get("topology.ecmp_hash") == "flow")
            extra = {"output.queue_sample_us": a.queue_sample_us, "output.buffer_sample_us": a.queue_sample_us} if a.queue_sample_us else {}
            sc = with_keys(grid.scenario(p, a.alg, seed, *csvs), {**keys, "output.drop_log": True, **extra})
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


def where_ns3dc(node, dev, leaves=LEAVES, spines=2):
    """ns3dc's node ids: spines first (0, 1), then leaves; a leaf's devices 1..32 lead to its servers."""
    if node < spines:
        return "spine down"
    return "leaf down" if dev <= SERVERS else "leaf up"


def ns3dc_drops(p, seed, prefix):
    """ns3dc's traced drops from the start time on, each mapped to sharebuf's flow id (the replay's
    order: web search, then incast) through the flow's derived 5-tuple."""
    key = ns3dc_ecmp.flow_ids(seed, p["launch_s"], **grid.generator(p))
    d = pd.read_csv(f"{prefix}-drops.txt", sep=" ").dropna()
    d = d[d.t_ns >= 10e9].astype({"flags": int, "payload": int, "node": int, "dev": int, "sport": int, "dport": int})
    d["flow_id"] = [key.get(k, -1) for k in zip(d.src, d.dst, d.sport, d.dport)]
    d["time_ns"] = d.t_ns - 10e9
    syn, ack = (d["flags"] & 2) != 0, (d["flags"] & 16) != 0
    d["kind"] = np.where(syn & ack, "syn_ack", np.where(syn, "syn", np.where(d.payload > 0, "data", "ack")))
    d["where"] = [where_ns3dc(a, b) for a, b in zip(d.node, d.dev)]
    return d


def episodes(t, keys):
    """Drop episodes per queue: drops less than 1 ms apart; (drops, length ns) each."""
    out = []
    for _, g in t.groupby(keys):
        ts = np.sort(g.time_ns.to_numpy())
        br = np.flatnonzero(np.diff(ts) > 1e6)
        for a, b in zip(np.r_[0, br + 1], np.r_[br, len(ts) - 1]):
            out.append((b - a + 1, ts[b] - ts[a]))
    return np.array(out).reshape(-1, 2)


def uplinks_at_threshold(p, prefix, run, end_ns, near=0.95):
    """With ns3dc's queue samples (PREFIX-qs.txt: t_ns leaf occupied, then each leaf queue disc's bytes,
    its 32 server ports and its uplinks, then the spines' toward it) and sharebuf's (`drop_log` run with
    --queue-sample-us): the leaf uplinks' mean queue, the share of the time they are busy and within
    `near` of DT's threshold alpha x (buffer - occupied) (the web-search queue's alpha), up to where
both runs sampled."""
    alpha = grid.ALPHAS[1]
    qs, qo, bo = Path(f"{prefix}-qs.txt"), run / "queue_occupancy.parquet", run / "buffer.parquet"
    if not (qs.is_file() and qo.is_file() and bo.is_file()):
        return
    n = pd.read_csv(qs, sep=" ", header=None)
    n["ms"] = (n[0] - 10e9) / 1e6
    s = pd.read_parquet(qo)
    s = s[s.port >= SERVERS].groupby(["time_s", "switch", "port"]).bytes.sum().unstack(["switch", "port"])
    b = pd.read_parquet(bo).pivot(index="time_s", columns="switch", values="occupancy_bytes")
    tmax = min(n.ms.max(), s.index.max() * 1e3, end_ns / 1e6)
    rows = []
    for leaf in range(LEAVES):
        nl = n[(n[1] == leaf) & (n.ms <= tmax)]
        sl = s[s.index * 1e3 <= tmax]
        thr_n = alpha * (p["buffer"] - nl[2])
        thr_s = alpha * (p["buffer"] - b.loc[sl.index, f"leaf{leaf}"].to_numpy())
        for port in sorted(c[1] for c in sl.columns if c[0] == leaf):
            qn = nl[3 + port] * QDISC_TO_BM
            qs_ = sl[(leaf, port)].to_numpy()
            rows.append((qn.mean(), qs_.mean(), (qn > 0).mean(), (qs_ > 0).mean(), (qn >= near * thr_n).mean(), (qs_ >= near * thr_s).mean()))
    r = np.array(rows).mean(axis=0)
    print(f"  leaf uplinks sampled up to {tmax:.0f} ms (ns3dc / sharebuf, mean over {len(rows)}): queue {r[0] / 1e3:.1f} / "
          f"{r[1] / 1e3:.1f} KB, busy {r[2]:.1%} / {r[3]:.1%} of the time, within {near:.0%} of DT's threshold "
          f"{r[4]:.2%} / {r[5]:.2%}")


def cmd_ns3dc(a):
    p = point(a.point)
    nd = ns3dc_drops(p, a.seed, a.trace)
    end_ns = nd.time_ns.max()
    run = Path(a.out) / a.variant / f"{a.alg}-s{a.seed}"
    f = pd.read_parquet(run / "flows.parquet")
    sd = pd.read_parquet(run / "drops.parquet")
    sd = sd[sd.time_ns <= end_ns].copy()
    sd["where"] = [where(x, y) for x, y in zip(sd.node, sd.port)]
    cls = np.where(f.workload == "incast", "incast", np.where(f.size_bytes < SHORT_MAX, "short",
                   np.where(f.size_bytes >= 1_000_000, "long", "mid")))
    nd["cls"] = [cls[i] if i >= 0 else "?" for i in nd.flow_id]
    sd["cls"] = cls[sd.flow_id]
    print(f"seed {a.seed}, ns3dc's trace up to {end_ns / 1e6:.1f} ms after the start; sharebuf `{a.variant}`; "
          f"ns3dc drops not mapped to a flow: {int((nd.flow_id < 0).sum())}")
    for name, t in (("ns3dc", nd), ("sharebuf", sd)):
        print(f"  {name}: {len(t)} drops; by place and kind {Counter(zip(t['where'], t['kind'])).most_common()}")
        print(f"    by class and place {Counter(zip(t['cls'], t['where'])).most_common()}")
    for name, t, k in (("ns3dc", nd[nd["where"] == "leaf up"], ["node", "dev"]),
                       ("sharebuf", sd[sd["where"] == "leaf up"], ["node", "port"])):
        e = episodes(t, k)
        print(f"  {name} leaf-uplink drop episodes: {len(e)}, drops per episode median {np.median(e[:, 0]):.0f} "
              f"mean {e[:, 0].mean():.0f}, length median {np.median(e[:, 1]) / 1e3:.0f} us; "
              f"queue at the drops median {np.median(t['qdisc_bytes'] * QDISC_TO_BM if name == 'ns3dc' else t['queue_bytes']) / 1e3:.0f} KB (BM bytes)")
    # DT's rule at those drops: the queue against alpha x (B - occupied), when ns3dc's trace has both
    up_n, up_s = nd[nd["where"] == "leaf up"], sd[sd["where"] == "leaf up"]
    if "occupied_bytes" in nd and (up_n.qdisc_bytes >= 0).all() and (up_n.occupied_bytes >= 0).all() and len(up_n):
        rn = up_n.qdisc_bytes * QDISC_TO_BM / (p["buffer"] - up_n.occupied_bytes)
        rs = up_s.queue_bytes / (p["buffer"] - up_s.switch_occupied_bytes)
        print(f"  leaf-uplink drops: switch occupancy median {up_n.occupied_bytes.median() / 1e3:.0f} / "
              f"{up_s.switch_occupied_bytes.median() / 1e3:.0f} KB; queue / (buffer - occupied) p10 / p50 / p90 "
              f"{' / '.join(f'{x:.2f}' for x in np.percentile(rn, [10, 50, 90]))} in ns3dc, "
              f"{' / '.join(f'{x:.2f}' for x in np.percentile(rs, [10, 50, 90]))} in sharebuf (DT drops at its alpha)")
    if a.alg == "dt":
        uplinks_at_threshold(p, a.trace, run, end_ns)
    # per flow: uplink drops on each side, the first drop after the flow's start, the first episode
    rows = []
    for fid in sorted(set(up_n.flow_id) | set(up_s.flow_id)):
        one = []
        for t in (up_s[up_s.flow_id == fid].time_ns.to_numpy(), up_n[up_n.flow_id == fid].time_ns.to_numpy()):
            t = np.sort(t)
            if not len(t):
                one += [0, np.nan, np.nan, 0]
                continue
            br = np.flatnonzero(np.diff(t) > 1e6)
            e = br[0] if len(br) else len(t) - 1
            one += [len(t), t[0] / 1e6 - f.start_s[fid] * 1e3, (t[e] - t[0]) / 1e3, e + 1]
        rows.append([fid, cls[fid]] + one)
    r = pd.DataFrame(rows, columns=["fid", "cls", "sb", "sb_first_ms", "sb_ep_us", "sb_ep_n", "ns", "ns_first_ms", "ns_ep_us", "ns_ep_n"])
    for c, g in r.groupby("cls"):
        b = g[(g.sb > 0) & (g.ns > 0)]
        print(f"  {c}: flows with leaf-uplink drops sharebuf {int((g.sb > 0).sum())}, ns3dc {int((g.ns > 0).sum())}, both {len(b)}; "
              f"drops {int(g.sb.sum())} / {int(g.ns.sum())}; of both: first drop after the start {b.sb_first_ms.median():.2f} / "
              f"{b.ns_first_ms.median():.2f} ms, first episode {b.sb_ep_n.median():.0f} / {b.ns_ep_n.median():.0f} drops over "
              f"{b.sb_ep_us.median():.0f} / {b.ns_ep_us.median():.0f} us (medians)")
    # short flows that time out on either side, started early enough for the trace to show it
    ns = ns3dc_short(p, a.alg, a.seed)
    short = f[(f.workload == "websearch") & (f.size_bytes < SHORT_MAX) & (f.start_s * 1e9 < end_ns - 15e6)]
    sb_late = short.fct_s - (BASE_RTT_S + short.size_bytes * 8.0 / HOST_BPS) >= grid.RTO_S
    m = [match(ns, z, t * 1e6) for z, t in zip(short.size_bytes, short.start_s)]
    ns_late = np.array([x is not None and x[1] for x in m])
    print(f"  short flows started by {end_ns / 1e6 - 15:.0f} ms: {len(short)}; late in sharebuf {int(sb_late.sum())}, "
          f"ns3dc {int(ns_late.sum())}, both {int((sb_late & ns_late).sum())}")
    for (i, r_), sl, nl, mm in zip(short.iterrows(), sb_late, ns_late, m):
        if not (sl or nl):
            continue
        fs, fn = sd[sd.flow_id == i], nd[nd.flow_id == i]
        first = fs.iloc[0] if len(fs) else (fn.iloc[0] if len(fn) else None)
        near = ""
        if first is not None and first["where"] != "spine down":
            # the same leaf queue on both sides: sharebuf's leaf l port p is ns3dc's node l + 2, device p + 1
            leaf, port = (first.node, first.port) if len(fs) else (first.node - 2, first.dev - 1)
            t0 = first.time_ns
            same_s = sd[(sd.node == leaf) & (sd.port == port) & ((sd.time_ns - t0).abs() < 1e6)]
            same_n = nd[(nd.node == leaf + 2) & (nd.dev == port + 1) & ((nd.time_ns - t0).abs() < 1e6)]
            near = f"; at leaf{leaf} port {port} within 1 ms: {len(same_s)} / {len(same_n)} drops"
        print(f"    flow {i} ({r_.size_bytes} B, start {r_.start_s * 1e3:.2f} ms): late {bool(sl)} / {bool(nl)}, "
              f"FCT {r_.fct_s * 1e3:.2f} / {mm[0] * 1e3:.2f} ms; its drops {dict(Counter(zip(fs['where'], fs.kind)))} / "
              f"{dict(Counter(zip(fn['where'], fn.kind)))}{near}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cmd", choices=["run", "table", "ns3dc"])
    ap.add_argument("--point", default="buf3.44-dctcp")
    ap.add_argument("--alg", default="dt")
    ap.add_argument("--variants", default="profile,profile_ns3hash")
    ap.add_argument("--out", required=True)
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("--trace", help="ns3dc: the trace's prefix (PREFIX-drops.txt)")
    ap.add_argument("--seed", type=int, default=2)
    ap.add_argument("--variant", default="profile_ns3hash")
    ap.add_argument("--one-seed", action="store_true", help="run: --seed only, not every seed of the point")
    ap.add_argument("--queue-sample-us", type=float, default=0,
                    help="run: also sample every queue and switch this often (queue_occupancy.parquet, buffer.parquet)")
    a = ap.parse_args()
    {"run": cmd_run, "table": cmd_table, "ns3dc": cmd_ns3dc}[a.cmd](a)


if __name__ == "__main__":
    main()
