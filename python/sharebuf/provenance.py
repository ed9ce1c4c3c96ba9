"""What made a result: every run directory holds ``scenario.toml`` (the scenario exactly as
resolved: every key with its value, defaults filled in, overrides applied, file inputs named by
absolute path with their SHA-256) and ``summary.json["provenance"]`` (sharebuf version, git
commit of a checkout, engine-spec hash, command line, start time, wall time, host). Parquet files
carry the engine-spec hash and the version in their key-value metadata.

``sharebuf run DIR/scenario.toml`` needs nothing but the files it names; with the same sharebuf
it gives byte-identical Parquet files, and with another version it says so before it starts.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import os
import platform
import subprocess
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, Optional

#: Key of the recorded table in scenario.toml (read back by config.Scenario as ``recorded``).
RECORD_KEY = "recorded"


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def spec_hash(spec_json: str) -> str:
    return hashlib.sha256(spec_json.encode()).hexdigest()


@lru_cache(maxsize=1)
def git_commit() -> Optional[str]:
    """The commit of the checkout sharebuf runs from (editable installs), '+dirty' if modified."""
    here = Path(__file__).resolve().parent
    root = next((p for p in [here, *here.parents] if (p / ".git").exists()), None)
    if root is None:
        return None
    try:
        rev = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5)
        if rev.returncode != 0:
            return None
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=5).stdout.strip()
        return rev.stdout.strip() + ("+dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return None


def host() -> Dict[str, Any]:
    mem = None
    try:
        mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        pass
    return {"hostname": platform.node(), "cores": os.cpu_count(), "memory_bytes": mem, "platform": platform.platform(),
            "python": platform.python_version()}


def record(spec_json: str, started: _dt.datetime, wall_s: float, command: Optional[str]) -> Dict[str, Any]:
    from . import __version__

    return {
        "sharebuf_version": __version__,
        "git_commit": git_commit(),
        "engine_spec_sha256": spec_hash(spec_json),
        "command": command if command is not None else "python: " + " ".join(sys.argv[:1]),
        "started_utc": started.astimezone(_dt.timezone.utc).isoformat(timespec="seconds"),
        "wall_s": wall_s,
        "host": host(),
    }


def resolved_scenario(sc, base: Path, name: str) -> Dict[str, Any]:
    """The validated scenario as a plain dict with defaults filled in and file inputs made
    absolute, plus ``recorded = {sharebuf_version, inputs = {path: sha256}}``."""
    from . import __version__
    from .config import absolute_file_inputs

    d = sc.model_dump(mode="json", exclude_none=True)
    d["name"] = name
    d.pop(RECORD_KEY, None)
    inputs = {p: sha256_file(Path(p)) for p in absolute_file_inputs(d, base)}
    d[RECORD_KEY] = {"sharebuf_version": __version__, "inputs": inputs}
    return d


def check_recorded(recorded: Optional[Dict[str, Any]], warn) -> None:
    """Before a run of a recorded scenario: say if the version differs or an input file changed."""
    from . import __version__

    if not recorded:
        return
    v = recorded.get("sharebuf_version")
    if v and v != __version__:
        warn(f"warning: this scenario was recorded by sharebuf {v}; this is sharebuf {__version__}: results may differ")
    for path, digest in (recorded.get("inputs") or {}).items():
        p = Path(path)
        if not p.is_file():
            continue  # resolution reports the missing file with its key
        if sha256_file(p) != digest:
            warn(f"warning: input file {path} changed since the scenario was recorded (sha256 {digest[:12]}…): results may differ")


def to_toml(d: Dict[str, Any]) -> str:
    import tomli_w

    header = ("# The scenario exactly as sharebuf resolved and ran it: every key with its value, defaults filled in,\n"
              "# overrides applied. Run it again with: sharebuf run scenario.toml\n")
    return header + tomli_w.dumps(_toml_safe(d))


def _toml_safe(o):
    if isinstance(o, dict):
        return {str(k): _toml_safe(v) for k, v in o.items() if v is not None}
    if isinstance(o, (list, tuple)):
        return [_toml_safe(v) for v in o]
    return o


def parquet_metadata(spec_sha: str) -> Dict[bytes, bytes]:
    from . import __version__

    return {b"sharebuf.version": __version__.encode(), b"sharebuf.engine_spec_sha256": spec_sha.encode()}
