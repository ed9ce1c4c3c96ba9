#!/usr/bin/env python3
"""Profile-guided optimization (PGO) of the engine: build, train, measure (issue 10's PGO item).

    python bench/pgo.py                     # build the PGO engine, count instructions against the plain one

1. builds `sharebuf-engine` instrumented (`-Cprofile-generate`, target dir target/pgo-gen);
2. runs it on the training runs: `standard`, `abm-eval` and `abm-fig7-dt` (a reproduction's run
   with the ns3dc profile), arrivals cut as in bench/callgrind.py;
3. merges the profiles with `llvm-profdata` of rustc's own LLVM major version (Debian: `llvm-NN`);
4. rebuilds with `-Cprofile-use` (target dir target/pgo-use) and counts instructions per
   delivered data packet with callgrind for the plain and the PGO engine on the same runs
   (bench/callgrind.py: deterministic), checking that both give the same outputs.

PGO changes code layout and inlining, never results: step 4 compares the two engines' outputs.
Measured (bench/results/perf.md, pass 5): 5-6% fewer instructions, but the wall time of these
memory-bound runs moves within noise (up to -5% on abm-fig7-dt), so the regular build does not use
it: it would need rustc's llvm-profdata and a training run inside every install.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
import callgrind  # noqa: E402  (build_spec, DEFAULT_ARRIVALS_MS: one place for the training runs)

TRAINING = ["standard", "abm-eval", "abm-fig7-dt"]


def llvm_profdata() -> str:
    """The llvm-profdata whose LLVM major version is rustc's (profiles are not portable across majors)."""
    vv = subprocess.run(["rustc", "-vV"], capture_output=True, text=True, check=True).stdout
    m = re.search(r"LLVM version: (\d+)", vv)
    if not m:
        raise SystemExit(f"pgo: cannot read rustc's LLVM version from `rustc -vV`:\n{vv}")
    major = m.group(1)
    for name in (f"llvm-profdata-{major}", "llvm-profdata"):
        exe = shutil.which(name)
        if exe:
            out = subprocess.run([exe, "--version"], capture_output=True, text=True).stdout
            if re.search(rf"LLVM version {major}\.", out):
                return exe
    raise SystemExit(f"pgo: needs llvm-profdata from LLVM {major} (rustc's LLVM); install Debian's `llvm-{major}` "
                     f"(apt-get install llvm-{major}) or rustup's `llvm-tools` component")


def cargo_build(target_dir: Path, rustflags: str) -> Path:
    env = dict(os.environ, RUSTFLAGS=rustflags, CARGO_TARGET_DIR=str(target_dir))
    subprocess.run(["cargo", "build", "--release", "-q", "--bin", "sharebuf-engine"], cwd=ROOT, env=env, check=True)
    return target_dir / "release" / "sharebuf-engine"


def specs(tmp: Path) -> dict:
    out = {}
    for name in TRAINING:
        p = tmp / f"{name}.json"
        callgrind.build_spec(name, callgrind.DEFAULT_ARRIVALS_MS.get(name), p)
        out[name] = p
    return out


def count(exe: Path, spec: Path) -> dict:
    """Instructions of one engine run under callgrind, and its output (wall-clock fields dropped)."""
    with tempfile.TemporaryDirectory() as d:
        proc = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={d}/cg.out", str(exe), str(spec)],
                              capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"pgo: {exe} on {spec.name} failed under callgrind:\n{proc.stderr[-2000:]}")
    ir = int(re.search(r"Collected\s*:\s*(\d+)", proc.stderr).group(1))
    run = json.loads(proc.stdout)
    return {"ir": ir, "pkts": run["delivered_data_pkts"], "out": {k: v for k, v in run.items() if "wall" not in k and not k.endswith("_per_s")}}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--no-measure", action="store_true", help="skip the callgrind comparison (step 4)")
    args = ap.parse_args()

    profdata_exe = llvm_profdata()
    work = ROOT / "target" / "pgo"
    raw = work / "raw"
    shutil.rmtree(raw, ignore_errors=True)
    raw.mkdir(parents=True)
    tmp = Path(tempfile.mkdtemp(prefix="sharebuf-pgo-"))
    runs = specs(tmp)

    print("1. instrumented build", flush=True)
    gen = cargo_build(ROOT / "target" / "pgo-gen", f"-Cprofile-generate={raw}")
    print("2. training: " + ", ".join(runs), flush=True)
    for name, spec in runs.items():
        subprocess.run([str(gen), str(spec)], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    merged = work / "merged.profdata"
    subprocess.run([profdata_exe, "merge", "-o", str(merged), str(raw)], check=True)
    print(f"3. profile: {merged}", flush=True)
    use_flags = f"-Cprofile-use={merged}"
    pgo = cargo_build(ROOT / "target" / "pgo-use", use_flags)
    print(f"4. PGO engine: {pgo}", flush=True)

    if not args.no_measure:
        if not shutil.which("valgrind"):
            raise SystemExit("pgo: step 4 counts instructions with valgrind, which is not installed "
                             "(apt-get install valgrind), or pass --no-measure")
        subprocess.run(["cargo", "build", "--release", "-q", "--bin", "sharebuf-engine"], cwd=ROOT, check=True)
        plain = ROOT / "target" / "release" / "sharebuf-engine"
        print(f"{'run':<14} {'plain Ir/pkt':>13} {'PGO Ir/pkt':>11} {'change':>8}  outputs")
        for name, spec in runs.items():
            a, b = count(plain, spec), count(pgo, spec)
            same = "identical" if a["out"] == b["out"] else "DIFFER"
            print(f"{name:<14} {a['ir'] / a['pkts']:>13,.1f} {b['ir'] / b['pkts']:>11,.1f} {b['ir'] / a['ir'] - 1:>+8.1%}  {same}", flush=True)
            if same != "identical":
                raise SystemExit(f"pgo: the PGO engine's outputs differ on {name}: {a['out']} vs {b['out']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
