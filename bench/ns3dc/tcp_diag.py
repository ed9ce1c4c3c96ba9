#!/usr/bin/env python3
"""A grid point's long flows, sender by sender, in sharebuf (`[output] tcp_trace`) and in ns3dc.

  python3 tcp_diag.py run     --point buf3.44-dctcp --alg dt --seed 2 [--variant profile_ns3hash] --out DIR
  python3 tcp_diag.py compare --point ... --seed 2 --trace PREFIX --out DIR
  python3 tcp_diag.py flow    --point ... --seed 2 --trace PREFIX --out DIR --flow 1166 [--until-us 3000] [--bin-us 100]
  python3 tcp_diag.py keep    --point ... --alg abm --seed 1 --trace PREFIX --fct FCT
  python3 tcp_diag.py recoveries --point ... --seed 2 --trace PREFIX --out DIR
  python3 tcp_diag.py replay  --point ... --seed 2 --trace PREFIX [--variant V] --out DIR

`run` replays the point's ns3dc flows (as grid.py sharebuf does) with `tcp_trace_min_size_bytes`
(default 1 MB) and the drop log, into DIR/<variant>/<alg>-s<seed>/.

`compare` and `flow` read a TCP trace of ns3dc's run of the same point and seed: PREFIX-tcpmap.txt,
one line per traced flow (ns3dc's flow id, source and destination address, source and destination
port, size, start ns), and PREFIX-tcp.txt, one line per event of its sending socket
(`t_ns flow kind ...`: `t seq payload flags` a segment sent, `r ack flags` a segment received,
`c cwnd`, `s ssthresh`, `b bytes_in_flight`, `g congestion state` (ns-3's TcpCongState_t: 0 open,
1 disorder, 2 CWR, 3 recovery, 4 loss)). These come from a scratch copy of the example that, for
each web-search flow of at least the size, connects its BulkSendApplication socket's `Tx`, `Rx`,
`CongestionWindow`, `SlowStartThreshold`, `BytesInFlight` and `CongState` trace sources one
nanosecond after it starts; this repository does not keep ns3dc code. Flows are matched through
their 5-tuple (ns3dc_ecmp.flow_ids), so ids are sharebuf's.

`keep` stores, from such a trace, whether each long flow (>= 1 MB) waited out a timeout (it entered
`CA_LOSS`) and its segments resent, as results/grid/<point>/long-<alg>-s<seed>.csv.gz (sharebuf's flow
ids), with the run's command line beside it; FCT is the fct file the traced run wrote, which must be
byte-identical to the grid's (the trace sources change nothing). `grid.py table` sets those flows
against sharebuf's same flows.

`replay` reads PREFIX-acks.txt too (one line per ACK a traced sender received: `t_ns flow ack flags
tsval tsecr window [SACK left right ...] [f<ns>]`, from the `Rx` source's header; `f`: the send time
in the ACK's FeedbackTag, which TcpAdvanced senders such as TIMELY read), replays each flow's ACKs
into one sharebuf sender with the variant's transport (`sharebuf-tcp-replay`) and writes, per flow
that does not send the same segments at the same times to its end, its first different send
(DIR/<variant>/<alg>-s<seed>/divergences.csv).

`compare` prints, per side, over the flows traced on both: when the first ECN-Echo came, when the
window was first reduced (CWR or loss recovery) and its size then, the largest window in the first
2 ms, what the sender sent in the 300 us after that reduction (PRR's share: ns-3.39's wraps,
`transport.prr_arithmetic`), window cuts (ssthresh set lower), retransmissions and timeouts. `flow` prints one flow's timeline in bins on both sides.
"""
import argparse
import gzip
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import grid  # noqa: E402
import ns3dc_ecmp  # noqa: E402
from run_sharebuf import VARIANTS, with_keys  # noqa: E402

ECE = 0x40


def point(name):
    pts = {p["name"]: p for p in grid.points()}
    if name not in pts:
        sys.exit(f"--point {name!r}: not a point of grid.toml; allowed: {', '.join(pts)}")
    return pts[name]


def resent(seq):
    """How many of a sender's data segments, in the order sent (their sequence numbers), were sent
    again: at or below a sequence sent before."""
    return int(np.sum(seq[1:] <= np.maximum.accumulate(seq)[:-1])) if len(seq) else 0


def cmd_run(a):
    import sharebuf
    p = point(a.point)
    prof, keys = VARIANTS[a.variant]
    csvs = grid.replay_csvs(p, a.seed, hashed=keys.get("topology.ecmp_hash") == "flow")
    sc = with_keys(grid.scenario(p, a.alg, a.seed, *csvs),
                   {**keys, "output.drop_log": True, "output.tcp_trace_min_size_bytes": a.min_size})
    out = Path(a.out) / a.variant / f"{a.alg}-s{a.seed}"
    t0 = time.time()
    sharebuf.run(sc, profile=prof, quiet=True, out=out)
    print(f"{out}: {time.time() - t0:.0f} s")


def ns3dc_trace(p, seed, prefix):
    """ns3dc's traced flows (with sharebuf's flow id) and their events."""
    key = ns3dc_ecmp.flow_ids(seed, p["launch_s"], **grid.generator(p))
    m = pd.read_csv(f"{prefix}-tcpmap.txt", sep=" ", header=None, names=["nf", "src", "dst", "sport", "dport", "size", "t_ns"])
    m["fid"] = [key.get(k, -1) for k in zip(m.src, m.dst, m.sport, m.dport)]
    ev = pd.read_csv(f"{prefix}-tcp.txt", sep=" ", header=None, names=["t_ns", "nf", "k", "a", "b", "c"], dtype={"k": str})
    ev = ev.dropna(subset=["k"])
    ev["fid"] = ev.nf.map(dict(zip(m.nf, m.fid)))
    return m[m.fid >= 0], ev[ev.fid >= 0]


def summary_ns3dc(m, ev):
    rows = []
    for fid, g in ev.groupby("fid"):
        data = g[(g.k == "t") & (g.b > 0)]
        if not len(data):
            continue
        t0 = data.t_ns.iloc[0]
        seq = data.a.to_numpy()
        r = g[(g.k == "r") & (g.t_ns > t0)]
        ece = r[(r.b.astype(int) & ECE) != 0]
        cut = g[(g.k == "g") & g.a.isin([2, 3]) & (g.t_ns > t0)]
        fe = cut.t_ns.iloc[0] if len(cut) else np.nan
        c = g[g.k == "c"]
        s = g[(g.k == "s") & (g.t_ns > t0)].a.to_numpy()
        rows.append(dict(fid=fid, ece_us=(ece.t_ns.iloc[0] - t0) / 1e3 if len(ece) else np.nan,
                         cut_us=(fe - t0) / 1e3, cwnd_at_cut=c[c.t_ns < fe].a.max() / 1400 if len(cut) else np.nan,
                         cwnd_max_2ms=c[c.t_ns < t0 + 2e6].a.max() / 1400,
                         sent_300us=int(((data.t_ns > fe) & (data.t_ns <= fe + 3e5)).sum()) if len(cut) else np.nan,
                         acks_300us=int(((r.t_ns > fe) & (r.t_ns <= fe + 3e5)).sum()) if len(cut) else np.nan,
                         cuts=int(len(s)), retx=resent(seq), timeouts=int(((g.k == "g") & (g.a == 4)).sum())))
    return pd.DataFrame(rows).set_index("fid")


def summary_sharebuf(t, fids):
    rows = []
    for fid, g in t[t.flow_id.isin(fids)].groupby("flow_id"):
        data = g[g.event == "send"]
        t0 = data.time_ns.iloc[0]
        ack = g[(g.event == "ack") & (g.time_ns > t0)]
        ece = ack[ack.ece]
        red = g.state.isin(["cwr", "recovery"]).to_numpy()
        entered = np.flatnonzero(red & ~np.r_[False, red[:-1]] & (g.time_ns.to_numpy() > t0))
        fe = g.time_ns.iloc[entered[0]] if len(entered) else np.nan
        ss = g.ssthresh_bytes.to_numpy()
        cuts = int(np.sum(np.r_[False, np.isfinite(ss[1:]) & ((ss[1:] < ss[:-1]) | ~np.isfinite(ss[:-1]))]))
        rows.append(dict(fid=fid, ece_us=(ece.time_ns.iloc[0] - t0) / 1e3 if len(ece) else np.nan,
                         cut_us=(fe - t0) / 1e3, cwnd_at_cut=g[g.time_ns < fe].cwnd_bytes.max() / 1400 if len(entered) else np.nan,
                         cwnd_max_2ms=g[g.time_ns < t0 + 2e6].cwnd_bytes.max() / 1400,
                         sent_300us=int(((data.time_ns > fe) & (data.time_ns <= fe + 3e5)).sum()) if len(entered) else np.nan,
                         acks_300us=int(((ack.time_ns > fe) & (ack.time_ns <= fe + 3e5)).sum()) if len(entered) else np.nan,
                         cuts=cuts, retx=int(data.retx.sum()), timeouts=int((g.event == "timeout").sum())))
    return pd.DataFrame(rows).set_index("fid")


def run_dir(a):
    return Path(a.out) / a.variant / f"{a.alg}-s{a.seed}"


def cmd_compare(a):
    p = point(a.point)
    m, ev = ns3dc_trace(p, a.seed, a.trace)
    t = pd.read_parquet(run_dir(a) / "tcp_trace.parquet")
    ns, sb = summary_ns3dc(m, ev), summary_sharebuf(t, set(m.fid))
    both = ns.index.intersection(sb.index)
    ns, sb = ns.loc[both], sb.loc[both]
    print(f"{a.point} {a.alg} seed {a.seed}, sharebuf `{a.variant}`: {len(both)} flows traced on both sides "
          f"(ns3dc's trace up to {(ev.t_ns.max() - 10e9) / 1e6:.0f} ms)")
    print(f"{'':14s} {'ns3dc median / mean':>22s}   {'sharebuf median / mean':>22s}")
    for c in ns.columns:
        print(f"{c:14s} {ns[c].median():10.1f} / {ns[c].mean():9.1f}   {sb[c].median():10.1f} / {sb[c].mean():9.1f}")
    e = ns.cut_us.notna() & sb.cut_us.notna()
    print(f"flows with an ECN-Echo: ns3dc {int(ns.ece_us.notna().sum())}, sharebuf {int(sb.ece_us.notna().sum())}; with a first window "
          f"reduction (CWR or recovery): ns3dc {int(ns.cut_us.notna().sum())}, sharebuf {int(sb.cut_us.notna().sum())}, both {int(e.sum())}; "
          f"segments sent per ACK in the 300 us after it: ns3dc {ns.sent_300us[e].sum() / max(ns.acks_300us[e].sum(), 1):.2f}, "
          f"sharebuf {sb.sent_300us[e].sum() / max(sb.acks_300us[e].sum(), 1):.2f}")
    print(f"flows retransmitting: ns3dc {int((ns.retx > 0).sum())}, sharebuf {int((sb.retx > 0).sum())}, both "
          f"{int(((ns.retx > 0) & (sb.retx > 0)).sum())}; timing out: {int((ns.timeouts > 0).sum())} / {int((sb.timeouts > 0).sum())}")


def cmd_flow(a):
    p = point(a.point)
    m, ev = ns3dc_trace(p, a.seed, a.trace)
    g = ev[ev.fid == a.flow].copy()
    t0 = g[(g.k == "t") & (g.b > 0)].t_ns.iloc[0]
    g["us"] = (g.t_ns - t0) / 1e3
    t = pd.read_parquet(run_dir(a) / "tcp_trace.parquet")
    s = t[t.flow_id == a.flow].copy()
    s["us"] = (s.time_ns - s[s.event == "send"].time_ns.iloc[0]) / 1e3
    print(f"flow {a.flow}, per {a.bin_us:.0f} us from its first data segment; ns3dc | sharebuf: cwnd (segments), "
          f"segments sent new/resent, ACKs (with ECN-Echo), window cuts")
    hi = -1
    for lo in np.arange(0, a.until_us, a.bin_us):
        w, v = g[(g.us >= lo) & (g.us < lo + a.bin_us)], s[(s.us >= lo) & (s.us < lo + a.bin_us)]
        c = g[(g.k == "c") & (g.us < lo + a.bin_us)].a
        tx = w[(w.k == "t") & (w.b > 0)].a.to_numpy()
        nr = 0
        for q in tx:
            nr += q <= hi
            hi = max(hi, q)
        r = w[w.k == "r"]
        sv, av = v[v.event == "send"], v[v.event == "ack"]
        last = s[s.us < lo + a.bin_us].cwnd_bytes
        ss = np.nan_to_num(s[s.us < lo + a.bin_us].ssthresh_bytes.to_numpy(), nan=np.inf)
        cuts = int(np.sum((ss[1:] < ss[:-1]) & (s[s.us < lo + a.bin_us].us.to_numpy()[1:] >= lo))) if len(ss) > 1 else 0
        print(f"{lo:7.0f} | {c.iloc[-1] / 1400 if len(c) else np.nan:6.1f} {len(tx) - nr:4d}/{nr:<3d} {len(r):3d} "
              f"({int(((r.b.astype(int) & ECE) != 0).sum()):3d}) {int((w.k == 's').sum())} "
              f"| {last.iloc[-1] / 1400 if len(last) else np.nan:6.1f} {int((~sv.retx).sum()):4d}/{int(sv.retx.sum()):<3d} "
              f"{len(av):3d} ({int(av.ece.sum()):3d}) {cuts}")


def long_timeouts_ns3dc(m, ev):
    """Per traced flow of at least grid.LONG_MIN bytes: its size, whether it waited out a timeout (it
    entered `CA_LOSS`: a first timeout always changes ns-3's congestion state, so the `CongState`
    trace shows it even where a second one in `CA_LOSS` does not) and its segments sent again."""
    m = m[m["size"] >= grid.LONG_MIN]
    ev = ev[ev.fid.isin(set(m.fid))]
    lost = set(ev[(ev.k == "g") & (ev.a == 4)].fid)
    retx = {fid: resent(g.a.to_numpy()) for fid, g in ev[(ev.k == "t") & (ev.b > 0)].groupby("fid")}
    return pd.DataFrame({"flow_id": m.fid.astype(int).to_numpy(), "size_bytes": m["size"].astype(int).to_numpy(),
                         "timed_out": [int(f in lost) for f in m.fid],
                         "retransmissions": [retx.get(f, 0) for f in m.fid]}).sort_values("flow_id")


STATE = {0: "open", 1: "disorder", 2: "cwr", 3: "recovery", 4: "loss"}
RANKS = ((0, 0, "0"), (1, 2, "1-2"), (3, 9, "3-9"), (10, 1 << 30, "10+"))


def recoveries_of(events):
    """One flow's loss recoveries from its events in order, (t_ns, kind, seq, state after it) with
    kind "send" (a data segment), "ack" or "state" (a change of state alone): per recovery its start, the state it ended in, its ACKs
    and segments sent, its retransmissions ((seq, t_ns), in order) and the segment a timeout ending
    it resent first."""
    out, cur, prev, sent = [], None, "open", set()
    for t, kind, seq, st in events:
        if st == "recovery" and prev != "recovery":
            cur = dict(t0=t, end=None, acks=0, sends=0, rtx=[], rto_seq=None)
            out.append(cur)
        elif st != "recovery" and prev == "recovery":
            cur["end"] = st
        if cur is not None and cur["end"] == "loss" and cur["rto_seq"] is None and kind == "send":
            cur["rto_seq"] = seq
        if st == "recovery":
            if kind == "ack":
                cur["acks"] += 1
            elif kind == "send":
                cur["sends"] += 1
                if seq in sent:
                    cur["rtx"].append((seq, t))
        if kind == "send":
            sent.add(seq)
        prev = st
    return out


def recoveries_ns3dc(ev):
    out = []
    for _, g in ev[ev.k.isin(["g", "t", "r"])].groupby("fid"):
        st, events = "open", []
        for r in g.itertuples():
            if r.k == "g":
                st = STATE[int(r.a)]
                events.append((r.t_ns, "state", None, st))
            elif r.k == "r":
                events.append((r.t_ns, "ack", r.a, st))
            elif r.b > 0:
                events.append((r.t_ns, "send", r.a, st))
        out += recoveries_of(events)
    return out


def recoveries_sharebuf(t, fids):
    out = []
    for _, g in t[t.flow_id.isin(fids) & t.event.isin(["send", "ack"])].groupby("flow_id"):
        out += recoveries_of(zip(g.time_ns, g.event, g.seq, g.state))
    return out


def cmd_recoveries(a):
    p = point(a.point)
    m, ev = ns3dc_trace(p, a.seed, a.trace)
    t = pd.read_parquet(run_dir(a) / "tcp_trace.parquet")
    fids = set(m.fid) & set(t.flow_id)
    sides = (("ns3dc", recoveries_ns3dc(ev[ev.fid.isin(fids)])), ("sharebuf", recoveries_sharebuf(t, fids)))
    print(f"{a.point} {a.alg} seed {a.seed}, sharebuf `{a.variant}`: loss recoveries of the {len(fids)} flows traced on both sides")
    for name, rec in sides:
        done = [r for r in rec if r["end"] is not None]
        to = [r for r in done if r["end"] == "loss"]
        ok = [r for r in done if r["end"] != "loss"]
        spa = sum(r["sends"] for r in ok) / max(1, sum(r["acks"] for r in ok))
        # the rank, among the recovery's retransmissions, of the segment its timeout resent first
        # (None: no timeout, or a segment the recovery never resent)
        rto_rank = [next((k for k, (q, _) in enumerate(r["rtx"]) if q == r["rto_seq"]), None) if r["end"] == "loss" else None
                    for r in done]
        cells = []
        for lo, hi, label in RANKS:
            dt = [(tt - r["t0"]) / 1e3 for r in done for _, tt in r["rtx"][lo:hi + 1]]
            first = sum(k is not None and lo <= k <= hi for k in rto_rank)
            cells.append(f"{label}: {len(dt)} sent, median {np.median(dt) if dt else np.nan:.0f} us in, {first} resent by the "
                         f"timeout ({first / max(len(dt), 1):.2%})")
        never = sum(k is None for r, k in zip(done, rto_rank) if r["end"] == "loss")
        print(f"  {name}: {len(done)} recoveries, {len(to)} end in a timeout ({len(to) / max(len(done), 1):.1%}; the "
              f"timeout resends a segment the recovery never resent at {never}); segments sent per ACK in the others "
              f"{spa:.3f}; retransmissions by rank: " + "; ".join(cells))


def same_text(a, b):
    op = lambda f: gzip.open(f, "rb") if str(f).endswith(".gz") else open(f, "rb")   # noqa: E731
    with op(a) as fa, op(b) as fb:
        return fa.read() == fb.read()


def cmd_keep(a):
    """Keep a traced ns3dc run's long-flow timeouts in results/grid/<point>/ (grid.py's traced table)."""
    p = point(a.point)
    for f in (a.fct, f"{a.trace}-tcp.txt", f"{a.trace}-tcpmap.txt"):
        if not Path(f).is_file():
            sys.exit(f"{f}: no such file (--fct is the traced run's fct file, --trace the prefix of its "
                     f"PREFIX-tcp.txt and PREFIX-tcpmap.txt)")
    ref = grid.fct_path(p, a.alg, a.seed)
    if ref is None:
        sys.exit(f"{a.point} {a.alg} seed {a.seed}: no ns3dc fct file in results/grid; run grid.py ns3dc first")
    if not same_text(ref, a.fct):
        sys.exit(f"--fct {a.fct}: the traced run's fct file differs from {ref}: not the same run, nothing kept")
    m, ev = ns3dc_trace(p, a.seed, a.trace)
    raw = pd.read_csv(f"{a.trace}-tcpmap.txt", sep=" ", header=None, usecols=[5], names=["size"])
    n_fct = len(grid.classes_ns3dc(ref)["long"][0])
    got = long_timeouts_ns3dc(m, ev)
    if len(got) != n_fct or (raw["size"] >= grid.LONG_MIN).sum() != n_fct:
        sys.exit(f"--trace {a.trace}: {len(got)} long flows traced and matched by 5-tuple "
                 f"({int((raw['size'] >= grid.LONG_MIN).sum())} in the map), the fct file has {n_fct}: nothing kept")
    out = grid.GRID / p["name"] / f"long-{a.alg}-s{a.seed}.csv.gz"
    out.parent.mkdir(parents=True, exist_ok=True)
    with gzip.GzipFile(out, "wb", mtime=0) as fh:
        fh.write(got.to_csv(index=False).encode())
    cmd = grid.ns3dc_argv(p, a.alg, a.seed, f"fct-{a.alg}-s{a.seed}.txt", f"tor-{a.alg}-s{a.seed}.txt")
    (out.parent / f"long-{a.alg}-s{a.seed}.txt").write_text(
        f"{' '.join(cmd)}\n# run again with TCP trace sources on its web-search senders (a scratch copy of the "
        f"example, tcp_diag.py's docstring; the smallest flow traced {int(raw['size'].min())} B); its fct file is "
        f"byte-identical to the one grid.py reads for this run. {len(got)} long flows, {int(got.timed_out.sum())} "
        f"waited out a timeout.\n")
    print(f"{out.relative_to(grid.REPO)}: {len(got)} long flows, {int(got.timed_out.sum())} timed out "
          f"({got.timed_out.mean():.2%}), {int(got.retransmissions.sum())} segments resent")


# ns-3's TCP flags (TcpHeader) as sharebuf's packet flags (packet.rs): SYN 0x02 -> 1, ECE 0x40 -> 32
NS3_SYN, NS3_ACK, NS3_ECE = 0x02, 0x10, 0x40


def replay_input(m, prefix, ws_csv, path):
    """ACKS.txt for sharebuf-tcp-replay from ns3dc's PREFIX-acks.txt (one line per ACK a traced
    sender received: t_ns nf ack flags tsval tsecr window [SACK edges] [f<send ns>]): ns-3's
    sequence numbers start at 1 (ISN 0), sharebuf's at 0. The echoed send time is the ACK's
    FeedbackTag stamp (`f`, ns: the TcpAdvanced senders', which TIMELY reads) where it has one,
    else the timestamp echo (TcpOptionTS, ms). Each flow's hosts are sharebuf's (`ws_csv`)."""
    acks = {}
    with open(f"{prefix}-acks.txt") as fh:
        for line in fh:
            t = line.split()
            acks.setdefault(int(t[1]), []).append(t)
    hosts = pd.read_csv(ws_csv, usecols=["id", "src", "dst"]).set_index("id")
    with open(path, "w") as out:
        for r in m.itertuples():
            src, dst = hosts.loc[r.fid, "src"], hosts.loc[r.fid, "dst"]
            # the trace sources are connected 1 ns after the flow starts (its SYN)
            out.write(f"F {r.fid} {r.size} {r.t_ns - 1} 1 {src} {dst}\n")
            for t in acks.get(r.nf, []):
                fl = int(t[3])
                if not fl & NS3_ACK:
                    continue  # the peer's reset after the close
                flags = (1 if fl & NS3_SYN else 0) | (32 if fl & NS3_ECE else 0)
                fb = t[-1][1:] if t[-1].startswith("f") else None
                echo = int(fb) if fb is not None else int(t[5]) * 1_000_000
                edges = " ".join(str(int(x) - 1) for x in t[7:len(t) - (fb is not None)])
                out.write(f"A {t[0]} {int(t[2]) - 1} {flags} {echo} {edges}\n")


# sends this close in time are the same send (ns)
SAME_SEND_NS = 2


def first_divergence(ns_sends, sb_sends, tol_ns=SAME_SEND_NS):
    """The index of the first send that differs in sequence number or by more than `tol_ns` in
    time (None: none). ns-3 sends the first data a time step after the SYN-ACK
    (`TcpSocketBase::ProcessSynSent` schedules `SendPendingData` after `TimeStep (1)`)."""
    for k, (x, y) in enumerate(zip(ns_sends, sb_sends)):
        if x[1] != y[1] or abs(x[0] - y[0]) > tol_ns:
            return k
    return None if len(ns_sends) == len(sb_sends) else min(len(ns_sends), len(sb_sends))


def cmd_replay(a):
    """Feed each traced ns3dc sender's ACKs (PREFIX-acks.txt) to sharebuf's sender (`variant`'s
    transport) and set what each sends, segment by segment, against ns3dc's."""
    import subprocess
    for f in (f"{a.trace}-tcp.txt", f"{a.trace}-tcpmap.txt", f"{a.trace}-acks.txt"):
        if not Path(f).is_file():
            sys.exit(f"{f}: no such file (--trace is the prefix of a traced ns3dc run that logged its senders' "
                     f"events and ACKs: PREFIX-tcp.txt, PREFIX-tcpmap.txt, PREFIX-acks.txt; see the docstring)")
    from sharebuf.scenario.engine_spec import engine_spec_json, resolve
    from sharebuf.scenario.load import load_scenario
    p = point(a.point)
    prof, keys = VARIANTS[a.variant]
    csvs = grid.replay_csvs(p, a.seed, hashed=keys.get("topology.ecmp_hash") == "flow")
    sc, base, _ = load_scenario(with_keys(grid.scenario(p, a.alg, a.seed, *csvs), keys), prof)
    out = Path(a.out) / a.variant / f"{a.alg}-s{a.seed}"
    out.mkdir(parents=True, exist_ok=True)
    (out / "spec.json").write_text(engine_spec_json(resolve(sc, base)))
    m, ev = ns3dc_trace(p, a.seed, a.trace)
    replay_input(m, a.trace, csvs[0], out / "acks.txt")
    exe = grid.REPO / "target" / "release" / "sharebuf-tcp-replay"
    if not exe.is_file():
        sys.exit(f"{exe}: not built (cargo build --release -p sharebuf-core --bin sharebuf-tcp-replay)")
    with open(out / "replay.tsv", "w") as fh:
        subprocess.run([str(exe), str(out / "spec.json"), str(out / "acks.txt")], stdout=fh, check=True)
    sb = pd.read_csv(out / "replay.tsv", sep="\t")
    ev = ev[ev.fid.isin(set(m.fid))]
    same, rows = 0, []
    for fid, g in ev.groupby("fid"):
        st, state_at, ns = "open", [], []
        for r in g.itertuples():
            if r.k == "g":
                st = STATE[int(r.a)]
            elif r.k == "t" and r.b > 0:
                ns.append((int(r.t_ns), int(r.a) - 1))
                state_at.append(st)
        h = sb[(sb.flow == fid) & (sb.event == "send")]
        mine = list(zip(h.t_ns.astype(int), h.seq.astype(int)))
        k = first_divergence(ns, mine)
        if k is None:
            same += 1
            continue
        x = ns[k] if k < len(ns) else None
        y = mine[k] if k < len(mine) else None
        kind = ("sharebuf sends later or not at all" if y is None or (x is not None and y[0] > x[0] + SAME_SEND_NS) else
                "sharebuf sends earlier or more" if x is None or y[0] < x[0] - SAME_SEND_NS else "another segment at the same time")
        hs = sb[(sb.flow == fid) & (sb.t_ns <= (y or x)[0])].tail(1)
        rows.append(dict(fid=fid, k=k, of=len(ns), t_ns=(x or y)[0], ns3dc=x, sharebuf=y, kind=kind,
                         ns3dc_state=state_at[k] if k < len(state_at) else state_at[-1] if state_at else "?",
                         sharebuf_state=hs.state.iloc[0] if len(hs) else "?"))
    d = pd.DataFrame(rows)
    print(f"{a.point} {a.alg} seed {a.seed}, sharebuf `{a.variant}` driven by ns3dc's ACKs: {len(m)} traced senders, "
          f"{same} send the same segments at the same times to the end")
    if len(d):
        d["at"] = d.k / d["of"].clip(lower=1)
        print(d.groupby(["ns3dc_state", "kind"]).size().rename("first divergences").to_string())
        d.to_csv(out / "divergences.csv", index=False)
        print(f"{out / 'divergences.csv'}: per flow the first send that differs")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("keep")
    s.add_argument("--point", required=True)
    s.add_argument("--alg", required=True, choices=["dt", "abm"])
    s.add_argument("--seed", type=int, required=True)
    s.add_argument("--trace", required=True, help="PREFIX of ns3dc's PREFIX-tcp.txt and PREFIX-tcpmap.txt")
    s.add_argument("--fct", required=True, help="the fct file the traced run wrote (checked against results/grid)")
    for name in ("run", "compare", "flow", "recoveries", "replay"):
        s = sub.add_parser(name)
        s.add_argument("--point", default="buf3.44-dctcp")
        s.add_argument("--alg", default="dt", choices=["dt", "abm"])
        s.add_argument("--seed", type=int, default=2)
        s.add_argument("--variant", default="profile_ns3hash", choices=sorted(VARIANTS))
        s.add_argument("--out", required=True)
        if name == "run":
            s.add_argument("--min-size", type=int, default=1_000_000)
        else:
            s.add_argument("--trace", required=True, help="PREFIX of ns3dc's PREFIX-tcp.txt and PREFIX-tcpmap.txt")
        if name == "flow":
            s.add_argument("--flow", type=int, required=True)
            s.add_argument("--until-us", type=float, default=3000)
            s.add_argument("--bin-us", type=float, default=100)
    a = ap.parse_args()
    {"run": cmd_run, "compare": cmd_compare, "flow": cmd_flow, "keep": cmd_keep, "recoveries": cmd_recoveries,
     "replay": cmd_replay}[a.cmd](a)


if __name__ == "__main__":
    main()
