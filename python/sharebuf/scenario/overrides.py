"""Overrides by dotted key: the ``--set KEY=VALUE`` grammar (and sweep's value lists) and
:func:`set_path`, which sets ``switch.bm.alpha`` or ``workload[1].load`` in a scenario dict.
Applying overrides to a loaded scenario, validating each, is :func:`sharebuf.scenario.load.scenario_dict`."""

import json
import re
import sys
from typing import Any, Dict, List, Optional, Sequence

from ..errors import ScenarioError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

_PART = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(?:\[(\d+)\])?$")


def set_path(d: dict, key: str, value: Any) -> None:
    """Set ``key`` (e.g. ``switch.bm.alpha`` or ``workload[1].load``) in a scenario dict."""
    parts = key.split(".")
    cur: Any = d
    for n, part in enumerate(parts):
        m = _PART.match(part)
        if not m:
            raise ScenarioError(f"sweep key '{key}': '{part}' is not a key name (use a.b.c or workload[i].x)")
        name, idx = m.group(1), m.group(2)
        last = n == len(parts) - 1
        if idx is None:
            if last:
                cur[name] = value
                return
            cur = cur.setdefault(name, {})
            if not isinstance(cur, dict):
                raise ScenarioError(f"sweep key '{key}': '{name}' is not a table")
        else:
            lst = cur.get(name)
            i = int(idx)
            if not isinstance(lst, list) or i >= len(lst):
                size = len(lst) if isinstance(lst, list) else 0
                raise ScenarioError(f"sweep key '{key}': '{name}' has {size} entries, index {i} is out of range")
            if last:
                lst[i] = value
                return
            cur = lst[i]


def parse_value(tok: str) -> Any:
    """One value: JSON (numbers, true/false, lists, quoted strings), else a TOML value (inline
    tables such as ``{scheme = "dt", alpha = 0.5}``, single-quoted strings), else a bare string."""
    try:
        return json.loads(tok)
    except json.JSONDecodeError:
        pass
    if tok[:1] in "{['":
        try:
            return tomllib.loads("v = " + tok)["v"]
        except tomllib.TOMLDecodeError:
            pass
    return tok


def parse_values(text: str) -> List[Any]:
    """``'[1, 2]'`` (JSON list) or ``'dt,abm'`` / ``'0.25,0.5'`` (comma list, numbers parsed)."""
    text = text.strip()
    if text.startswith("["):
        try:
            v = json.loads(text)
        except json.JSONDecodeError as e:
            raise ScenarioError(f"sweep values {text!r}: not a JSON list ({e})") from None
        if not isinstance(v, list) or not v:
            raise ScenarioError(f"sweep values {text!r}: need a non-empty JSON list")
        return v
    out: List[Any] = []
    for tok in text.split(","):
        tok = tok.strip()
        if not tok:
            raise ScenarioError(f"sweep values {text!r}: empty value")
        out.append(parse_value(tok))
    return out


# ----------------------------------------------------------------------------- --set
SET_HELP = ("override one scenario value, with the dotted keys of sweep --grid: switch.bm.scheme=abm, "
            "'workload[1].request_fraction_of_buffer=0.75', 'switch.bm.alpha=[1,0.5]' (repeatable)")


def add_set_argument(parser) -> None:
    """``--set KEY=VALUE`` (repeatable) for any command that runs a scenario."""
    parser.add_argument("--set", action="append", dest="sets", metavar="KEY=VALUE", default=None, help=SET_HELP)


def parse_sets(items: Optional[Sequence[str]]) -> Dict[str, Any]:
    """``["switch.bm.scheme=abm", ...]`` -> ``{"switch.bm.scheme": "abm", ...}`` (values as in :func:`parse_value`)."""
    sets: Dict[str, Any] = {}
    for item in items or []:
        k, eq, v = item.partition("=")
        if not eq or not k.strip() or not v.strip():
            raise ScenarioError(f"--set {item!r}: expected KEY=VALUE, e.g. switch.bm.scheme=abm")
        sets[k.strip()] = parse_value(v.strip())
    return sets
