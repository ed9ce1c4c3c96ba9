"""The files a scenario reads: flow-size CDFs (bundled or a file) and flow lists (CSV or
Parquet), every line and cell checked, and the file inputs of a scenario dict made absolute."""

import csv
import io
import math
from importlib import resources
from pathlib import Path
from typing import Any, List, Optional

from ..errors import ScenarioError, did_you_mean
from .messages import show_value

BUNDLED_CDFS = ("websearch", "datamining", "hadoop")


def absolute_file_inputs(d: dict, base: Path) -> List[str]:
    """Make the file inputs of a scenario dict (workload ``cdf`` files that are not bundled CDFs,
    flow-list ``file``s, the module of a ``scheme = "python"`` class) absolute against ``base``, the scenario's directory, where they exist
    there; return the absolute paths of every file input."""
    paths = []
    for w in d.get("workload", []):
        for k in ("cdf", "file"):
            ref = w.get(k)
            if not isinstance(ref, str) or (k == "cdf" and ref in BUNDLED_CDFS):
                continue
            p = Path(ref)
            if not p.is_absolute() and (base / p).exists():
                p = base / p
            if p.is_absolute():
                w[k] = str(p.resolve())
                paths.append(w[k])
    bm = d.get("switch", {}).get("bm", {})
    if bm.get("scheme") == "python":
        # A Python scheme's module next to the scenario: `class = "/abs/dir/module.py:Class"`.
        from ..schemes import local_module

        p = local_module(bm.get("class"), base)
        if p is not None:
            bm["class"] = f"{p}:{bm['class'].rsplit(':', 1)[1]}"
            paths.append(str(p))
    return paths


def read_text(p: Path, what: str) -> str:
    """A text input file, or one ScenarioError naming it (unreadable, not UTF-8)."""
    try:
        return p.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise ScenarioError(f"{what}: not a UTF-8 text file (byte {e.start}: {e.object[e.start:e.start + 1]!r}); expected text") from None
    except OSError as e:
        raise ScenarioError(f"{what}: cannot read it ({e.strerror or e})") from None


def read_cdf(ref: str, base: Path, key: str) -> List[tuple]:
    """A flow-size CDF: lines of ``bytes cumulative_probability`` (comma or space separated,
    ``#`` comments). Sizes finite, >= 0 and non-decreasing; probabilities within [0, 1],
    non-decreasing, the last exactly 1; a mean of at least one byte."""
    if ref in BUNDLED_CDFS:
        text = (resources.files("sharebuf") / "workloads" / f"{ref}.cdf").read_text()
    else:
        p = Path(ref)
        if not p.is_absolute():
            p = base / p
        if not p.is_file():
            raise ScenarioError(f"{key} = '{ref}': not a bundled CDF ({', '.join(BUNDLED_CDFS)}) nor a readable file"
                                + did_you_mean(ref, BUNDLED_CDFS))
        text = read_text(p, f"{key} = '{ref}'")
    where = f"{key} = '{ref}'"
    pts, lines = [], []
    for i, line in enumerate(text.splitlines()):
        line = line.split("#")[0].strip()
        if not line:
            continue
        parts = line.replace(",", " ").split()
        if len(parts) < 2:
            raise ScenarioError(f"{where}: line {i + 1} is {line!r}; expected 'bytes cumulative_probability'")
        vals = []
        for col, (name, tok, allowed) in enumerate((("bytes", parts[0], "a finite size >= 0"),
                                                    ("cumulative probability", parts[-1], "a probability within [0, 1]")), start=1):
            try:
                v = float(tok)
            except ValueError:
                v = None
            bad = v is None or not math.isfinite(v) or v < 0 or (col == 2 and v > 1)
            if bad:
                raise ScenarioError(f"{where}: line {i + 1}, column {col} ({name}) = {tok!r}; allowed: {allowed}")
            vals.append(v)
        pts.append(tuple(vals))
        lines.append(i + 1)
    if len(pts) < 2:
        raise ScenarioError(f"{where}: {len(pts)} point(s); a CDF needs >= 2 lines 'bytes cumulative_probability' ending at probability 1")
    if abs(pts[-1][1] - 1.0) > 1e-9:
        raise ScenarioError(f"{where}: line {lines[-1]}: the last cumulative probability is {pts[-1][1]}; a CDF must end at 1")
    for n, ((x0, c0), (x1, c1)) in enumerate(zip(pts, pts[1:])):
        if x1 < x0 or c1 < c0:
            col, name, v0, v1 = (1, "bytes", x0, x1) if x1 < x0 else (2, "cumulative probability", c0, c1)
            raise ScenarioError(f"{where}: line {lines[n + 1]}, column {col} ({name}) = {v1:g} is below line {lines[n]}'s {v0:g}; "
                                f"allowed: sizes and probabilities non-decreasing")
    if cdf_mean_bytes(pts) < 1:
        raise ScenarioError(f"{where}: mean flow size {cdf_mean_bytes(pts):g} bytes; allowed: a CDF whose mean is >= 1 byte")
    return pts


def cdf_mean_bytes(pts: List[tuple]) -> float:
    m = pts[0][0] * pts[0][1]
    for (x0, c0), (x1, c1) in zip(pts, pts[1:]):
        m += (c1 - c0) * (x0 + x1) / 2
    return m


#: Columns of a flow-list file; the first five are required (``id`` optional: if given, unique).
FLOW_COLUMNS = ("id", "src", "dst", "size_bytes", "start_s", "priority", "query", "handshake", "ecmp_hash",
                "ecmp_hash_reverse")
_FLOW_REQUIRED = ("src", "dst", "size_bytes", "start_s")
_BOOLS = {"true": True, "1": True, "false": False, "0": False}


class _Cell(ValueError):
    """A bad cell: the message says what is allowed."""


def _empty(v: Any) -> bool:
    """No value: a missing or blank CSV cell, a Parquet null (or a NaN, pandas' null)."""
    return v is None or (isinstance(v, str) and not v.strip()) or (isinstance(v, float) and math.isnan(v))


def _int_cell(v: Any, allowed: str, lo: Optional[int] = None, hi: Optional[int] = None) -> int:
    """A whole number (``12``, ``12.0``, ``1e3``), within [lo, hi]; else _Cell(allowed)."""
    if isinstance(v, bool) or _empty(v):
        raise _Cell(allowed)
    if isinstance(v, int):
        x = v
    else:
        try:
            f = float(v)
        except (TypeError, ValueError):
            raise _Cell(allowed) from None
        if not math.isfinite(f) or f != int(f):
            raise _Cell(allowed)
        x = int(f)
    if (lo is not None and x < lo) or (hi is not None and x > hi):
        raise _Cell(allowed)
    return x


def _float_cell(v: Any, allowed: str, lo: float) -> float:
    if isinstance(v, bool) or _empty(v):
        raise _Cell(allowed)
    try:
        f = float(v)
    except (TypeError, ValueError):
        raise _Cell(allowed) from None
    if not math.isfinite(f) or f < lo:
        raise _Cell(allowed)
    return f


def read_flow_file(ref: str, base: Path, key: str) -> List[dict]:
    """A flow list (CSV or Parquet, columns :data:`FLOW_COLUMNS`), every cell checked: an error
    names the file, the row (and CSV line), the column, the value and what is allowed. Start
    times need not be sorted. Each row dict carries ``where`` for later errors."""
    p = Path(ref)
    if not p.is_absolute():
        p = base / p
    where = f"{key} = '{ref}'"
    if not p.is_file():
        raise ScenarioError(f"{where}: no such file")
    if p.suffix.lower() == ".parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            t = pq.read_table(p)
        except (pa.ArrowException, OSError) as e:
            raise ScenarioError(f"{where}: not a readable Parquet file ({e})") from None
        columns, rows, line0 = list(t.column_names), t.to_pylist(), None
    else:
        text = read_text(p, where)
        reader = csv.reader(io.StringIO(text, newline=""))
        try:
            table = [r for r in reader]
        except csv.Error as e:
            raise ScenarioError(f"{where}: not a readable CSV file ({e})") from None
        if not table:
            raise ScenarioError(f"{where}: empty file; expected a header line {','.join(FLOW_COLUMNS[:5])}[,priority,query,handshake] and one row per flow")
        columns = [c.strip() for c in table[0]]
        rows, line0 = [], 2
        for n, r in enumerate(table[1:]):
            if not any(c.strip() for c in r):
                raise ScenarioError(f"{where}: row {n + 1} (line {n + 2}) is empty; expected one flow per line")
            if len(r) > len(columns):
                raise ScenarioError(f"{where}: row {n + 1} (line {n + 2}) has {len(r)} cells, the header {len(columns)}")
            rows.append({c: (r[j] if j < len(r) else None) for j, c in enumerate(columns)})
    for c in columns:
        if c not in FLOW_COLUMNS:
            raise ScenarioError(f"{where}: unknown column '{c}'{did_you_mean(c, FLOW_COLUMNS)}; allowed: {', '.join(FLOW_COLUMNS)}")
    if len(set(columns)) != len(columns):
        dup = next(c for c in columns if columns.count(c) > 1)
        raise ScenarioError(f"{where}: column '{dup}' appears twice")
    missing = [c for c in _FLOW_REQUIRED if c not in columns]
    if missing:
        raise ScenarioError(f"{where}: columns {columns} lack {missing}; expected id,src,dst,size_bytes,start_s[,priority,query,handshake]")
    if not rows:
        raise ScenarioError(f"{where}: no rows; a flows workload needs at least one flow")
    out, ids = [], {}
    for i, r in enumerate(rows):
        at = f"row {i + 1}" + (f" (line {i + line0})" if line0 else "")
        col = ""
        try:
            col = "src"
            src = _int_cell(r["src"], "a host number >= 0", lo=0)
            col = "dst"
            dst = _int_cell(r["dst"], "a host number >= 0", lo=0)
            col = "size_bytes"
            size = _int_cell(r["size_bytes"], "a whole number of bytes >= 1", lo=1)
            col = "start_s"
            start = _float_cell(r["start_s"], "a finite time in seconds >= 0", 0.0)
            col = "priority"
            prio = None if _empty(r.get("priority")) else _int_cell(r["priority"], "empty or an integer 0..7", 0, 7)
            col = "query"
            q = None if _empty(r.get("query")) else _int_cell(r["query"], "empty, a negative integer (none) or a query id >= 0")
            col = "handshake"
            hs = r.get("handshake")
            if _empty(hs):
                hs = None
            elif str(hs).strip().lower() in _BOOLS:
                hs = _BOOLS[str(hs).strip().lower()]
            else:
                raise _Cell("true, false, 1, 0 or empty")
            ecmp = None
            if "ecmp_hash" in columns or "ecmp_hash_reverse" in columns:
                col = "ecmp_hash"
                h = None if _empty(r.get("ecmp_hash")) else _int_cell(r["ecmp_hash"], "empty or an integer 0..4294967295", 0, 2**32 - 1)
                col = "ecmp_hash_reverse"
                hr = None if _empty(r.get("ecmp_hash_reverse")) else _int_cell(r["ecmp_hash_reverse"], "empty or an integer 0..4294967295", 0, 2**32 - 1)
                if (h is None) != (hr is None):
                    col = "ecmp_hash" if h is None else "ecmp_hash_reverse"
                    raise _Cell("a value when the other of ecmp_hash / ecmp_hash_reverse has one (both or neither)")
                ecmp = None if h is None else (h, hr)
            if "id" in columns:
                col = "id"
                fid = _int_cell(r["id"], "an integer flow id, unique in the file")
                if fid in ids:
                    raise ScenarioError(f"{where}: {at}, column 'id' = {show_value(r['id'])}: the same id as row {ids[fid] + 1}; allowed: ids unique in the file")
                ids[fid] = i
        except _Cell as e:
            raise ScenarioError(f"{where}: {at}, column '{col}' = {show_value(r.get(col))}: allowed: {e}") from None
        out.append(dict(src=src, dst=dst, size_bytes=size, start_s=start, priority=prio,
                        query=None if q is None or q < 0 else q, handshake=hs, ecmp=ecmp, where=f"{where}: {at}"))
    return out
