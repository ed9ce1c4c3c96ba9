"""Reverie vs DT vs ABM on a small mixed RDMA + TCP scenario (docs/schemes/reverie.md,
"Burst absorption on a mixed workload"; issue #26).

The mixed setup of ns3dc's Reverie runs (run-rdma-bursts.sh: RDMA incast bursts beside Cubic web
search at 0.8), scaled down in hosts, not in rates: a 2-leaf, 2-spine fabric of 25 Gbps, 2 us
links (8 hosts per leaf, 4:1 oversubscribed at the leaves as the runs), 5.12 KB per port per Gbps
of buffer (1.28 MB per leaf, as the runs' 5.12 × 1000 B), switch keys as the program sets them
(bench/ns3dc/reverie_point.py: queues 0 and 3 lossless with its headroom formula, RED marking at
dequeue with the 25 Gbps map, kmin 100 KB, kmax 400 KB, pmax 0.2, queue 0 strictly first and
round robin over the others; ns-3.39's TCP through profile
"ns3dc"). Lossless priority 3: incast queries on the RoCE transport with DCQCN (fan-in 8 = every
host of the other leaf, as the runs' fan-in 16, `--burst` bytes per query, 50 queries/s per host
so that 100 ms hold as many queries as the runs' seconds at 2/s). Lossy priority 1: Cubic web
search at `--load` of the leaf uplinks. DT and ABM with alpha = 1 (the runs' alphas file), ABM's
code preset; Reverie with gamma = 0.999 (every run script's).

Prints per scheme the mean over seeds and [min, max] of: RDMA incast flows' mean and p99 slowdown,
TCP short (< 100 KB) flows' p99 slowdown, TCP long (> 1 MB) flows' mean slowdown (the runs' plots'
classes; p99 as their `sorted[int(n·0.99) − 1]`), PFC frames (pauses + resumes, sent + received,
the plots' "# PFC"), lossy drops, and the RoCE NACKs (0: nothing lossless was lost).

    PYTHONPATH=python python bench/reverie_mixed.py [--seeds 1 2 3] [--burst 640000] [--load 0.8]
"""

import argparse
import importlib.util
import sys
from pathlib import Path

import numpy as np

import sharebuf

_spec = importlib.util.spec_from_file_location("reverie_point", Path(__file__).resolve().parent / "ns3dc" / "reverie_point.py")
rp = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rp)

RATE_GBPS, DELAY_US, PER_LEAF = 25, 2.0, 8
PORTS = PER_LEAF + 2
BUFFER = int(PORTS * RATE_GBPS * 5120)  # 5.12 KB (of 1000 B) per port per Gbps
MAX_BDP = int(RATE_GBPS * 1e9 * (2 * 4 * DELAY_US * 1e-6 + 4 * 1000 * 8 / (RATE_GBPS * 1e9)) / 8)


def scenario(scheme, seed, burst, load, ms):
    return {
        "seed": seed, "max_ms": 10 * ms, "arrivals_until_ms": ms,
        "profile": "ns3dc",
        "topology": {"kind": "leaf_spine", "leaves": 2, "spines": 2, "servers_per_leaf": PER_LEAF, "links_per_leaf_spine": 1,
                     "host_link_gbps": RATE_GBPS, "fabric_link_gbps": RATE_GBPS, "link_delay_us": DELAY_US, "ecmp_hash": "salted"},
        "switch": {"buffer_bytes": BUFFER, **rp.switch_keys(scheme, RATE_GBPS, DELAY_US)},
        "host": dict(rp.QBB_HOST),
        "transport": rp.transport_keys(MAX_BDP),
        "workload": [
            {"kind": "poisson", "name": "tcp", "cdf": "websearch", "load": load, "load_definition": "uplink", "priority": 1},
            {"kind": "incast", "name": "rdma", "request_bytes": burst, "fan_in": PER_LEAF, "queries_per_s_per_host": 50,
             "priority": 3, "transport": "roce", "cc": "dcqcn"},
        ],
    }


def metrics(r):
    f = r.flows
    rd, tcp = f[f.workload == "rdma"], f[f.workload == "tcp"]
    short, long_ = tcp[tcp.size_bytes < 100_000], tcp[tcp.size_bytes > 1_000_000]
    p = r.summary["pfc"]
    assert p["lossless_drops"] == 0, "a lossless packet was lost"
    return {
        "rdma_mean": rd.slowdown.mean(), "rdma_p99": rp.p99(rd.slowdown.dropna()),
        "tcp_short_p99": rp.p99(short.slowdown.dropna()), "tcp_long_mean": long_.slowdown.mean(),
        "pfc_frames": sum(row[k] for row in p["ports"] for k in ("pauses_sent", "resumes_sent", "pauses_received", "resumes_received")),
        "lossy_drops": r.summary["drops_total"], "nacks": r.summary["roce"]["nacks"],
        "n": f"{len(rd)}/{len(short)}/{len(long_)}", "unfinished": int((~f.finished).sum()),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--burst", type=int, default=BUFFER // 2, help="bytes per query (default: half the buffer)")
    ap.add_argument("--load", type=float, default=0.8)
    ap.add_argument("--ms", type=float, default=100)
    ap.add_argument("--schemes", nargs="+", default=list(rp.SCHEMES))
    a = ap.parse_args()
    keys = ["rdma_mean", "rdma_p99", "tcp_short_p99", "tcp_long_mean", "pfc_frames", "lossy_drops", "nacks"]
    table = [f"burst {a.burst} B (buffer {BUFFER} B), TCP load {a.load}, arrivals {a.ms} ms, seeds {a.seeds}", "",
             "| scheme | " + " | ".join(keys) + " | flows rdma/short/long | unfinished |", "|---" * (len(keys) + 3) + "|"]
    per_seed = []
    for name in a.schemes:
        rows = []
        for s in a.seeds:
            row = metrics(sharebuf.run(scenario(name, s, a.burst, a.load, a.ms)))
            per_seed.append(f"- {name} seed {s}: " + ", ".join(f"{k} {row[k]:.2f}" if isinstance(row[k], float) else f"{k} {row[k]}"
                                                              for k in keys + ["n", "unfinished"]))
            print(per_seed[-1], file=sys.stderr, flush=True)
            rows.append(row)
        cells = []
        for k in keys:
            v = np.array([row[k] for row in rows], dtype=float)
            fmt = "{:.0f}" if k in ("pfc_frames", "lossy_drops", "nacks") else "{:.2f}"
            cells.append(fmt.format(v.mean()) + " [" + fmt.format(v.min()) + "–" + fmt.format(v.max()) + "]")
        table.append(f"| {name} | " + " | ".join(cells) + f" | {', '.join(r['n'] for r in rows)} | {sum(r['unfinished'] for r in rows)} |")
    print("\n".join(table + [""] + per_seed))


if __name__ == "__main__":
    main()
