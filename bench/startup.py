"""Start-up overhead of the ``sharebuf`` command (issue 10: <= 0.3 s beyond the simulation).

    python bench/startup.py [--repeat 10] [--instructions]

Measures, each as the median of ``--repeat`` fresh processes:
- ``python -c pass`` (the interpreter alone, the floor no package can go under);
- ``sharebuf --version``;
- ``sharebuf run TINY --quiet --out DIR`` (one flow on a 4-host star, 1 ms), and the same
  with the summary tables, minus the engine's own time (timed separately);
- in-process phases of that run in a fresh interpreter: importing ``sharebuf.cli``, loading
  and validating the scenario, resolving it, the simulation, building the results, writing
  the Parquet files, printing the summary;
- the heaviest imports of the run (``python -X importtime``, cumulative);
- with ``--instructions``: the instructions executed by ``--version`` and by the tiny run
  (valgrind callgrind, children included: deterministic, so this shared machine's load does
  not move it; a few minutes).

Wall and CPU times are reported: on a loaded machine (the load average is printed) the CPU
time (user + sys of the process and its children, e.g. ``git``) is the better estimate of an
idle machine's wall time. Bytecode: the measured processes may write ``__pycache__`` (one
warm-up run first), as an installed package has its ``.pyc`` files; an environment that sets
``PYTHONDONTWRITEBYTECODE`` would otherwise recompile sharebuf's modules at every start
(~0.15 s here).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TINY = """\
name = "startup-tiny"
max_ms = 1
[topology]
kind = "star"
hosts = 4
[switch]
buffer_bytes = 1000000
[switch.bm]
scheme = "dt"
[[workload]]
kind = "flows"
flows = [{ src = 0, dst = 1, size_bytes = 10000, start_s = 0.0 }]
"""

PHASES = r"""
import sys, time, json, io, contextlib
t = [time.process_time()]
def mark(name):
    t.append(time.process_time()); out.append((name, t[-1] - t[-2]))
out = []
import sharebuf.cli
mark("import sharebuf.cli")
from sharebuf.config import load_scenario, resolve, engine_spec_json
mark("import sharebuf.config (pydantic)")
sc, base, name = load_scenario(sys.argv[1])
mark("load + validate scenario")
spec = resolve(sc, base); js = engine_spec_json(spec)
mark("resolve (imports _core)")
from sharebuf import _core
raw = _core.simulate(js, None)
mark("simulate (engine)")
from sharebuf.results import Results
mark("import results (numpy, pyarrow)")
res = Results(raw, scenario_name=name, seed=sc.seed)
mark("build results")
res.write(sys.argv[2])
mark("write parquet + summary")
with contextlib.redirect_stdout(io.StringIO()):
    sharebuf.cli._print_summary(res.summary, None, name)
mark("print summary (rich)")
print(json.dumps(out))
"""


def child_env():
    """This environment, allowed to write ``.pyc`` files (see the module docstring)."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def instructions(cmd) -> int:
    """Instructions executed by ``cmd`` and its children (valgrind callgrind)."""
    r = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", "--trace-children=yes", *cmd],
                       capture_output=True, text=True, env=child_env())
    if r.returncode != 0:
        raise SystemExit(f"valgrind {cmd}: exit {r.returncode}\n{r.stderr[-2000:]}")
    return sum(int(m) for m in re.findall(r"Collected : (\d+)", r.stderr))


def timed(cmd, repeat, env=None):
    """Median wall time and median CPU time (user + sys) of ``repeat`` fresh processes. On a
    shared, loaded machine the CPU time is the better estimate of an idle machine's wall time
    (start-up is single-threaded)."""
    ts, cpu = [], []
    for _ in range(repeat):
        c0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        r = subprocess.run(cmd, capture_output=True, text=True, env=env or child_env())
        ts.append(time.perf_counter() - t0)
        c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(c1.ru_utime - c0.ru_utime + c1.ru_stime - c0.ru_stime)
        if r.returncode != 0:
            raise SystemExit(f"{cmd}: exit {r.returncode}\n{r.stderr}")
    return statistics.median(ts), statistics.median(cpu)


def importtime(code):
    r = subprocess.run([sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True, env=child_env())
    rows = []
    for line in r.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, cum_us, name = line[len("import time:"):].split("|")
        depth = (len(name) - len(name.lstrip()) - 1) // 2
        rows.append((int(cum_us), depth, name.strip()))
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--instructions", action="store_true", help="also count instructions with valgrind callgrind (minutes)")
    args = ap.parse_args()
    load0 = os.getloadavg()[0]
    exe = Path(sys.executable).with_name("sharebuf")
    sharebuf_cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "sharebuf"]
    with tempfile.TemporaryDirectory() as d:
        tiny = Path(d) / "tiny.toml"
        tiny.write_text(TINY)
        subprocess.run(sharebuf_cmd + ["run", str(tiny), "--quiet", "--out", f"{d}/warm"], env=child_env(), check=True,
                       capture_output=True)  # writes the .pyc files if missing
        base = timed([sys.executable, "-c", "pass"], args.repeat)
        ver = timed(sharebuf_cmd + ["--version"], args.repeat)
        run_q = timed(sharebuf_cmd + ["run", str(tiny), "--quiet", "--out", f"{d}/q"], args.repeat)
        run_t = timed(sharebuf_cmd + ["run", str(tiny), "--out", f"{d}/t"], args.repeat)
        phase_runs = []
        for i in range(args.repeat):
            r = subprocess.run([sys.executable, "-c", PHASES, str(tiny), f"{d}/p{i}"], capture_output=True, text=True, check=True,
                               env=child_env())
            phase_runs.append(json.loads(r.stdout.strip().splitlines()[-1]))
        phases = [(name, statistics.median(run[j][1] for run in phase_runs)) for j, (name, _) in enumerate(phase_runs[0])]
        sim = dict(phases)["simulate (engine)"]
        counts = {}
        if args.instructions:
            for label, cmd in (("python -c pass", [sys.executable, "-c", "pass"]), ("sharebuf --version", sharebuf_cmd + ["--version"]),
                               ("sharebuf run tiny --quiet", sharebuf_cmd + ["run", str(tiny), "--quiet", "--out", f"{d}/ir"])):
                counts[label] = instructions(cmd)
    print(f"load average {load0:.1f} at the start, {os.getloadavg()[0]:.1f} at the end, on {os.cpu_count()} cores; "
          f"medians of {args.repeat} fresh processes; PYTHONDONTWRITEBYTECODE "
          f"{'set here, lifted for the measured processes' if 'PYTHONDONTWRITEBYTECODE' in os.environ else 'not set'}")
    print(f"{'':36s} {'wall':>8s} {'CPU':>8s}   overhead (CPU - simulation)")
    for name, (w, c) in [("python -c pass (interpreter floor)", base), ("sharebuf --version", ver),
                         ("sharebuf run tiny --quiet", run_q), ("sharebuf run tiny (summary tables)", run_t)]:
        print(f"{name:36s} {w * 1e3:6.0f} ms {c * 1e3:6.0f} ms   {(c - sim) * 1e3:6.0f} ms")
    print(f"(the simulation itself: {sim * 1e3:.1f} ms)")
    if counts:
        print("\ninstructions (valgrind callgrind, children included):")
        for label, n in counts.items():
            print(f"  {label:34s} {n / 1e6:8.1f} M   beyond the interpreter: {(n - counts['python -c pass']) / 1e6:8.1f} M")
    print("\nphases of a run, in one fresh process (median CPU time):")
    for name, s in phases:
        print(f"  {name:38s} {s * 1e3:7.1f} ms")
    print("\nheaviest imports of a run (python -X importtime, cumulative ms, >= 5 ms, depth <= 2):")
    code = ("import sharebuf.cli, sharebuf.runner, sharebuf.config, sharebuf.results, sharebuf._core; "
            "import rich.table, rich.console")
    for cum, depth, name in sorted(importtime(code), reverse=True):
        if cum >= 5000 and depth <= 2:
            print(f"  {'  ' * depth}{name:40s} {cum / 1e3:7.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
