"""Content-addressed runs: each run is named by the hash of its resolved engine spec and the
sharebuf version, so figures that share a run (abm-fig9's Cubic runs are abm-fig7's) run it
once, and a command started again into the same directory re-runs nothing that finished.
A run directory is written atomically (``Results.write``): it exists complete or not at all."""

from __future__ import annotations

import hashlib
import os
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Callable, List, Optional, Sequence

from ..errors import ScenarioError


def run_key(scenario: dict) -> str:
    """Hash of the resolved engine spec (every default filled in) and the sharebuf version."""
    from .. import __version__
    from ..config import engine_spec_json, load_scenario, resolve

    sc, base, _ = load_scenario(scenario)
    spec = resolve(sc, base)
    h = hashlib.sha256()
    h.update(__version__.encode())
    h.update(b"\0")
    h.update(engine_spec_json(spec).encode())
    return h.hexdigest()[:16]


def is_done(run_dir: Path) -> bool:
    return (run_dir / "summary.json").is_file()


def _run_one(scenario: dict, out_dir: str) -> float:
    from ..runner import run

    t0 = time.perf_counter()
    run(scenario, out=out_dir, progress=False, quiet=True)
    return time.perf_counter() - t0


def run_all(jobs_: Sequence[tuple], runs_dir: Path, *, jobs: Optional[int] = None, use_ray: bool = False,
            ray_address: Optional[str] = None, on_done: Optional[Callable[[str, float], None]] = None) -> List[str]:
    """Run every (key, scenario) whose directory ``runs_dir/key`` is not complete yet.
    Returns the keys that were run. ``on_done(key, wall_s)`` is called as each finishes."""
    todo, seen = [], set()
    for key, sc in jobs_:
        if key in seen or is_done(runs_dir / key):
            continue
        seen.add(key)
        todo.append((key, sc))
    if not todo:
        return []
    runs_dir.mkdir(parents=True, exist_ok=True)
    if use_ray:
        try:
            import ray
        except ImportError:
            raise ScenarioError("--ray needs Ray: pip install 'sharebuf[cluster]'") from None
        if not ray.is_initialized():
            ray.init(address=ray_address, ignore_reinit_error=True, log_to_driver=False)
        remote = ray.remote(_run_one)
        refs = {remote.remote(sc, str(runs_dir / key)): key for key, sc in todo}
        pending = list(refs)
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            wall = ray.get(done[0])
            if on_done:
                on_done(refs[done[0]], wall)
    elif (jobs or 1) == 1 or len(todo) == 1:
        for key, sc in todo:
            wall = _run_one(sc, str(runs_dir / key))
            if on_done:
                on_done(key, wall)
    else:
        with ProcessPoolExecutor(max_workers=jobs or os.cpu_count() or 1) as ex:
            futs = {ex.submit(_run_one, sc, str(runs_dir / key)): key for key, sc in todo}
            for f in as_completed(futs):
                wall = f.result()
                if on_done:
                    on_done(futs[f], wall)
    return [k for k, _ in todo]
