"""Running a scenario: ``sharebuf.run(path_or_dict_or_name, ...)``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional, Union

from .config import engine_spec_json, load_scenario, resolve
from .errors import ScenarioError
from .results import Results

#: Show a progress bar when the simulated horizon exceeds this many seconds.
PROGRESS_MIN_SIM_S = 0.05


def run(scenario: Union[str, Path, dict, None] = None, *, out: Union[str, Path, None] = None,
        seed: Optional[int] = None, progress: Optional[bool] = None, quiet: bool = False,
        profile: Optional[str] = None) -> Results:
    """Run a scenario (a TOML path, a bundled scenario name, or a dict shaped like the TOML).

    ``out``: directory to write Parquet tables and summary.json into (atomically).
    ``seed``: override the scenario's seed. ``profile``: override its ``profile`` ("none": sharebuf's defaults). ``progress``: force the progress bar on/off
    (default: on for interactive runs whose horizon is long).
    """
    from . import _core

    sc, base, name = load_scenario(scenario, profile)
    if seed is not None:
        sc.seed = seed
    spec = resolve(sc, base)
    horizon_s = spec["max_ps"] * 1e-12
    show = progress if progress is not None else (not quiet and sys.stderr.isatty() and horizon_s >= PROGRESS_MIN_SIM_S)
    try:
        if show:
            from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

            with Progress(TextColumn("[bold]{task.description}"), BarColumn(), TextColumn("{task.completed:.4f}/{task.total:.4f} sim-s"),
                          TextColumn("{task.fields[ev]:.1f}M events"), TimeElapsedColumn(), transient=True) as bar:
                task = bar.add_task(name, total=horizon_s, ev=0.0)

                def cb(now_s: float, events: int) -> bool:
                    bar.update(task, completed=min(now_s, horizon_s), ev=events / 1e6)
                    return True

                raw = _core.simulate(engine_spec_json(spec), cb)
        else:
            raw = _core.simulate(engine_spec_json(spec), None)
    except ValueError as e:
        raise ScenarioError(str(e)) from None
    res = Results(raw, scenario_name=name, seed=sc.seed)
    res.spec = spec
    res.summary["profile"] = sc.profile_report()
    if out is not None:
        res.write(out)
    return res
