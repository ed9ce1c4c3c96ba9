"""The error messages of a scenario that does not validate: pydantic's errors as one line that
names each key (``workload[1].load``), the value as the user wrote it and what is allowed."""

import math
import re
from typing import Any, Dict

from ..errors import ScenarioError, did_you_mean


def _fmt_loc(loc: tuple) -> str:
    out = ""
    for i, part in enumerate(loc):
        prev = loc[i - 1] if i else None
        prev2 = loc[i - 2] if i > 1 else None
        # pydantic puts the discriminator tag of a union into the path: drop it
        is_tag = (prev == "topology") or (isinstance(prev, int) and prev2 == "workload")
        if is_tag and part in ("leaf_spine", "fat_tree", "star", "poisson", "incast", "flows", "cbr"):
            continue
        if _is_union_member(part):  # e.g. 'list[function-after[...]]': which member of a union was tried
            continue
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out or "(top level)"


def show_value(v: Any) -> str:
    """A value as the user wrote it (TOML spelling for booleans), for error messages."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "(missing)"
    if isinstance(v, str) and len(v) > 80:
        return repr(v[:77] + "...")
    return repr(v)


def _is_union_member(part) -> bool:
    """pydantic names the member of a plain union it tried (``int``, ``list[int]``,
    ``function-after[...]``) in an error's location; no scenario key has brackets."""
    return isinstance(part, str) and ("[" in part or "(" in part)


def _union_errors_that_fit(errors: list) -> list:
    """Of a union's per-member errors, keep those of the member that fits the input's shape: a
    list given to ``int | list[int]`` is reported by the list member only (found by bench/fuzz.py)."""
    def split(err):
        loc = tuple(err["loc"])
        j = next((i for i, p in enumerate(loc) if _is_union_member(p)), None)
        return (loc[:j], loc[j]) if j is not None else (None, None)

    list_groups = {pre for pre, label in map(split, errors) if label is not None and label.startswith("list[")}
    out = []
    for err in errors:
        pre, label = split(err)
        if pre in list_groups and not label.startswith("list[") and isinstance(err.get("input"), list):
            continue
        if label is not None and label.startswith("list[") and err["type"] == "list_type" and len(errors) > 1:
            continue  # a scalar given to ``int | list[int]``: the scalar member says what is wrong
        out.append(err)
    return out


#: At most this many problems are listed in one error line.
MAX_ERRORS_SHOWN = 3


def format_validation_error(e) -> str:
    """A pydantic ``ValidationError`` as one line: each problem's key, value and what is allowed."""
    lines = []
    errors = _union_errors_that_fit(e.errors())
    for err in errors[:MAX_ERRORS_SHOWN]:
        loc = _fmt_loc(tuple(err["loc"]))
        msg = err["msg"]
        msg = msg.removeprefix("Value error, ")
        ctx = err.get("ctx") or {}
        if err["type"] == "union_tag_invalid":
            msg = msg.replace("Input tag", "kind") + did_you_mean(ctx.get("tag"), re.findall(r"'([^']*)'", str(ctx.get("expected_tags", ""))))
        elif err["type"] == "literal_error":
            msg += did_you_mean(err.get("input"), re.findall(r"'([^']*)'", str(ctx.get("expected", ""))))
        if "input" in err and err["type"] not in ("missing", "union_tag_invalid") and not isinstance(err["input"], (dict, list)):
            lines.append(f"{loc} = {show_value(err['input'])}: {msg}")
        else:
            lines.append(f"{loc}: {msg}")
    more = len(errors) - MAX_ERRORS_SHOWN
    return "; ".join(lines) + (f" (and {more} more)" if more > 0 else "")


def check_finite(params: Dict[str, Any], section: str) -> None:
    """Free-form parameter tables (scheme, congestion-control parameters) hold no inf or nan."""
    for k, v in params.items():
        vals = v if isinstance(v, list) else [v]
        for x in vals:
            if isinstance(x, float) and not math.isfinite(x):
                raise ScenarioError(f"{section}.{k} = {show_value(v)}: not a finite number; allowed: finite numbers")
