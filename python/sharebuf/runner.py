"""Running a scenario: ``sharebuf.run(path_or_dict_or_name, ...)``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Dict, Optional, Union

from .errors import ISSUE_TRACKER, InternalError, ScenarioError
from .results import Results
from .scenario.engine_spec import engine_spec_json, resolve
from .scenario.load import load_scenario, scenario_dict
from .schemes import check_registry, is_python_scheme, scheme_factory

#: Show a progress bar when the simulated horizon exceeds this many seconds.
PROGRESS_MIN_SIM_S = 0.05


def run(scenario: Union[str, Path, dict, None] = None, *, out: Union[str, Path, None] = None,
        seed: Optional[int] = None, progress: Optional[bool] = None, quiet: bool = False,
        sets: Optional[Dict[str, Any]] = None, command: Optional[str] = None, profile: Optional[str] = None,
        schemes: Optional[Dict[str, Any]] = None) -> Results:
    """Run a scenario (a TOML path, a bundled scenario name, or a dict shaped like the TOML).

    ``out``: directory to write Parquet tables and summary.json into (atomically).
    ``seed``: override the scenario's seed. ``profile``: override its ``profile`` ("none":
    sharebuf's defaults). ``progress``: force the progress bar on/off
    (default: on for interactive runs whose horizon is long). ``sets``: overrides by dotted key,
    as ``--set`` (``{"switch.bm.scheme": "abm"}``); they are recorded in ``summary["overrides"]``
    and the scenario as resolved and run in ``scenario.toml``. ``command``: recorded in
    ``summary["provenance"]`` (default: this process's command line). ``schemes``: buffer-management
    schemes written in Python, by name (``{"mydt": DT}`` makes ``switch.bm.scheme = "mydt"`` run
    ``DT(ctx, **other bm keys)``; docs/schemes/python.md). An exception inside a Python scheme
    raises :class:`sharebuf.errors.SchemeError` and writes no output.
    """
    import datetime
    import shlex
    import time

    from . import _core, provenance

    started = datetime.datetime.now(datetime.timezone.utc)
    t0 = time.perf_counter()
    provenance.prefetch()  # git and uname run alongside the validation and the simulation

    if sets:
        scenario = scenario_dict(scenario, sets)
    sc, base, name = load_scenario(scenario, profile)
    if seed is not None:
        from pydantic import ValidationError

        from .scenario.messages import format_validation_error

        try:
            sc.seed = seed
        except ValidationError as e:
            raise ScenarioError(f"seed override: {format_validation_error(e)}") from None
    provenance.check_recorded(sc.recorded.model_dump() if sc.recorded else None, warn=lambda m: print(m, file=sys.stderr))
    schemes = check_registry(schemes, _core.schemes())
    spec = resolve(sc, base, schemes)
    from .memory import check_memory

    check_memory(spec, f"scenario '{name}'")  # before the engine allocates anything
    spec_json = engine_spec_json(spec)
    py_scheme = ()
    if is_python_scheme(spec["switch"]["bm"]["scheme"], schemes):
        py_scheme = scheme_factory(spec["switch"]["bm"], base, schemes, (sc.switch.bm.model_extra or {}).get("class"))
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

                cpu0 = time.process_time()
                raw = _core.simulate(spec_json, cb, *py_scheme)
        else:
            cpu0 = time.process_time()
            raw = _core.simulate(spec_json, None, *py_scheme)
        cpu_s = time.process_time() - cpu0
    except ScenarioError:
        raise  # from a Python scheme's constructor, its exception as the cause
    except _core.EngineInternalError as e:
        raise InternalError(_internal_message(str(e), name, sc.seed, provenance.resolved_scenario(sc, base, name))) from None
    except ValueError as e:
        raise ScenarioError(_with_suggestion(str(e))) from None
    res = Results(raw, scenario_name=name, seed=sc.seed)
    # CPU seconds of the simulation (this process's, the engine's thread): on a busy machine
    # wall_s also counts the time the run waited for a core.
    res.summary = {k: v for kk, vv in res.summary.items() for k, v in ([(kk, vv), ("cpu_s", cpu_s)] if kk == "wall_s" else [(kk, vv)])}
    res.spec = spec
    res.scenario = provenance.resolved_scenario(sc, base, name)
    if sets:
        res.summary["overrides"] = dict(sets)
    if command is None:
        command = shlex.join([Path(sys.argv[0]).name, *sys.argv[1:]]) if sys.argv and sys.argv[0] else None
    res.summary["provenance"] = provenance.record(spec_json, started, time.perf_counter() - t0, command)
    res.parquet_metadata = provenance.parquet_metadata(provenance.spec_hash(spec_json))
    res.summary["profile"] = sc.profile_report()
    if out is not None:
        res.write(out)
    return res


def _internal_message(panic: str, name: str, seed: int, scenario: dict) -> str:
    """The one line a user sees for an engine panic: which scenario, what, how to report it.
    The scenario as resolved is saved outside ``--out`` (nothing is written there) to attach."""
    import tempfile

    from .provenance import to_toml

    try:
        d = Path(tempfile.mkdtemp(prefix="sharebuf-internal-error-"))
        (d / "scenario.toml").write_text(to_toml(scenario))
        attach = f"attaching {d / 'scenario.toml'} (the scenario as resolved)"
    except OSError:
        attach = "attaching the scenario file"
    return (f"the engine failed running scenario '{name}' (seed {seed}): {panic}. This is a bug in sharebuf, not in the "
            f"scenario: please report it on {ISSUE_TRACKER}, {attach} and this message")


def _with_suggestion(msg: str) -> str:
    """The engine's "KEY: unknown parameter for 'S'; allowed: a, b" with a "did you mean"."""
    import re

    from .errors import did_you_mean

    m = re.match(r"^(\S+?)\.(\w+): unknown parameter for '[^']*'; allowed: (.*)$", msg)
    if m and "did you mean" not in msg:
        hint = did_you_mean(m.group(2), [a.strip() for a in m.group(3).split(",")])
        if hint:
            return msg.replace("; allowed: ", f"{hint}; allowed: ", 1)
    return msg
