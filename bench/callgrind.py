#!/usr/bin/env python3
"""Instruction counts of the engine's hot path, with valgrind's callgrind (deterministic, so
this shared machine's noise does not matter; wall-clock numbers come from run_bench.py).

Builds the engine spec of a bundled scenario, builds the `sharebuf-engine` binary (release
profile, symbols kept by `debug = 1`), runs it under `valgrind --tool=callgrind`, and prints
the instructions in total, per event, per delivered data packet, the events per delivered
data packet, the events by kind, and the top functions (callgrind_annotate, inclusive of
nothing: self cost).

    python bench/callgrind.py [--scenario standard|abm-eval|abm-fig7-dt] [--arrivals-ms MS] [--top 25] [--json]

`standard` runs at its full horizon (50 ms of arrivals, ~2.9 M events: about a minute under
callgrind). `abm-eval` at its full horizon (500 ms of arrivals, ~35 M events) would take
about half an hour under callgrind, so by default its arrivals stop at 50 ms
(`--arrivals-ms`, printed in the header); the per-event and per-packet counts are what
compare, and they barely depend on the horizon once the network is loaded.

`abm-fig7-dt` is the run every ABM reproduction's cost follows: `sharebuf repro abm-fig7`'s DT run
at α = 0.5, seed 1, with the figure's ns3dc profile (100-packet device FIFOs below every switch
queue, fq_codel host NICs), arrivals cut to 50 ms like `abm-eval`.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: Arrivals horizon used under callgrind when the scenario's own is too long to profile.
DEFAULT_ARRIVALS_MS = {"abm-eval": 50.0, "abm-fig7-dt": 50.0}
KINDS = ["Arrive", "TxDone", "FlowStart", "Rto", "DelAck", "Pace", "CbrSend", "BmTick", "SampleBuffer", "SampleQueues"]


def repro_run(figure: str, series: str, x: float, seed: int = 1) -> dict:
    """The scenario `sharebuf repro FIGURE --scale full` plans for one series, x and seed."""
    from sharebuf.repro import list_figures
    from sharebuf.repro.spec import points

    for s, px, pseed, sc in points(list_figures()[figure], "full", None, {}):
        if (s, px, pseed) == (series, x, seed):
            return sc
    raise SystemExit(f"{figure}: no run for series {series!r}, x = {x}, seed {seed}")


#: Named runs of the reproductions: (figure, series, x).
REPRO_RUNS = {"abm-fig7-dt": ("abm-fig7", "DT", 0.5)}


def build_spec(scenario: str, arrivals_ms: float | None, out: Path) -> str:
    from sharebuf.scenario.engine_spec import engine_spec_json, resolve
    from sharebuf.scenario.load import load_scenario

    sc, base, name = load_scenario(repro_run(*REPRO_RUNS[scenario]) if scenario in REPRO_RUNS else scenario)
    if arrivals_ms is not None:
        sc.arrivals_until_ms = arrivals_ms
    out.write_text(engine_spec_json(resolve(sc, base)))
    return name


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scenario", default="standard",
                    help="bundled scenario name, TOML path, or abm-fig7-dt (a reproduction's run, ns3dc profile) (default: standard)")
    ap.add_argument("--arrivals-ms", type=float, default=None,
                    help="override arrivals_until_ms (default: the scenario's own; abm-eval: 50)")
    ap.add_argument("--top", type=int, default=25, help="functions to list (default 25)")
    ap.add_argument("--json", action="store_true", help="print the counts as JSON only")
    ap.add_argument("--keep", action="store_true", help="keep the callgrind.out file and print its path")
    ap.add_argument("--exe", default=None, help="an engine binary to profile instead of building this tree's (e.g. a copy built from main)")
    args = ap.parse_args()

    arrivals = args.arrivals_ms if args.arrivals_ms is not None else DEFAULT_ARRIVALS_MS.get(args.scenario)
    tmp = Path(tempfile.mkdtemp(prefix="sharebuf-callgrind-"))
    spec = tmp / "spec.json"
    name = build_spec(args.scenario, arrivals, spec)

    if args.exe:
        exe = Path(args.exe)
    else:
        subprocess.run(["cargo", "build", "--release", "-q", "--bin", "sharebuf-engine"], cwd=ROOT, check=True)
        exe = ROOT / "target" / "release" / "sharebuf-engine"
    cg_out = tmp / "callgrind.out"
    proc = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={cg_out}", str(exe), str(spec)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
        raise SystemExit(f"engine under callgrind failed with status {proc.returncode}")
    run = json.loads(proc.stdout)
    m = re.search(r"Collected\s*:\s*(\d+)", proc.stderr)
    if not m:
        sys.stderr.write(proc.stderr)
        raise SystemExit("no 'Collected' line in callgrind's output")
    ir = int(m.group(1))
    kinds = re.search(r"events by kind \([^)]*\): \[([^\]]*)\]", proc.stderr)
    by_kind = dict(zip(KINDS, map(int, kinds.group(1).split(",")))) if kinds else {}
    ann = subprocess.run(["callgrind_annotate", str(cg_out)], capture_output=True, text=True).stdout

    ev, pk = run["events"], run["delivered_data_pkts"]
    rep = {
        "scenario": name,
        "arrivals_ms_override": arrivals,
        "instructions": ir,
        "events": ev,
        "delivered_data_pkts": pk,
        "instructions_per_event": ir / ev,
        "instructions_per_data_pkt": ir / pk,
        "events_per_data_pkt": ev / pk,
        "events_by_kind": by_kind,
        "flows": run["flows"],
        "drops": run["drops"],
    }
    if args.json:
        print(json.dumps(rep, indent=2))
        return 0
    hz = f" (arrivals_until_ms overridden to {arrivals:g} so callgrind finishes)" if arrivals is not None else ""
    print(f"scenario {name}{hz}: {run['flows']} flows, {run['drops']} drops, sim {run['sim_s'] * 1e3:.2f} ms")
    print(f"instructions             {ir:>15,}")
    print(f"events                   {ev:>15,}")
    print(f"delivered data packets   {pk:>15,}")
    print(f"instructions / event     {ir / ev:>15,.1f}")
    print(f"instructions / data pkt  {ir / pk:>15,.1f}")
    print(f"events / data pkt        {ev / pk:>15.3f}")
    if by_kind:
        print("events by kind / data pkt: " + ", ".join(f"{k} {v / pk:.3f}" for k, v in by_kind.items() if v))
    print()
    # The function table: callgrind_annotate's lines after the header, the first --top of them.
    lines = ann.splitlines()
    start = next((i for i, ln in enumerate(lines) if "file:function" in ln), None)
    if start is not None:
        print("top functions (self instructions):")
        body = [ln for ln in lines[start + 1:] if ln.strip() and not ln.startswith("-")]
        for ln in body[: args.top]:
            print("  " + ln.strip()[:160])
    if args.keep:
        print(f"\ncallgrind output: {cg_out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
