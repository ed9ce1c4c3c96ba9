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

Slowdown on both sides: FCT / (24 us + size·8 / 10 Gb/s) (ns3dc's `slowdown` column; sharebuf's
`slowdown_paper`). Classes: incast responses; other flows < 100 KB (short) and >= 1 MB (long).

    python bench/credence/ns3dc_point.py --fct FCT_FILE --model model.json [--seed 1]
        [--launch-s 0.5] [--load 0.4] [--burst 0.5] [--out DIR]
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


def ns3dc_flows_module():
    spec = importlib.util.spec_from_file_location("ns3dc_flows", HERE.parent / "ns3dc" / "ns3dc_flows.py")
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
                        "incast": df.incast.astype(int) == 1})
    out["cls"] = classify(out["size"].to_numpy(), out["incast"].to_numpy())
    return out


def sharebuf_run(seed, launch_s, load, model, replay_dir, variant):
    import pandas as pd

    import sharebuf

    sc = tomllib.loads((HERE / "paper-workload.toml").read_text())
    sc["seed"] = seed
    sc["arrivals_until_ms"] = launch_s * 1000
    sc["max_ms"] = launch_s * 1000 + 500
    sc["switch"]["bm"] = {"scheme": "credence", "prediction": "model", "queues": [1], "model": str(Path(model).resolve())}
    sc["workload"] = [
        {"kind": "flows", "name": "websearch", "file": str(replay_dir / f"websearch-s{seed}.csv"), "priority": 1},
        {"kind": "flows", "name": "incast", "file": str(replay_dir / f"incast-s{seed}.csv"), "handshake": False, "priority": 1},
    ]
    if variant.startswith("profile"):
        sc["profile"] = "ns3dc"
        sc["switch"]["device_queue_packets"] = 1  # credence-evaluation's switch ports
    if variant.endswith("code"):
        sc["switch"]["bm"]["thresholds"] = "code"  # ns3dc's threshold arithmetic (§1.2 step 1)
    res = sharebuf.run(sc)
    f = res.flows
    out = pd.DataFrame({"size": f.size_bytes.astype(float), "slowdown": f.fct_s / (BASE_RTT_S + f.size_bytes * 8 / 10e9),
                        "incast": f.workload == "incast"})
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
    ap.add_argument("--out", default="credence-ns3dc-point")
    ap.add_argument("--variants", default=",".join(VARIANTS), help=f"comma-separated, of: {', '.join(VARIANTS)}")
    a = ap.parse_args(argv)
    variants = a.variants.split(",")
    bad = [v for v in variants if v not in VARIANTS]
    if bad:
        ap.error(f"--variants: {bad[0]!r} is not a variant; allowed: {', '.join(VARIANTS)}")
    out = Path(a.out)
    nf = ns3dc_flows_module()
    flows, start = nf.generate(a.seed, a.launch_s, load=a.load, servers=16, leaves=2, request=int(a.burst * BUFFER), qrate=2.0,
                               uplinks=4)
    replay = out / "replay"
    nf.write_csvs(flows, start, a.seed, str(replay))
    ns = ns3dc_table(a.fct)
    n_inc = sum(1 for x in flows if x[0] == "incast")
    print(f"seed {a.seed}: {len(flows) - n_inc} websearch + {n_inc} incast flows generated; ns3dc fct rows {len(ns)}")
    sides = {"ns3dc": ns}
    for v in variants:
        sides[f"sharebuf {v}"], summ = sharebuf_run(a.seed, a.launch_s, a.load, a.model, replay, v)
        st = summ.get("scheme_stats", {})
        print(f"sharebuf {v}: drops {summ['drops_total']}, finished {summ['flows']['finished']}/{summ['flows']['total']}, "
              f"predicted drops {st.get('credence_predicted_drops')}, threshold drops {st.get('credence_threshold_drops')}")
    lines = ["| class | " + " | ".join(f"{k} p99 (flows)" for k in sides) + " | sharebuf / ns3dc |",
             "|---|" + "---|" * len(sides) + "---|"]
    for c in ("short", "incast", "long"):
        vals = {k: (float(d[d.cls == c].slowdown.quantile(0.99)), int((d.cls == c).sum())) for k, d in sides.items()}
        ratio = " / ".join(f"{vals[k][0] / vals['ns3dc'][0]:.2f}" for k in sides if k != "ns3dc")
        lines.append(f"| {c} | " + " | ".join(f"{v:.2f} ({n})" for v, n in vals.values()) + f" | {ratio} |")
    md = "\n".join(lines)
    (out / "ns3dc_point.md").write_text(md + "\n")
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
