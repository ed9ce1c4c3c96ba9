"""The executor that ``sweep``, ``compare``, ``repro`` and ``tune`` run their simulations with.

A run is content-addressed: its key (:func:`run_key`) is a hash of its resolved engine spec,
the sharebuf version and the model revision (the engine's source and the summary code:
:func:`provenance.model_revision`), and it writes ``run-<key>/`` atomically. :func:`run_many` plans the
distinct runs, checks before anything runs that each fits this machine's memory (and that
``--jobs`` runs at once do), reuses every complete run directory (resume), removes the
half-written ones a killed worker left, runs the rest on local processes or Ray tasks with
one progress bar, and turns Ctrl-C into :class:`SweepInterrupted` saying what was kept.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, Dict, Optional, Sequence

from ._version import __version__
from .errors import ScenarioError
from .scenario.engine_spec import engine_spec_json, resolve
from .scenario.load import parse_scenario


def metrics_row(summary: dict) -> Dict[str, Any]:
    """The main metrics of a run's summary, as one table row (sweep, tune)."""
    row: Dict[str, Any] = {
        "flows": summary["flows"]["total"],
        "flows_finished": summary["flows"]["finished"],
        "drops": summary["drops_total"],
        "buffer_mean_bytes": summary["buffer"]["mean_bytes"],
        "buffer_p99_bytes": summary["buffer"]["p99_bytes"],
        "qct_p99_s": summary["queries"]["qct_p99_s"],
        "sim_s": summary["sim_s"],
        "events": summary["events"],
        "wall_s": summary["wall_s"],
    }
    for name, v in summary["slowdown"].items():
        row[f"slowdown_p50.{name}"] = v["p50"]
        row[f"slowdown_p99.{name}"] = v["p99"]
    for name, v in summary.get("slowdown_by_class", {}).items():
        row[f"class_slowdown_p50.{name}"] = v["p50"]
        row[f"class_slowdown_p99.{name}"] = v["p99"]
        row[f"class_rto_pct.{name}"] = v.get("rto_pct")
    return row


def run_one(scenario: dict, out_dir: Optional[str]) -> dict:
    """One run, as a worker runs it: the engine, its outputs in ``out_dir``, its summary."""
    from .runner import run  # the engine and its results: only where a run happens

    res = run(scenario, out=out_dir, progress=False)
    return res.summary


def run_key(scenario: dict) -> str:
    """Content address of a run: a hash of its resolved engine spec, the sharebuf version and the
    model revision (so a run directory made by other code is never reused)."""
    return spec_key(resolve(parse_scenario(scenario), Path.cwd()))


def spec_key(spec: dict) -> str:
    """The content address of a resolved engine spec (12 hex digits), as :func:`run_key`."""
    from .provenance import model_revision

    return hashlib.sha256(f"{__version__}\n{model_revision()}\n{engine_spec_json(spec)}".encode()).hexdigest()[:12]


class SweepInterrupted(KeyboardInterrupt):
    """Ctrl-C during a sweep; the message says what was kept and how to resume."""


def progress_bar(total: int, label: str):
    from rich.console import Console
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                               TimeRemainingColumn)

    bar = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("runs"),
                   TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(), console=Console(stderr=True), transient=True)
    bar.start()
    return bar, bar.add_task(label, total=total)


class RunResults(dict):
    """key -> summary of every run; ``ran[key]`` is True for the runs this call executed."""

    def __init__(self):
        super().__init__()
        self.ran: Dict[str, bool] = {}


def check_run_memory(uniq: Dict[str, dict], label: str) -> tuple:
    """Refuse, before anything runs, a point too large for this machine's memory; return
    (estimated bytes per run key, the limit) for :func:`check_parallel_memory`."""
    from .memory import available_memory_bytes, check_memory

    limit = available_memory_bytes()
    est = {}
    for k, d in uniq.items():
        est[k] = check_memory(resolve(parse_scenario(d), Path.cwd()),
                              f"{label} run-{k} (scenario '{d.get('name', 'scenario')}', seed {d.get('seed')})", limit=limit)
    return est, limit


def check_parallel_memory(est: Dict[str, int], todo: Sequence[str], workers: int, limit: Optional[int], label: str) -> None:
    """Refuse ``workers`` local processes when the runs they may hold at once (the ``workers``
    largest estimates among the runs still to do: each process takes its own memory) exceed the
    limit, naming the largest ``--jobs`` that fits."""
    from .memory import LIMIT_ENV, _fmt

    if limit is None or workers <= 1:
        return
    big = sorted((est[k] for k in todo), reverse=True)
    peak = sum(big[:workers])
    if peak <= limit:
        return
    fits, acc = 0, 0
    for b in big:
        if acc + b > limit:
            break
        acc += b
        fits += 1
    raise ScenarioError(
        f"{label} --jobs {workers}: {workers} runs at once need about {_fmt(peak)} of memory (the {workers} largest of "
        f"{len(todo)} runs to do, {_fmt(big[0])} the largest; each worker process holds its own run); the limit is "
        f"{_fmt(limit)} (available memory, or ${LIMIT_ENV}); allowed: --jobs {max(fits, 1)} or fewer, or smaller runs")


def run_many(items: Sequence[tuple], out_path: Optional[Path], *, jobs: Optional[int] = None, use_ray: bool = False,
             ray_address: Optional[str] = None, progress: bool = False, label: str = "sweep") -> RunResults:
    """Run each (key, scenario dict) into ``out_path/run-<key>/`` (content-addressed: a run whose
    directory is complete is reused, a half-written one left by a killed worker is removed), on
    local processes or Ray tasks, with one progress bar. Ctrl-C stops the workers and raises
    :class:`SweepInterrupted` saying what was kept. Used by ``sweep``, ``compare`` and ``repro``."""
    res = RunResults()
    uniq: Dict[str, dict] = {}
    for k, d in items:
        uniq.setdefault(k, d)
    keys = list(uniq)
    dirs = {k: (str(out_path / f"run-{k}") if out_path else None) for k in keys}
    est, limit = check_run_memory(uniq, label)
    if out_path is not None and out_path.is_dir():
        from .results import remove_stale_partials

        remove_stale_partials(out_path, "run-*")  # left by a killed worker: never complete
        for k in keys:
            f = Path(dirs[k]) / "summary.json"
            if f.is_file():
                res[k] = json.loads(f.read_text())
                res.ran[k] = False
    todo = [k for k in keys if k not in res]
    if todo and not use_ray:  # Ray places tasks by its own resources
        check_parallel_memory(est, todo, min(jobs or os.cpu_count() or 1, len(todo)), limit, label)
    bar = task = None
    if progress and todo:
        reused = len(keys) - len(todo)
        bar, task = progress_bar(len(todo), label + (f" ({reused} done before)" if reused else ""))
    ex = None

    def finish(k, summary):
        res[k] = summary
        res.ran[k] = True
        if bar:
            bar.advance(task)

    try:
        if not todo:
            pass
        elif use_ray:
            try:
                import ray
            except ImportError:
                raise ScenarioError("--ray needs Ray: pip install 'sharebuf[cluster]'") from None
            if not ray.is_initialized():
                ray.init(address=ray_address, ignore_reinit_error=True, log_to_driver=False)
            remote = ray.remote(run_one)
            refs = {remote.remote(uniq[k], dirs[k]): k for k in todo}
            pending = list(refs)
            try:
                while pending:
                    ready, pending = ray.wait(pending, num_returns=1)
                    finish(refs[ready[0]], ray.get(ready[0]))
            except KeyboardInterrupt:
                for r in pending:
                    ray.cancel(r, force=True)
                raise
        elif (jobs or os.cpu_count() or 1) == 1:
            for k in todo:  # in this process: no pool to start, and tests can observe the runs
                finish(k, run_one(uniq[k], dirs[k]))
        else:
            from concurrent.futures import ProcessPoolExecutor, as_completed  # not at start-up (issue 10)

            ex = ProcessPoolExecutor(max_workers=min(jobs or os.cpu_count() or 1, len(todo)))
            futs = {ex.submit(run_one, uniq[k], dirs[k]): k for k in todo}
            for f in as_completed(futs):
                finish(futs[f], f.result())
    except KeyboardInterrupt:
        if ex is not None:
            ex.shutdown(wait=True, cancel_futures=True)
            ex = None
        n = len(res)
        where = f"kept in {out_path}/; run the same command again to run only the rest" if out_path else "not kept (no --out)"
        raise SweepInterrupted(f"{n} of {len(keys)} runs finished, {where}") from None
    finally:
        if ex is not None:
            ex.shutdown(wait=True, cancel_futures=True)
        if bar:
            bar.stop()
    return res
