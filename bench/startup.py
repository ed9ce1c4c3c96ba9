"""Start-up overhead of the ``sharebuf`` command (issue 10: <= 0.3 s beyond the simulation).

    python bench/startup.py [--repeat 10] [--instructions] [--before OTHER_CHECKOUT/python]

Measures, each as the median of ``--repeat`` fresh processes:
- ``python -c pass`` (the interpreter alone, the floor no package can go under);
- ``sharebuf --version``;
- ``sharebuf run TINY --quiet --out DIR`` (one flow on a 4-host star, 1 ms), and the same
  with the summary tables, minus the engine's own time (timed separately);
- in-process phases of that run in a fresh interpreter: importing ``sharebuf.cli``, loading
  and validating the scenario, resolving it, the simulation, building the results, writing
  the Parquet files, printing the summary;
- the heaviest imports of the run (``python -X importtime``, cumulative);
- with ``--before``: the same commands of another checkout (e.g. ``main``, its engine built in
  place), run in turn with this one's so that both see the same load;
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
from sharebuf.scenario.engine_spec import engine_spec_json, resolve
from sharebuf.scenario.load import load_scenario
mark("import sharebuf.scenario (pydantic)")
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


def instructions(cmd, env) -> int:
    """Instructions executed by ``cmd`` and its children (valgrind callgrind)."""
    r = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", "--trace-children=yes", *cmd],
                       capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise SystemExit(f"valgrind {cmd}: exit {r.returncode}\n{r.stderr[-2000:]}")
    return sum(int(m) for m in re.findall(r"Collected : (\d+)", r.stderr))


def timed(cmds, repeat):
    """Median wall time and median CPU time (user + sys, children included) of ``repeat`` fresh
    processes of each ``(cmd, env)`` in ``cmds``, run in turn (interleaved: a before and an after
    see the same load). On a shared, loaded machine the CPU time is the better estimate of an
    idle machine's wall time (start-up is single-threaded)."""
    ts, cpu = [[] for _ in cmds], [[] for _ in cmds]
    for _ in range(repeat):
        for i, (cmd, env) in enumerate(cmds):
            c0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            r = subprocess.run(cmd, capture_output=True, text=True, env=env)
            ts[i].append(time.perf_counter() - t0)
            c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu[i].append(c1.ru_utime - c0.ru_utime + c1.ru_stime - c0.ru_stime)
            if r.returncode != 0:
                raise SystemExit(f"{cmd}: exit {r.returncode}\n{r.stderr}")
    return [(statistics.median(t), statistics.median(c)) for t, c in zip(ts, cpu)]


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
    ap.add_argument("--before", metavar="DIR",
                    help="the python/ directory of another checkout (its engine built in place): measured in turn with "
                         "this one, as 'before'")
    args = ap.parse_args()
    load0 = os.getloadavg()[0]
    exe = Path(sys.executable).with_name("sharebuf")
    sharebuf_cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "sharebuf"]
    envs = [("after", child_env())]
    if args.before:
        envs.insert(0, ("before", {**child_env(), "PYTHONPATH": str(Path(args.before).resolve())}))
    rows, counts = [], {}
    with tempfile.TemporaryDirectory() as d:
        tiny = Path(d) / "tiny.toml"
        tiny.write_text(TINY)
        for label, env in envs:  # writes the .pyc files if missing
            subprocess.run(sharebuf_cmd + ["run", str(tiny), "--quiet", "--out", f"{d}/warm"], env=env, check=True, capture_output=True)
        base = timed([([sys.executable, "-c", "pass"], child_env())], args.repeat)[0]
        for name, argv in [("sharebuf --version", ["--version"]), ("sharebuf run tiny --quiet", ["run", str(tiny), "--quiet"]),
                           ("sharebuf run tiny (summary tables)", ["run", str(tiny)])]:
            out = ["--out", f"{d}/o"] if argv[0] == "run" else []
            rows.append((name, timed([(sharebuf_cmd + argv + out, env) for _, env in envs], args.repeat)))
        phase_runs = []
        for i in range(args.repeat):
            r = subprocess.run([sys.executable, "-c", PHASES, str(tiny), f"{d}/p{i}"], capture_output=True, text=True, check=True,
                               env=child_env())
            phase_runs.append(json.loads(r.stdout.strip().splitlines()[-1]))
        phases = [(name, statistics.median(run[j][1] for run in phase_runs)) for j, (name, _) in enumerate(phase_runs[0])]
        sim = dict(phases)["simulate (engine)"]
        if args.instructions:
            counts[("", "python -c pass")] = instructions([sys.executable, "-c", "pass"], child_env())
            for label, env in envs:
                counts[(label, "sharebuf --version")] = instructions(sharebuf_cmd + ["--version"], env)
                counts[(label, "sharebuf run tiny --quiet")] = instructions(sharebuf_cmd + ["run", str(tiny), "--quiet", "--out", f"{d}/ir"], env)
    print(f"load average {load0:.1f} at the start, {os.getloadavg()[0]:.1f} at the end, on {os.cpu_count()} cores; "
          f"medians of {args.repeat} fresh processes{' (before and after in turn)' if args.before else ''}; PYTHONDONTWRITEBYTECODE "
          f"{'set here, lifted for the measured processes' if 'PYTHONDONTWRITEBYTECODE' in os.environ else 'not set'}")
    print(f"{'':36s} {'':6s} {'wall':>8s} {'CPU':>8s}   overhead (CPU - simulation)")
    print(f"{'python -c pass (interpreter floor)':36s} {'':6s} {base[0] * 1e3:6.0f} ms {base[1] * 1e3:6.0f} ms")
    for name, res in rows:
        for (label, _), (w, c) in zip(envs, res):
            print(f"{name:36s} {label if args.before else '':6s} {w * 1e3:6.0f} ms {c * 1e3:6.0f} ms   {(c - sim) * 1e3:6.0f} ms")
    print(f"(the simulation itself: {sim * 1e3:.1f} ms)")
    if counts:
        floor = counts[("", "python -c pass")]
        print("\ninstructions (valgrind callgrind, children included; deterministic up to a few %):")
        for (label, name), n in counts.items():
            print(f"  {name:34s} {label:6s} {n / 1e6:8.1f} M   beyond the interpreter: {(n - floor) / 1e6:8.1f} M")
    print("\nphases of a run, in one fresh process (median CPU time):")
    for name, s in phases:
        print(f"  {name:38s} {s * 1e3:7.1f} ms")
    print("\nheaviest imports of a run (python -X importtime, cumulative ms, >= 5 ms, depth <= 2):")
    code = ("import sharebuf.cli, sharebuf.runner, sharebuf.scenario.load, sharebuf.scenario.engine_spec, sharebuf.results, sharebuf._core; "
            "import rich.table, rich.console")
    for cum, depth, name in sorted(importtime(code), reverse=True):
        if cum >= 5000 and depth <= 2:
            print(f"  {'  ' * depth}{name:40s} {cum / 1e3:7.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
