"""Which queue each traffic class used in the ABM authors' runs with nPrior > 2.

`abm-evaluation.cc` (inet-tub/ns3-datacenter, the program behind ABM Figs. 6-12) draws one priority
per sending leaf, `rand_range(1, nPrior - 1)` truncated to an integer, from glibc `rand()` seeded
with `srand(8)` (the scripts never pass `--randomSeed`). The draws happen in this order, with every
generated flow's own draws in between (facts from ns3-datacenter-notes §4-5, sequence replicated
here draw by draw):

    for leaf L = 0, 1:
        priority of L's web search                       rand_range<uint32_t>(1, nPrior-1)
        per server: first inter-arrival, then per flow: dst server, size (again while 0), next inter-arrival
        priority of L's incast (responders on leaf L+1)  rand_range<uint32_t>(1, nPrior-1)
        per requesting server: first inter-arrival, then per query: 32 connection-open times, next inter-arrival

So the queues depend on the flow count, i.e. on the load and on FlowLaunchEndTime. This script
prints them. Checked against ns3dc's own fct files (priority column) for run-interval.sh's setup
(nPrior 8, load 0.4, 2 queries/s) at FlowLaunchEndTime 10.15 s -> 3, 2, 6, 6 and 10.5 s -> 3, 5, 2, 4.
The script's own 13 s gives 3, 5, 4, 5: abm-fig12's spec uses that.

    python bench/ns3dc_priority_draws.py --launch-end-s 13 --nprior 8 --load 0.4
"""

from __future__ import annotations

import argparse
import ctypes
import ctypes.util
from pathlib import Path

import numpy as np

RAND_MAX = 2147483647
CDF = Path(__file__).resolve().parents[1] / "python" / "sharebuf" / "workloads" / "websearch.cdf"


class Draws:
    def __init__(self, seed: int, cdf: Path):
        self.libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        self.libc.srand(seed)
        self.tab = [tuple(map(float, line.split()[:2])) for line in cdf.read_text().splitlines()
                    if line.strip() and not line.lstrip().startswith("#")]

    def rand(self) -> int:
        return self.libc.rand()

    def range_int(self, lo: int, hi: int) -> int:  # template rand_range<T> with an integer T
        return int(lo + (float(hi) - lo) * self.rand() / RAND_MAX)

    def interval_s(self, rate: float) -> float:  # poission_gen_interval: -logf(1 - U) / rate, in float
        return float(-np.log(np.float32(1.0 - self.rand() / RAND_MAX))) / rate

    def size_bytes(self) -> int:  # cdf.c gen_random_cdf, truncated to uint64
        mn, mx = self.tab[0][1], self.tab[-1][1]
        x = mn + self.rand() * (mx - mn) / RAND_MAX
        prev = (0.0, 0.0)
        for v, p in self.tab:
            if x <= p:
                v0, p0 = prev
                return int(v0 + (x - p0) * (v - v0) / (p - p0)) if p > p0 else int(v0)
            prev = (v, p)
        return int(self.tab[-1][0])

    def mean_size_bytes(self) -> float:  # cdf.c avg_cdf (midpoint rule)
        avg, prev = 0.0, (0.0, 0.0)
        for i, (v, p) in enumerate(self.tab):
            mid = v / 2 if i == 0 else (v + prev[0]) / 2
            avg += mid * (p - prev[1] if i else p)
            prev = (v, p)
        return avg


def priorities(launch_end_s: float, nprior: int = 8, load: float = 0.4, queries_per_s: float = 2.0, seed: int = 8,
               servers: int = 32, leaves: int = 2, start_s: float = 10.0, oversub: float = 4.0, gbps: float = 10.0,
               cdf: Path = CDF) -> list[dict]:
    d = Draws(seed, cdf)
    rate = load * gbps * 1e9 * servers / oversub / (8 * d.mean_size_bytes()) / servers
    out = []
    for leaf in range(leaves):
        ws = d.range_int(1, nprior - 1)
        flows = 0
        for _ in range(servers):
            t = start_s + d.interval_s(rate)
            while start_s < t < launch_end_s:
                d.range_int(0, servers)
                while d.size_bytes() == 0:
                    pass
                flows += 1
                t += d.interval_s(rate)
        inc = d.range_int(1, nprior - 1)
        queries = 0
        for _ in range(servers):
            t = start_s + d.interval_s(queries_per_s)
            while start_s < t < launch_end_s:
                for _ in range(servers):
                    d.range_int(50, 1000)
                queries += 1
                t += d.interval_s(queries_per_s)
        out.append(dict(leaf=leaf, websearch_priority=ws, websearch_flows=flows, incast_priority=inc, queries=queries))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--launch-end-s", type=float, default=13.0, help="FlowLaunchEndTime (scripts: 13)")
    ap.add_argument("--nprior", type=int, default=8)
    ap.add_argument("--load", type=float, default=0.4)
    ap.add_argument("--queries-per-s", type=float, default=2.0)
    ap.add_argument("--seed", type=int, default=8)
    a = ap.parse_args()
    for r in priorities(a.launch_end_s, a.nprior, a.load, a.queries_per_s, a.seed):
        print(f"leaf {r['leaf']}: web search queue {r['websearch_priority']} ({r['websearch_flows']} flows), "
              f"its incast (responders on the next leaf) queue {r['incast_priority']} ({r['queries']} queries)")


if __name__ == "__main__":
    main()
