#!/usr/bin/env python3
"""sharebuf against ns3dc's Reverie example at one point (issue #26, must-show 3;
docs/schemes/reverie.md, "sharebuf against ns3dc"): each class's p99 slowdown, on the same flows.

ns3dc side: `reverie-evaluation-sigcomm2023` (examples/Reverie) at one point of
run-rdma-bursts.sh: 16 leaves x 16 servers and 4 spines, every link 25 Gbps and 2 us, 2.56 MB per
switch, RDMA incast queries on priority 3 (lossless, PFC, DCQCN, RED marking at dequeue), Cubic
web search on priority 1 at 0.8 of the leaf uplinks, launch window shortened with the program's own
START_TIME / FLOW_LAUNCH_END_TIME / END_TIME. Its fct file is the input here (`--fct`). The exact
command is in bench/ns3dc/results/reverie/ beside the fct file.

sharebuf side: the same flows (re-derived from glibc rand() in the program's draw order:
`generate` below, with bench/ns3dc/ns3dc_flows.py's rand/CDF helpers), replayed as two `flows`
workloads: web search on TCP (Cubic, ns-3.39's TCP through `profile = "ns3dc"`'s transport keys),
incast responses on the RoCE transport (`transport = "roce"`, DCQCN), same switch settings.
ns3dc's host and switch devices here are QbbNetDevices, not the ABM example's point-to-point
devices with fq_codel, so the profile's device and NIC keys are set back (no device FIFOs, FIFO
NIC, wire accounting, per-switch ECMP salt as SwitchNode's `m_ecmpSeed = node id`).

Slowdown on both sides as ns3dc prints it: TCP fct / (17.28 us + size·8 / 25 Gb/s); RDMA
fct / (17.28 us + (size + 48 B per 1000 B packet)·8 / 25 Gb/s). Classes as sigcomm-plots.py:
RDMA incast (priority 3), TCP short (< 100 KB), TCP long (> 1 MB); p99 as its
`sorted[int(n·0.99) − 1]`.

    python bench/ns3dc/reverie_point.py --fct FCT_FILE [--seed 1] [--launch-s 0.05] [--end-s 0.1]
        [--burst 1500000] [--scheme reverie|dt|abm] [--variant program|rr|rr-acks-lossy] [--out DIR]
"""

from __future__ import annotations

import argparse
import ctypes
import importlib.util
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
LEAVES, SERVERS, SPINES = 16, 16, 4
RATE_BPS = 25e9
BUFFER = 2_560_000  # 20 ports x 25 Gbps x 5.12 KB, run-rdma-bursts.sh's BUFFERSIZE
MAX_RTT_NS = 17_280  # the program's maxRtt as it prints it: 2 x (4 hops x 2 us) + 4 x 1000 B at 25 Gbps
RDMA_HDR = 48  # bytes per RDMA packet beyond the payload in qp_finish's standalone FCT
PAYLOAD = 1000


def ns3dc_flows_module():
    spec = importlib.util.spec_from_file_location("ns3dc_flows", HERE / "ns3dc_flows.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def generate(nf, seed, launch_s, tcpload=0.8, rdmaload=0.0, burst=1_500_000, rdma_qrate=2.0, start=1.0):
    """The program's flows: tuples (kind, src, dst, size, start time, query id or -1, priority).

    Draw order (srand(seed) just before): for each leaf, its RDMA web search senders (none at
    rdmaload 0: a zero rate draws nothing), then the RDMA incast queries its servers request
    (per server: Poisson times; each query gets burst/16 bytes from every server of the next
    leaf); then for each leaf its TCP web search senders (per server: Poisson times, receiver
    uniform in the next leaf, size from the CDF). Priorities: RDMA 3, TCP 1."""
    end = start + launch_s
    oversub = float(SERVERS * RATE_BPS) / (RATE_BPS * SPINES * 1)

    def rate(load):
        return load * RATE_BPS * SERVERS / oversub / (8 * nf.avg_cdf()) / SERVERS

    nf.libc.srand(ctypes.c_uint(seed))
    flows, q = [], 0

    def sized():
        size = int(nf.gen_cdf())
        while size == 0:
            size = int(nf.gen_cdf())
        return size

    def pg(r):
        return nf.poisson_interval(r) if r > 0 else 0.0

    for leaf in range(LEAVES):
        nxt = (leaf + 1) % LEAVES
        r = rate(rdmaload)
        for tx in range(SERVERS):
            t = start + pg(r)
            while start < t < end:
                dst = nxt * SERVERS + nf.rand_range_int(0, SERVERS)
                flows.append(("rdma", leaf * SERVERS + tx, dst, sized(), t, -1, 3))
                t += pg(r)
        if rdma_qrate > 0 and burst > 0:
            per = int(float(burst) / float(SERVERS))
            for i in range(SERVERS):
                t = start + pg(rdma_qrate)
                while start < t < end:
                    for r_ in range(SERVERS):
                        flows.append(("incast", nxt * SERVERS + r_, leaf * SERVERS + i, per, t, q, 3))
                    q += 1
                    t += pg(rdma_qrate)
    r = rate(tcpload)
    for leaf in range(LEAVES):
        nxt = (leaf + 1) % LEAVES
        for tx in range(SERVERS):
            t = start + pg(r)
            while start < t < end:
                rx = nf.rand_range_int(0, SERVERS)
                flows.append(("tcp", leaf * SERVERS + tx, nxt * SERVERS + rx, sized(), t, -1, 1))
                t += pg(r)
    return flows, start


def write_csvs(flows, start, out_dir):
    """Two replay CSVs: tcp.csv (web search, with handshake) and rdma.csv (incast responses and
    RDMA web search, queue pairs: no handshake)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    with open(out_dir / "tcp.csv", "w") as ft, open(out_dir / "rdma.csv", "w") as fr:
        ft.write("id,src,dst,size_bytes,start_s,priority\n")
        fr.write("id,src,dst,size_bytes,start_s,priority,query\n")
        nt = nr = 0
        for k, s, d, size, t, qq, prio in flows:
            if k == "tcp":
                ft.write(f"{nt},{s},{d},{size},{t - start:.9f},{prio}\n")
                nt += 1
            else:
                fr.write(f"{nr},{s},{d},{size},{t - start:.9f},{prio},{qq if qq >= 0 else ''}\n")
                nr += 1
    return out_dir / "tcp.csv", out_dir / "rdma.csv"


def classify(df):
    import numpy as np

    rdma = df.priority == 3
    return np.where(rdma, np.where(df.incast, "rdma incast", "rdma other"),
                    np.where(df["size"] < 100_000, "tcp short", np.where(df["size"] > 1_000_000, "tcp long", "tcp mid")))


def slowdown(fct_ns, size, rdma):
    import numpy as np

    size = np.asarray(size, dtype=float)
    wire = np.where(rdma, size + np.ceil(size / PAYLOAD) * RDMA_HDR, size)
    return np.asarray(fct_ns, dtype=float) / (MAX_RTT_NS + np.floor(wire * 8 / RATE_BPS * 1e9))


def ns3dc_table(path):
    """ns3dc's fct file: timestamp flowsize fctus basefctus slowdown baserttus priority incastflow
    (the columns are in ns despite their names)."""
    import pandas as pd

    df = pd.read_csv(path, sep=r"\s+")
    out = pd.DataFrame({"size": df.flowsize.astype(float), "fct_ns": df.fctus.astype(float),
                        "priority": df.priority.astype(int), "incast": df.incastflow.astype(int) == 1,
                        "slowdown_printed": df.slowdown.astype(float)})
    out["slowdown"] = slowdown(out.fct_ns, out["size"], out.priority == 3)
    out["cls"] = classify(out)
    return out


#: The schemes as the run scripts set them: alphas file 1 everywhere, ABM's code, Reverie's gamma.
SCHEMES = {"reverie": {"scheme": "reverie", "gamma": 0.999},
           "dt": {"scheme": "dt", "alpha": 1.0},
           "abm": {"scheme": "abm", "preset": "code", "alpha": 1.0}}


def switch_keys(scheme, rate_gbps=25, delay_us=2.0):
    """[switch] as reverie-evaluation-sigcomm2023 configures its switches, for links of
    `rate_gbps` and `delay_us`: queues 0 and 3 lossless with the program's headroom
    2·(payload + 48) + 3 860 + 2·rate·delay/8 each (queue 0 carries only control packets and TCP's
    ACKs), RED marking at dequeue from config-workload.txt's per-rate maps (kmin 4 KB and kmax
    16 KB per Gbps, pmax 0.2: 100/400 KB at 25 Gbps), queue 0 strictly first and packet
    round robin over the others (BEgressQueue::DoDequeueRR), no device FIFO, wire bytes. Buffer
    size is the caller's."""
    return {"queues_per_port": 4, "scheduler": "rr_strict0",
            "lossless_priorities": [0, 3],
            "pfc_headroom_bytes": (PAYLOAD + 48) * 2 + 3860 + int(2 * rate_gbps * 1e9 * delay_us * 1e-6 / 8),
            "red_kmin_bytes": 4_000 * rate_gbps, "red_kmax_bytes": 16_000 * rate_gbps, "red_pmax": 0.2,
            "device_queue_packets": 0, "buffer_accounting": "wire", "bm": dict(SCHEMES[scheme])}


def transport_keys(max_bdp_bytes):
    """[transport] for the program's TCP (ns-3.39's, through profile "ns3dc"): Cubic, 1000 B
    segments, initial window maxBdp / 1000 + 1, 1 ms minimum and initial RTO, ABM's unscheduled
    tag on the first 100 packets (RTTBytes = 100 x payload), ACKs on queue 0. Header 48 B for
    every packet (the RDMA packets' exact overhead; TCP's is 6 B more in ns-3)."""
    return {"cc": "cubic", "mss_bytes": PAYLOAD, "header_bytes": RDMA_HDR, "init_cwnd_packets": max_bdp_bytes // PAYLOAD + 1,
            "min_rto_us": 1000, "initial_rto_us": 1000, "unscheduled_bytes": 100 * PAYLOAD, "ack_priority": 0}


#: Keys of profile "ns3dc" that belong to the ABM example's point-to-point devices, set back for
#: the Reverie program's QbbNetDevices (no device FIFO, FIFO host NIC).
QBB_HOST = {"nic_qdisc": "fifo", "device_queue_packets": 0, "nic_ecn_k_bytes": "none"}


#: Ablations for the mechanism (docs/schemes/reverie.md): "program" is the program's setup; "rr"
#: serves queue 0 in the round robin with the others instead of strictly first; "rr-acks-lossy"
#: does too and keeps queue 0 (TCP's ACKs) lossy, with the same headroom pool (priority 3's
#: per-port headroom doubled), so that no ACK queue can be paused.
VARIANTS = ("program", "rr", "rr-acks-lossy")


def scenario(seed, launch_s, end_s, replay, scheme, variant="program"):
    sw = {"buffer_bytes": BUFFER, **switch_keys(scheme)}
    if variant.startswith("rr"):
        sw["scheduler"] = "rr"
    if variant == "rr-acks-lossy":
        sw["lossless_priorities"] = [3]
        sw["pfc_headroom_bytes"] *= 2
    return {
        "seed": seed, "arrivals_until_ms": launch_s * 1000, "max_ms": end_s * 1000,
        "profile": "ns3dc",
        "topology": {"kind": "leaf_spine", "leaves": LEAVES, "spines": SPINES, "servers_per_leaf": SERVERS,
                     "links_per_leaf_spine": 1, "host_link_gbps": 25, "fabric_link_gbps": 25, "link_delay_us": 2,
                     "ecmp_hash": "salted"},
        "switch": sw,
        "host": dict(QBB_HOST),
        "transport": transport_keys(54_000),
        "workload": [
            {"kind": "flows", "name": "tcp", "file": str(replay / "tcp.csv"), "priority": 1},
            {"kind": "flows", "name": "rdma", "file": str(replay / "rdma.csv"), "priority": 3, "transport": "roce",
             "cc": "dcqcn", "handshake": False},
        ],
    }


def sharebuf_table(res):
    import numpy as np
    import pandas as pd

    f = res.flows
    done = f.fct_s.notna().to_numpy()
    rdma = (f.workload == "rdma").to_numpy()
    out = pd.DataFrame({"size": f.size_bytes.astype(float).to_numpy(), "fct_ns": (f.fct_s * 1e9).to_numpy(),
                        "priority": np.where(rdma, 3, 1), "incast": rdma & f.query_id.notna().to_numpy()})
    out["slowdown"] = slowdown(out.fct_ns, out["size"], rdma)
    out["cls"] = classify(out)
    return out[done], int((~done).sum())


def pd_read_pfc(fct_path):
    """ns3dc's pfc file beside the fct file (fct-X -> pfc-X, or X.fct -> X.pfc), if there:
    records by node type (0 host, 1 switch) and type (1 pause received, 0 resume received, 2 pause sent, 3 resume sent)."""
    import pandas as pd

    p = Path(str(fct_path).replace("fct-", "pfc-").replace(".fct", ".pfc"))
    if p == Path(fct_path) or not p.exists():
        return None
    df = pd.read_csv(p, sep=r"\s+")
    return {f"nodetype {k[0]} type {k[1]}": int(v) for k, v in df.groupby(["NodeType", "type"]).size().items()}


def p99(x):
    """sigcomm-plots.py's percentile: the sorted list at int(n·0.99) − 1."""
    s = sorted(x)
    return float(s[max(int(len(s) * 0.99) - 1, 0)]) if s else float("nan")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fct", required=True, help="ns3dc reverie-evaluation-sigcomm2023 fct file of this point")
    ap.add_argument("--seed", type=int, default=1, help="the program's --randomSeed (the run scripts leave its default, 1)")
    ap.add_argument("--launch-s", type=float, default=0.05, help="FLOW_LAUNCH_END_TIME - START_TIME")
    ap.add_argument("--end-s", type=float, default=0.1, help="END_TIME - START_TIME")
    ap.add_argument("--burst", type=int, default=1_500_000, help="--rdmarequestSize")
    ap.add_argument("--scheme", default="reverie", choices=("reverie", "dt", "abm"))
    ap.add_argument("--variant", default="program", choices=VARIANTS)
    ap.add_argument("--out", default="reverie-ns3dc-point")
    a = ap.parse_args(argv)
    import sharebuf

    out = Path(a.out)
    nf = ns3dc_flows_module()
    flows, start = generate(nf, a.seed, a.launch_s, burst=a.burst)
    write_csvs(flows, start, out / "replay")
    ns = ns3dc_table(a.fct)
    from collections import Counter

    kinds = Counter(k for k, *_ in flows)
    # Same flows: the fct file's sizes (6 significant digits) against the generated ones.
    want = Counter((int(float(f"{x[3]:.6g}")), x[0] != "tcp") for x in flows)
    have = Counter((int(s), p == 3) for s, p in zip(ns["size"], ns.priority))
    print(f"seed {a.seed}: generated {dict(kinds)}; ns3dc fct rows {len(ns)}; "
          f"fct rows not generated {sum((have - want).values())}; generated not in fct (unfinished) {sum((want - have).values())}")
    res = sharebuf.run(scenario(a.seed, a.launch_s, a.end_s, (out / "replay").resolve(), a.scheme, a.variant))
    sb, unfinished = sharebuf_table(res)
    res.flows.to_parquet(out / f"sharebuf-{a.scheme}-{a.variant}-flows.parquet")
    p = res.summary.get("pfc", {})
    ports = p.get("ports", [])
    pfc = sum(row[k] for row in ports for k in ("pauses_sent", "resumes_sent", "pauses_received", "resumes_received"))
    hosts = LEAVES * SERVERS
    nic = [row for row in ports if row["node"] < hosts]
    print(f"sharebuf ({a.scheme}, {a.variant}): unfinished {unfinished}, drops {res.summary['drops_total']}, PFC frames {pfc}, "
          f"lossless drops {p.get('lossless_drops')}, roce {res.summary.get('roce')}; host NICs paused: "
          f"{len(nic)} NICs, {sum(r['pauses_received'] for r in nic)} pauses, {sum(r['paused_us'] for r in nic):.0f} us in all")
    ns_pfc = pd_read_pfc(a.fct)
    if ns_pfc is not None:
        print(f"ns3dc pfc file: {ns_pfc}")
    rows = ["| class | ns3dc p99 (flows) | sharebuf p99 (flows) | sharebuf / ns3dc | ns3dc mean | sharebuf mean |",
            "|---|---|---|---|---|---|"]
    for c in ("rdma incast", "tcp short", "tcp long"):
        x, y = ns[ns.cls == c].slowdown, sb[sb.cls == c].slowdown
        rows.append(f"| {c} | {p99(x):.2f} ({len(x)}) | {p99(y):.2f} ({len(y)}) | {p99(y) / p99(x):.2f} | {x.mean():.2f} | {y.mean():.2f} |")
    md = "\n".join(rows)
    (out / "reverie_point.md").write_text(md + "\n")
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
