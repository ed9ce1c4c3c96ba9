#!/usr/bin/env python3
"""sharebuf against ns3dc's Credence example at one point (issue #25, must-show 4;
docs/schemes/credence.md §5.8): each class's p99 slowdown, on the same flows.

ns3dc side: `credence-evaluation` built from the snapshot (its CMakeLists is all comments: the
build needs pybind11 and an embedded Python with scikit-learn; see credence.md §5.8), run with
run-main.sh's parameters on the "faster test case" topology and the forest of `--model` dumped
with joblib for every switch id. Its fct file is the input here (`--fct`).

sharebuf side: bench/credence/paper-workload.toml with both workloads replaced by ns3dc's own
flows for the seed (bench/ns3dc/ns3dc_flows.py: glibc rand() in the generator's draw order,
which credence-evaluation shares with abm-evaluation; 4 uplinks per leaf), Credence with the
same forest (`[switch.bm] model`), in four variants: sharebuf's defaults or `profile = "ns3dc"`
with the example's 1-packet device queue, each with Credence's default shadow thresholds or
ns3dc's threshold arithmetic (`thresholds = "code"`).

ECMP (`--ecmp-hash`): without it, the scenario's `topology.ecmp_hash` (sharebuf's default
"salted"; the profile's "same"); "salted" or "same" for every variant; or "flow": each flow
carries ns3dc's own hashes (bench/ns3dc/ns3dc_ecmp.py: ns-3's Hash32 of the flow's 5-tuple as
credence-evaluation builds it; replay files `*-ecmp.csv`), so every flow takes ns3dc's first-hop
uplink and its ACKs ns3dc's uplink back.

Slow start (`--slow-start`): "on" (sharebuf's DCTCP, as the ABM example's) or "off":
`transport.cc_params.slow_start = false`, congestion avoidance from the initial window, as
credence-evaluation sets `TcpSocketState::m_useSS` false for DCTCP (credence.md §5.8).
Servers' NICs (`--host-nic`): "scenario" (the scenario's or profile's `[host]`) or "example":
credence-evaluation's servers, a 100 MB device FIFO under ns-3's default FqCoDel, which therefore
never holds a packet, and no ECN marking there: `host.nic_qdisc = "fifo"`,
`host.nic_ecn_k_bytes = "none"`.

Slowdown on both sides: FCT / (24 us + size·8 / 10 Gb/s) (ns3dc's `slowdown` column; sharebuf's
`slowdown_paper`). Classes: incast responses; other flows < 100 KB (short) and >= 1 MB (long).

    python bench/credence/ns3dc_point.py --fct FCT_FILE --model model.json [--seed 1]
        [--launch-s 0.5] [--load 0.4] [--burst 0.5] [--ecmp-hash salted|same|flow] [--slow-start on|off]
        [--host-nic scenario|example] [--out DIR]
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
BASE_RTT_S = 24e-6
BUFFER = 1_052_672
#: sharebuf's defaults (shadow thresholds); + ns3dc's threshold arithmetic; profile "ns3dc" with
#: each
VARIANTS = ("default", "code", "profile", "profile+code")


ECMP_HASHES = ("salted", "same", "flow")


def ns3dc_ecmp_module():
    """bench/ns3dc/ns3dc_ecmp.py (its ns3dc_flows as ``.F``)."""
    spec = importlib.util.spec_from_file_location("ns3dc_ecmp", HERE.parent / "ns3dc" / "ns3dc_ecmp.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def classify(size, incast):
    import numpy as np

    return np.where(incast, "incast", np.where(size < 100_000, "short", np.where(size >= 1_000_000, "long", "mid")))


def ns3dc_table(path):
    import pandas as pd

    df = pd.read_csv(path, sep=r"\s+")
    size = df.flowsize.astype(float)
    out = pd.DataFrame({"size": size, "slowdown": (df.fct * 1e-9) / (BASE_RTT_S + size * 8 / 10e9),
                        "incast": df.incast.astype(int) == 1, "start_us": df.flowstart.astype(float),
                        "fct_us": df.fct / 1e3})
    out["cls"] = classify(out["size"].to_numpy(), out["incast"].to_numpy())
    return out


def join_short(ns, sb, slow=5.0):
    """ns3dc's short web-search flows joined one by one to sharebuf's (the same size, printed by
    ns3dc to 6 digits, and start within 5 us; each ns3dc flow at most once). Returns (joined, short
    flows on the ns3dc side, Spearman rank correlation of the joined flows' slowdowns, ns3dc's
    flows with slowdown > ``slow``, how many of those are > ``slow`` in sharebuf too, their summed
    excess FCT - (24 us + size / 10 Gb/s) in ms in ns3dc and in sharebuf)."""
    n = ns[ns.cls == "short"].reset_index(drop=True)
    s = sb[sb.cls == "short"].reset_index(drop=True)
    m = s.reset_index().merge(n.reset_index(), on="size", suffixes=("_s", "_n"))
    m = m[(m.start_us_s - m.start_us_n).abs() < 5.0]
    m = m.loc[(m.start_us_s - m.start_us_n).abs().groupby(m.index_s).idxmin()].drop_duplicates("index_n")
    rho = float(m.slowdown_s.rank().corr(m.slowdown_n.rank()))
    hot = m[m.slowdown_n > slow]
    ideal_us = (BASE_RTT_S + hot["size"] * 8 / 10e9) * 1e6
    return (len(m), len(n), rho, len(hot), int((hot.slowdown_s > slow).sum()),
            float((hot.fct_us_n - ideal_us).sum() / 1e3), float((hot.fct_us_s - ideal_us).sum() / 1e3))


def sharebuf_run(seed, launch_s, load, model, replay_dir, variant, ecmp_hash=None, slow_start=True,
                 host_nic="scenario", lqd_trace=False):
    """One sharebuf run of the point; with ``lqd_trace``, LQD with its per-arrival trace instead of
    Credence (the same run wherever neither drops), returning the raw ``Results``."""
    import pandas as pd

    import sharebuf

    sc = tomllib.loads((HERE / "paper-workload.toml").read_text())
    sc["seed"] = seed
    sc["arrivals_until_ms"] = launch_s * 1000
    sc["max_ms"] = launch_s * 1000 + 500
    if ecmp_hash is not None:
        sc["topology"]["ecmp_hash"] = ecmp_hash
    if not slow_start:   # credence-evaluation: TcpSocketState::m_useSS false (DCTCP)
        sc["transport"].setdefault("cc_params", {})["slow_start"] = False
    tag = "-ecmp" if ecmp_hash == "flow" else ""   # the replay files with ns3dc's hashes
    if lqd_trace:
        sc["switch"]["bm"] = {"scheme": "lqd", "trace": True}
    else:
        sc["switch"]["bm"] = {"scheme": "credence", "prediction": "model", "queues": [1], "model": str(Path(model).resolve())}
    sc["workload"] = [
        {"kind": "flows", "name": "websearch", "file": str(replay_dir / f"websearch-s{seed}{tag}.csv"), "priority": 1},
        {"kind": "flows", "name": "incast", "file": str(replay_dir / f"incast-s{seed}{tag}.csv"), "handshake": False, "priority": 1},
    ]
    if variant.startswith("profile"):
        sc["profile"] = "ns3dc"
        sc["switch"]["device_queue_packets"] = 1  # credence-evaluation's switch ports
    if host_nic == "example":   # credence-evaluation's servers: 100 MB device FIFO, FqCoDel idle, no marking
        sc.setdefault("host", {}).update({"nic_qdisc": "fifo", "nic_ecn_k_bytes": "none"})
    if variant.endswith("code"):
        sc["switch"]["bm"]["thresholds"] = "code"  # ns3dc's threshold arithmetic (§1.2 step 1)
    res = sharebuf.run(sc)
    if lqd_trace:
        return res
    f = res.flows
    out = pd.DataFrame({"size": f.size_bytes.astype(float), "slowdown": f.fct_s / (BASE_RTT_S + f.size_bytes * 8 / 10e9),
                        "incast": f.workload == "incast", "start_us": f.start_s * 1e6, "fct_us": f.fct_s * 1e6})
    out["cls"] = classify(out["size"].to_numpy(), out["incast"].to_numpy())
    return out[f.fct_s.notna().to_numpy()], res.summary


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fct", required=True, help="ns3dc credence-evaluation fct file of this point")
    ap.add_argument("--model", required=True, help="the forest (sharebuf JSON) ns3dc ran, dumped with joblib")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--launch-s", type=float, default=0.5)
    ap.add_argument("--load", type=float, default=0.4)
    ap.add_argument("--burst", type=float, default=0.5, help="incast request as a fraction of B (ns3dc --request)")
    ap.add_argument("--ecmp-hash", choices=ECMP_HASHES,
                    help="sharebuf's topology.ecmp_hash (default: the scenario's or profile's); "
                         "flow: ns3dc's own hash of each flow's 5-tuple")
    ap.add_argument("--slow-start", choices=("on", "off"), default="on",
                    help="off: DCTCP without slow start (transport.cc_params.slow_start = false), as "
                         "credence-evaluation's m_useSS false")
    ap.add_argument("--host-nic", choices=("scenario", "example"), default="scenario",
                    help="example: credence-evaluation's servers (a FIFO, no ECN marking at the NIC)")
    ap.add_argument("--out", default="credence-ns3dc-point")
    ap.add_argument("--variants", default=",".join(VARIANTS), help=f"comma-separated, of: {', '.join(VARIANTS)}")
    a = ap.parse_args(argv)
    variants = a.variants.split(",")
    bad = [v for v in variants if v not in VARIANTS]
    if bad:
        ap.error(f"--variants: {bad[0]!r} is not a variant; allowed: {', '.join(VARIANTS)}")
    out = Path(a.out)
    ne = ns3dc_ecmp_module()
    nf = ne.F
    example = ne.EXAMPLES["credence-evaluation"]   # 2 leaves x 16 servers, 4 spines x 1 link
    flows, start, ports = ne.connections(a.seed, a.launch_s, load=a.load, request=int(a.burst * BUFFER), qrate=2.0,
                                         **example)
    replay = out / "replay"
    nf.write_csvs(flows, start, a.seed, str(replay))
    if a.ecmp_hash == "flow":
        nf.write_csvs(flows, start, a.seed, str(replay), hashes=ne.flow_hashes(flows, ports, example["servers"]))
    ns = ns3dc_table(a.fct)
    n_inc = sum(1 for x in flows if x[0] == "incast")
    print(f"seed {a.seed}: {len(flows) - n_inc} websearch + {n_inc} incast flows generated; ns3dc fct rows {len(ns)}")
    sides = {"ns3dc": ns}
    for v in variants:
        sides[f"sharebuf {v}"], summ = sharebuf_run(a.seed, a.launch_s, a.load, a.model, replay, v, a.ecmp_hash,
                                                      a.slow_start == "on", a.host_nic)
        st = summ.get("scheme_stats", {})
        print(f"sharebuf {v}: drops {summ['drops_total']}, finished {summ['flows']['finished']}/{summ['flows']['total']}, "
              f"predicted drops {st.get('credence_predicted_drops')}, threshold drops {st.get('credence_threshold_drops')}")
    lines = ["| class | " + " | ".join(f"{k} p99 (flows)" for k in sides) + " | sharebuf / ns3dc |",
             "|---|" + "---|" * len(sides) + "---|"]
    for c in ("short", "incast", "long"):
        vals = {k: (float(d[d.cls == c].slowdown.quantile(0.99)), int((d.cls == c).sum())) for k, d in sides.items()}
        ratio = " / ".join(f"{vals[k][0] / vals['ns3dc'][0]:.2f}" for k in sides if k != "ns3dc")
        lines.append(f"| {c} | " + " | ".join(f"{v:.2f} ({n})" for v, n in vals.values()) + f" | {ratio} |")
    lines += ["", "| short flows, one by one | " + " | ".join(k for k in sides if k != "ns3dc") + " |",
              "|---|" + "---|" * (len(sides) - 1)]
    joins = {k: join_short(ns, d) for k, d in sides.items() if k != "ns3dc"}
    lines.append("| joined to ns3dc's | " + " | ".join(f"{j[0]} of {j[1]}" for j in joins.values()) + " |")
    lines.append("| rank correlation of slowdowns | " + " | ".join(f"{j[2]:.2f}" for j in joins.values()) + " |")
    lines.append("| ns3dc's flows with slowdown > 5: also > 5 in sharebuf | "
                 + " | ".join(f"{j[4]} of {j[3]}" for j in joins.values()) + " |")
    lines.append("| their excess FCT, ns3dc / sharebuf (ms, summed) | "
                 + " | ".join(f"{j[5]:.2f} / {j[6]:.2f}" for j in joins.values()) + " |")
    md = "\n".join(lines)
    (out / "ns3dc_point.md").write_text(md + "\n")
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
