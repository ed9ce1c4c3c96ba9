"""Reverie vs DT vs ABM on a small mixed lossless + lossy scenario (docs/schemes/reverie.md,
"Burst absorption on a mixed workload"; issue #26).

A 2-leaf, 2-spine fabric of 10 Gbps links (8 hosts per leaf, 4:1 oversubscribed at the leaves as
the Reverie runs), 5.12 KB per port per Gbps of buffer, priority 3 lossless (PFC), priority 1 lossy.
Lossless: incast queries (fan-in 8 from the other leaf, `--burst` bytes per query, 50 queries/s per
host) with DCQCN (step ECN marking at 40 KB on queue 3, the runs' Kmin..Kmax band scaled to this
buffer). Lossy: Cubic web search at `--load` of the leaf uplinks. DT and ABM with alpha = 1 (the
runs' alphas), ABM's code preset; Reverie's defaults. Prints per scheme the mean over seeds and
[min, max] of: lossless incast flows' mean and p99 slowdown, lossy short (< 100 KB) flows' p99
slowdown, lossy long (> 1 MB) flows' mean slowdown, PFC frames (pauses + resumes, sent +
received, the reference's "# PFC"), lossy drops.

    PYTHONPATH=python python bench/reverie_mixed.py [--seeds 1 2 3] [--burst 300000] [--load 0.8]
"""

import argparse

import numpy as np

import sharebuf

SCHEMES = {
    "dt": {"scheme": "dt", "alpha": 1.0},
    "abm": {"scheme": "abm", "preset": "code", "alpha": 1.0},
    "reverie": {"scheme": "reverie"},
}


def scenario(bm, seed, burst, load, ms):
    return {
        "seed": seed, "max_ms": 10 * ms, "arrivals_until_ms": ms,
        "topology": {"kind": "leaf_spine", "leaves": 2, "spines": 2, "servers_per_leaf": 8, "links_per_leaf_spine": 1,
                     "host_link_gbps": 10, "fabric_link_gbps": 10, "link_delay_us": 1},
        "switch": {"buffer_kb_per_port_per_gbps": 5.12, "queues_per_port": 4, "lossless_priorities": [3],
                   "ecn_k_bytes": [10**12, 10**12, 10**12, 40_000], "bm": dict(bm)},
        "host": {"nic_ecn_k_bytes": "none"},
        "transport": {"cc": "cubic"},
        "workload": [
            {"kind": "poisson", "name": "tcp", "cdf": "websearch", "load": load, "load_definition": "uplink", "priority": 1},
            {"kind": "incast", "name": "rdma", "request_bytes": burst, "fan_in": 8, "queries_per_s_per_host": 50, "priority": 3, "cc": "dcqcn"},
        ],
    }


def metrics(r):
    f = r.flows
    rd, tcp = f[f.workload == "rdma"], f[f.workload == "tcp"]
    short, long_ = tcp[tcp.size_bytes < 100_000], tcp[tcp.size_bytes > 1_000_000]
    p = r.summary["pfc"]
    assert p["lossless_drops"] == 0 and rd.retransmits.sum() == 0, "a lossless packet was lost"
    return {
        "rdma_mean": rd.slowdown.mean(), "rdma_p99": np.percentile(rd.slowdown, 99),
        "tcp_short_p99": np.percentile(short.slowdown, 99), "tcp_long_mean": long_.slowdown.mean(),
        "pfc_frames": sum(row[k] for row in p["ports"] for k in ("pauses_sent", "resumes_sent", "pauses_received", "resumes_received")),
        "lossy_drops": r.summary["drops_total"],
        "n": f"{len(rd)}/{len(short)}/{len(long_)}", "unfinished": int((~f.finished).sum()),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--burst", type=int, default=300_000)
    ap.add_argument("--load", type=float, default=0.8)
    ap.add_argument("--ms", type=float, default=100)
    a = ap.parse_args()
    keys = ["rdma_mean", "rdma_p99", "tcp_short_p99", "tcp_long_mean", "pfc_frames", "lossy_drops"]
    print(f"burst {a.burst} B, TCP load {a.load}, arrivals {a.ms} ms, seeds {a.seeds}")
    print("| scheme | " + " | ".join(keys) + " | flows rdma/short/long | unfinished |")
    print("|---" * (len(keys) + 3) + "|")
    for name, bm in SCHEMES.items():
        rows = [metrics(sharebuf.run(scenario(bm, s, a.burst, a.load, a.ms))) for s in a.seeds]
        cells = []
        for k in keys:
            v = np.array([row[k] for row in rows], dtype=float)
            fmt = "{:.0f}" if k in ("pfc_frames", "lossy_drops") else "{:.2f}"
            cells.append(fmt.format(v.mean()) + " [" + fmt.format(v.min()) + "–" + fmt.format(v.max()) + "]")
        print(f"| {name} | " + " | ".join(cells) + f" | {', '.join(r['n'] for r in rows)} | {sum(r['unfinished'] for r in rows)} |")


if __name__ == "__main__":
    main()
