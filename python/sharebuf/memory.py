"""How much memory a run will need, estimated before anything is allocated, so that a topology
or horizon too large for the machine is refused with one clear error instead of swapping or
being killed half-way.

The estimate is a sum of counts times bytes per item. Counts come from the resolved engine spec
(hosts, switch ports and queues, route entries, the expected number of flows from load x
horizon, packets in flight, periodic samples); the bytes per item were calibrated against the
measured peak RSS (``ru_maxrss`` of a child process of a small parent, running ``sharebuf.run(..., out=DIR)``,
release build, CPython 3.11, x86-64 Linux) of runs that vary one count at a time:

============================================  ===========  ==========================================
run                                           peak RSS     gives
============================================  ===========  ==========================================
star, 2 hosts, no workload                    134 MB       ``BASE_BYTES`` (interpreter, numpy, pandas,
                                                           pyarrow, the engine)
star, 1,000,000 hosts                         611 MB       477 B per host (host + its switch port)
leaf-spine 2 leaves x 500,000 servers         679 MB       with the star: 454 B per host and
                                                           23 B per route entry (hosts x switches)
leaf-spine 16 leaves x 50,000 servers         834 MB       check: the model gives 825 MB (-1 %)
star, 1,000,000 hosts, 8 queues per port      835 MB       32 B per extra switch queue
star, 300,000 / 600,000 hosts                 238 / 398 MB per host 348 / 440 B (vectors grow by
                                                           doubling): the model errs high there
leaf-spine 4 leaves x 150,000 servers         468 MB       check: the model gives 489 MB (+4 %)
star, 16 hosts, 200,784 / 800,098 flows       195 / 321 MB above the base (87 MB in this later build,
(1 kB flows, generated, none started), and                 which imports lazily): 107.6 / 233.8 /
999,902 flows (all run and finished)          381 MB       294.3 MB; least squares: 239 B per flow
                                                           (``FLOW_BYTES``; the engine's share is
                                                           102 B, issue 10) + 60 MB once a run has
                                                           flows (``FLOWS_BASE_BYTES``: output
                                                           writing); the model gives -2 / +4 / -2 %
bundled ``default`` (2,237 flows, samples)    170 MB       check: the model gave 193 MB (+13 %);
                                                           in the later build 124 MB, the model
                                                           243 MB (+96 %: ``BASE_BYTES`` predates
                                                           the lazy imports, and
                                                           ``FLOWS_BASE_BYTES`` is a large-run
                                                           figure; small runs never near a limit)
============================================  ===========  ==========================================

Packets in flight (at most what the buffers, device queues and the hosts' windows hold, and
never more than the workloads offer) count ``PACKET_BYTES`` each; periodic samples count
their row size and the copies to Python (``BUFFER_SAMPLE_BYTES``, ``QUEUE_SAMPLE_BYTES``) until
the arrivals end plus ``SAMPLE_DRAIN_S`` (sampling stops when the network drains), at most ``max_ms``.
The estimate is meant to be within a factor of 2 above the truth for large runs (it only
refuses runs that cannot fit, never slows one down).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

from .errors import ScenarioError

BASE_BYTES = 134_000_000
HOST_BYTES = 454
ROUTE_ENTRY_BYTES = 23
QUEUE_BYTES = 32
FLOW_BYTES = 240
#: Once per run with TCP flows: the peak of converting and writing the flow tables (measured as
#: the intercept of peak RSS against the flow count; not per flow).
FLOWS_BASE_BYTES = 62_000_000
QUERY_BYTES = 100
PACKET_BYTES = 128      # 48 B packet + pool free list + queue slot, x2 for vector growth
BUFFER_SAMPLE_BYTES = 80   # 18 B per row in the engine, x2 growth, copies to numpy/Arrow
QUEUE_SAMPLE_BYTES = 130   # 24 B per row in the engine, x2 growth, 21 B column copies, Arrow

#: Periodic samples are counted until arrivals_until + this (the network draining), at most max_ms.
SAMPLE_DRAIN_S = 0.1

#: Environment variable: a memory limit in bytes to use instead of the machine's available
#: memory (an operator's knob, and how the refusal is tested).
LIMIT_ENV = "SHAREBUF_MEMORY_LIMIT_BYTES"


def _counts(spec: dict) -> dict:
    topo = spec["topology"]
    if topo["kind"] == "star":
        hosts = topo["hosts"]
        switches, switch_ports = 1, hosts
    elif topo["kind"] == "fat_tree":
        k, hpe = topo["k"], topo["hosts_per_edge"]
        edges = aggs = k * k // 2
        cores = (k // 2) ** 2
        hosts = edges * hpe
        switches = edges + aggs + cores
        switch_ports = edges * (hpe + k // 2) + aggs * k + cores * k
    else:
        hosts = topo["leaves"] * topo["servers_per_leaf"]
        switches = topo["leaves"] + topo["spines"]
        up = topo["spines"] * topo["links_per_leaf_spine"]
        switch_ports = topo["leaves"] * (topo["servers_per_leaf"] + up) + topo["leaves"] * up
    sw, t = spec["switch"], spec["transport"]
    nq = sw["queues_per_port"]
    # Workloads generate every flow up to arrivals_until when the engine is built (even past max_ms).
    arrivals_s = spec["arrivals_until_ps"] * 1e-12
    # Samples go on while the network is busy: until the arrivals end plus a drain allowance.
    horizon_s = min(spec["max_ps"] * 1e-12, arrivals_s + SAMPLE_DRAIN_S)
    pkt = t["mss_bytes"] + t["header_bytes"]
    host_bps = topo["link_bps"] if topo["kind"] == "star" else topo["host_link_bps"]
    flows = queries = 0.0
    offered_bytes = nic_backlog_pkts = 0.0
    for w in spec["workloads"]:
        span_s = max(0.0, arrivals_s - w.get("start_ps", 0) * 1e-12)
        if w["kind"] == "poisson":
            n = w["rate_per_host_per_s"] * (len(w["sources"]) or hosts) * span_s
            mean = sum((c1 - c0) * (x0 + x1) / 2 for (x0, c0), (x1, c1) in zip(w["cdf"], w["cdf"][1:])) + w["cdf"][0][0] * w["cdf"][0][1]
            flows += n
            offered_bytes += n * mean
        elif w["kind"] == "incast":
            q = w["queries_per_s_per_host"] * (len(w["requesters"]) or hosts) * span_s
            queries += q
            flows += q * w["fan_in"]
            offered_bytes += q * w["request_bytes"]
        elif w["kind"] == "flows":
            flows += len(w["flows"])
            offered_bytes += sum(f["size_bytes"] for f in w["flows"])
        elif w["kind"] == "cbr":
            flows += len(w["flows"])
            for f in w["flows"]:
                dur_s = max(0, min(f["stop_ps"], spec["max_ps"]) - f["start_ps"]) * 1e-12
                offered_bytes += f["rate_bps"] / 8 * dur_s
                # above_link_rate: the excess waits in the sender's NIC queue
                nic_backlog_pkts += max(0, f["rate_bps"] - host_bps) / 8 * dur_s / f["packet_bytes"]
    # Packets in flight: what the switch buffers and device queues hold, plus a window per host
    # (NIC queue and wire) and the NIC backlog of constant-rate flows faster than their link,
    # never more than the workloads offer (in packets, ACKs included).
    held = nic_backlog_pkts + switches * sw["buffer_bytes"] / pkt + switch_ports * sw["device_queue_packets"] + hosts * (t["init_cwnd_packets"] * 4 + spec["host"]["device_queue_packets"])
    in_flight = min(held, 2 * offered_bytes / pkt + 2 * flows)
    bsample = spec["output"]["buffer_sample_ps"]
    qsample = spec["output"]["queue_sample_ps"]
    buffer_rows = switches * horizon_s / (bsample * 1e-12) if bsample else 0.0
    queue_rows = switch_ports * nq * horizon_s / (qsample * 1e-12) if qsample else 0.0
    return dict(hosts=hosts, switches=switches, switch_ports=switch_ports, queues=switch_ports * nq, route_entries=hosts * switches,
                flows=flows, queries=queries, packets_in_flight=in_flight, buffer_sample_rows=buffer_rows, queue_sample_rows=queue_rows)


def estimate_spec_memory_bytes(spec: dict) -> int:
    """Estimated peak memory (bytes) of running a resolved engine spec (see the module doc)."""
    c = _counts(spec)
    b = (BASE_BYTES + HOST_BYTES * c["hosts"] + ROUTE_ENTRY_BYTES * c["route_entries"] + QUEUE_BYTES * max(0, c["queues"] - c["switch_ports"])
         + FLOW_BYTES * c["flows"] + (FLOWS_BASE_BYTES if c["flows"] else 0) + QUERY_BYTES * c["queries"] + PACKET_BYTES * c["packets_in_flight"]
         + BUFFER_SAMPLE_BYTES * c["buffer_sample_rows"] + QUEUE_SAMPLE_BYTES * c["queue_sample_rows"])
    return int(b)


def estimate_memory_bytes(scenario, base: Optional[Path] = None) -> int:
    """Estimated peak memory (bytes) of running ``scenario`` (a TOML path, bundled name, dict,
    or resolved engine spec dict)."""
    from .scenario.engine_spec import resolve
    from .scenario.load import load_scenario

    if isinstance(scenario, dict) and "max_ps" in scenario:
        return estimate_spec_memory_bytes(scenario)
    sc, sbase, _ = load_scenario(scenario)
    return estimate_spec_memory_bytes(resolve(sc, base or sbase))


def available_memory_bytes() -> Optional[int]:
    """Memory this process may still use: ``$SHAREBUF_MEMORY_LIMIT_BYTES`` if set, else the
    smaller of the kernel's MemAvailable and the cgroup's remaining limit (None: unknown)."""
    env = os.environ.get(LIMIT_ENV)
    if env:
        try:
            return int(float(env))
        except ValueError:
            raise ScenarioError(f"${LIMIT_ENV} = {env!r}: allowed: a number of bytes") from None
    vals = []
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                vals.append(int(line.split()[1]) * 1024)
    except OSError:
        pass
    try:
        lim = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        if lim != "max":
            used = int(Path("/sys/fs/cgroup/memory.current").read_text().strip())
            vals.append(max(0, int(lim) - used))
    except (OSError, ValueError):
        pass
    if not vals:
        try:
            vals.append(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
        except (OSError, ValueError, AttributeError):
            return None
    return min(vals)


def _fmt(b: float) -> str:
    return f"{b / 2**30:.1f} GiB" if b >= 2**30 else f"{b / 2**20:.0f} MiB"


def check_memory(spec: dict, what: str = "scenario", limit: Optional[int] = None) -> int:
    """Refuse (ScenarioError) a run whose estimate exceeds the available memory; return the estimate."""
    est = estimate_spec_memory_bytes(spec)
    limit = available_memory_bytes() if limit is None else limit
    if limit is not None and est > limit:
        c = _counts(spec)
        raise ScenarioError(
            f"{what}: needs about {_fmt(est)} of memory (estimate: {c['hosts']:,} hosts, {c['switch_ports']:,} switch ports, "
            f"{c['flows']:,.0f} flows expected from load x horizon, {c['packets_in_flight']:,.0f} packets in flight, "
            f"{c['buffer_sample_rows'] + c['queue_sample_rows']:,.0f} sample rows); the limit is {_fmt(limit)} "
            f"(available memory, or ${LIMIT_ENV}); allowed: a smaller topology, a shorter max_ms / arrivals_until_ms, "
            f"a lower load, or coarser output sampling")
    return est
