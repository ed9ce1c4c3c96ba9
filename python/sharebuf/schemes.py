"""Buffer-management schemes written in Python (docs/schemes/python.md).

A scenario selects one with ``[switch.bm] scheme = "python"`` and ``class = "module:Class"``;
every other key of ``[switch.bm]`` goes to the constructor as a keyword argument. The module is
looked up next to the scenario file first, then on ``sys.path``. From Python,
``sharebuf.run(scenario, schemes={"mydt": DT})`` makes ``scheme = "mydt"`` run the class ``DT``.

Only ``scheme = "python"`` (or a class the caller passed in ``schemes=``) runs code: the rest of
a scenario file is data.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import sys
from pathlib import Path
from typing import Any, Callable, Dict, NamedTuple, Optional, Tuple

from .errors import ScenarioError

#: ``scheme`` value that runs a Python class named by ``class``.
PYTHON = "python"


class PushOut(NamedTuple):
    """``admit`` may return ``PushOut(port, queue)``: drop the tail packet of that queue of the
    switch, then ``admit`` is asked again about the same arrival (Rust ``Admission::PushOut``)."""

    port: int
    queue: int


def check_registry(schemes: Optional[Dict[str, Any]], builtin) -> Dict[str, Any]:
    """Validate ``run(..., schemes=)``: names must not shadow a built-in scheme or "python"."""
    schemes = dict(schemes or {})
    for name, cls in schemes.items():
        if not isinstance(name, str) or not name:
            raise ScenarioError(f"schemes: key {name!r}: must be a non-empty string (the value of switch.bm.scheme)")
        if name in builtin or name == PYTHON:
            raise ScenarioError(f"schemes: '{name}' is a built-in scheme name; choose another (built-in: {', '.join([*builtin, PYTHON])})")
        if not callable(cls):
            raise ScenarioError(f"schemes['{name}'] = {cls!r}: must be a class (called as Class(ctx, **params))")
    return schemes


def is_python_scheme(scheme: str, schemes: Optional[Dict[str, Any]]) -> bool:
    return scheme == PYTHON or scheme in (schemes or {})


def _split(ref: Any) -> Optional[Tuple[str, str]]:
    if not isinstance(ref, str) or ":" not in ref:
        return None
    mod, cls = ref.rsplit(":", 1)
    return (mod, cls) if mod and cls else None


def local_module(ref: Any, base: Path) -> Optional[Path]:
    """The file of ``class = "module:Class"`` next to the scenario (``base``), or given as a
    ``path.py`` (relative to ``base``), if it exists; else None (the module is on sys.path)."""
    parts = _split(ref)
    if parts is None:
        return None
    mod = parts[0]
    p = Path(mod) if mod.endswith(".py") else Path(mod.replace(".", "/") + ".py")
    p = p if p.is_absolute() else base / p
    return p.resolve() if p.is_file() else None


def _load_class(ref: Any, base: Path, shown: Any = None) -> Any:
    """The class named by ``ref``; messages quote ``shown`` (the scenario's own value, before
    ``resolve`` made a module next to the scenario absolute)."""
    key = "switch.bm.class"
    shown = ref if shown is None else shown
    parts = _split(ref)
    if parts is None:
        raise ScenarioError(f"{key} = {shown!r}: must be 'module:Class' (module found next to the scenario, then on sys.path) or 'path/to/file.py:Class'")
    mod_name, cls_name = parts
    shown_mod = (_split(shown) or parts)[0]
    local = local_module(ref, base)
    try:
        if local is not None:
            # Next to the scenario first. A module name private to this file, so that two
            # scenario directories with a `dtpy.py` each do not share one sys.modules entry.
            uniq = "_sharebuf_scheme_" + hashlib.sha1(str(local).encode()).hexdigest()[:12]
            mod = sys.modules.get(uniq)
            if mod is None:
                spec = importlib.util.spec_from_file_location(uniq, local)
                mod = importlib.util.module_from_spec(spec)
                sys.modules[uniq] = mod
                try:
                    spec.loader.exec_module(mod)
                except BaseException:
                    del sys.modules[uniq]
                    raise
            where = str(local)
        elif mod_name.endswith(".py"):
            raise ScenarioError(f"{key} = '{shown}': no file '{mod_name}' (relative names resolve against {base})")
        else:
            mod = importlib.import_module(mod_name)
            where = getattr(mod, "__file__", mod_name)
    except ScenarioError:
        raise
    except ModuleNotFoundError as e:
        if e.name and (mod_name == e.name or mod_name.startswith(e.name + ".")):
            raise ScenarioError(f"{key} = '{shown}': no module '{mod_name}' next to the scenario ({base}) nor on sys.path") from None
        raise ScenarioError(f"{key} = '{shown}': importing '{mod_name}' failed: {type(e).__name__}: {e}") from e
    except Exception as e:
        raise ScenarioError(f"{key} = '{shown}': importing '{mod_name}' failed: {type(e).__name__}: {e}") from e
    cls = getattr(mod, cls_name, None)
    if cls is None or not callable(cls):
        names = sorted(n for n, v in vars(mod).items() if isinstance(v, type) and not n.startswith("_"))
        raise ScenarioError(f"{key} = '{shown}': module '{shown_mod}' ({where}) has no class '{cls_name}'; classes there: {', '.join(names) or 'none'}")
    return cls


def _check_params(cls: Any, label: str, params: Dict[str, Any]) -> None:
    """Every parameter must be a keyword of ``cls(ctx, ...)``: one error naming the key."""
    try:
        sig = inspect.signature(cls)
    except (TypeError, ValueError):
        return  # no signature to check against (a builtin or C type): the constructor decides
    ps = list(sig.parameters.values())
    if not ps or ps[0].kind not in (ps[0].POSITIONAL_ONLY, ps[0].POSITIONAL_OR_KEYWORD, ps[0].VAR_POSITIONAL):
        raise ScenarioError(f"switch.bm: python scheme '{label}': the constructor must take ctx as its first argument: {cls.__name__}{sig}")
    if not hasattr(cls, "admit"):
        raise ScenarioError(f"switch.bm: python scheme '{label}': class {cls.__name__} has no admit(state, port, queue, pkt, now_s) method")
    rest = ps[1:] if ps[0].kind != ps[0].VAR_POSITIONAL else ps
    takes_any = any(p.kind == p.VAR_KEYWORD for p in rest)
    allowed = [p.name for p in rest if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    if not takes_any:
        for k, v in params.items():
            if k not in allowed:
                raise ScenarioError(f"switch.bm.{k} = {v!r}: not a parameter of {label} ({cls.__name__}{sig}); allowed: {', '.join(allowed) or 'none'}")
    missing = [p.name for p in rest if p.default is p.empty and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name not in params]
    if missing:
        raise ScenarioError(f"switch.bm.{missing[0]}: required by {label} ({cls.__name__}{sig}) and not given")


def scheme_factory(bm: Dict[str, Any], base: Path, schemes: Optional[Dict[str, Any]], shown: Any = None) -> Tuple[Callable[[Any], Any], str]:
    """The factory ``ctx -> scheme object`` and a label for messages, from the ``[switch.bm]``
    table as resolved (``{"scheme": ..., "params": {...}}``); ``shown``: the scenario's own
    ``class`` value, for messages. Configuration errors are ``ScenarioError``s naming the key."""
    name, params = bm["scheme"], dict(bm["params"])
    if name == PYTHON:
        if "class" not in params:
            raise ScenarioError("switch.bm.class: missing; scheme = \"python\" needs class = \"module:Class\"")
        ref = params.pop("class")
        label = ref if shown is None else shown
        cls = _load_class(ref, base, label)
    else:
        if "class" in params:
            raise ScenarioError(f"switch.bm.class = {params['class']!r}: only with scheme = \"python\"; scheme '{name}' is the class passed in schemes=")
        cls, label = schemes[name], name
    _check_params(cls, label, params)
    return (lambda ctx: cls(ctx, **params)), label


__all__ = ["PushOut", "PYTHON", "scheme_factory", "is_python_scheme", "check_registry"]
