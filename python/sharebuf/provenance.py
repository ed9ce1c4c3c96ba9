"""What made a result: every run directory holds ``scenario.toml`` (the scenario exactly as
resolved: every key with its value, defaults filled in, overrides applied, file inputs named by
absolute path with their SHA-256) and ``summary.json["provenance"]`` (sharebuf version, model
revision, git commit of a checkout, engine-spec hash, command line, start time, wall time, host).
Parquet files carry the engine-spec hash, the version and the model revision in their key-value
metadata.

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
from pathlib import Path
from typing import Any, Dict, Optional

#: Key of the recorded table in scenario.toml (read back by scenario.model.Scenario as ``recorded``).
RECORD_KEY = "recorded"


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def spec_hash(spec_json: str) -> str:
    return hashlib.sha256(spec_json.encode()).hexdigest()


#: The Python modules that turn the engine's tables into a run's files and summary.json.
SUMMARY_MODULES = ("results.py", "classes.py")
_REVISION: Dict[str, str] = {}


def model_revision() -> str:
    """What produced a run's numbers, beyond its scenario: the engine's source hash (computed
    when the engine was built, ``_core.ENGINE_SOURCE``) and a hash of the Python modules that
    write its files and summary (:data:`SUMMARY_MODULES`), as ``"<engine 16 hex>-<summary 8 hex>"``.
    Part of every run's key, recorded in its provenance: a run directory made by other code is
    never reused as this code's, although the version number has not moved."""
    if not _REVISION:
        from . import _core

        h = hashlib.sha256()
        here = Path(__file__).resolve().parent
        for name in SUMMARY_MODULES:
            h.update(name.encode() + b"\0" + (here / name).read_bytes() + b"\0")
        _REVISION["value"] = f"{_core.ENGINE_SOURCE}-{h.hexdigest()[:8]}"
    return _REVISION["value"]


#: The git query of this process: {"proc": the running ``git status``} once started, then
#: {"value": its answer} (one query per process, as a cache).
_GIT: Dict[str, Any] = {}


def _checkout_root() -> Optional[Path]:
    here = Path(__file__).resolve().parent
    return next((p for p in [here, *here.parents] if (p / ".git").exists()), None)


def git_commit_start() -> None:
    """Start the query :func:`git_commit` answers, in the background: the command line starts it
    before its imports, so that the ``git`` process runs alongside them (issue 10: start-up)."""
    if _GIT:
        return
    root = _checkout_root()
    if root is None:
        _GIT["value"] = None
        return
    try:
        # One process gives both: the commit ("# branch.oid", "(initial)" before the first
        # commit) and whether a tracked file is modified (any line that is not a "#" header).
        _GIT["proc"] = subprocess.Popen(["git", "-C", str(root), "status", "--porcelain=v2", "--branch", "--untracked-files=no"],
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, text=True,
                                        # read-only: no index refresh written, so no index.lock against the user's own git
                                        env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"})
    except (OSError, subprocess.SubprocessError):
        _GIT["value"] = None
        return
    import atexit

    atexit.register(_discard_unanswered)


def _discard_unanswered() -> None:
    """At exit, a query no one collected (the run failed first): stop and reap it."""
    proc = _GIT.pop("proc", None)
    if proc is not None:
        proc.kill()
        proc.communicate()


#: ``platform.platform()`` (which runs ``uname -p``, a process) computing in a thread: {"thread": it}
#: once started, {} again once joined (the platform module caches the answer).
_HOST: Dict[str, Any] = {}


def prefetch() -> None:
    """Start provenance's two slow queries in the background, each a process: git's (see
    :func:`git_commit`) and the host's platform string (:func:`host`). The command line calls it
    before the run's imports, :func:`sharebuf.runner.run` before validating; the answers are
    collected when the provenance is recorded (issue 10: start-up)."""
    git_commit_start()
    if not _HOST and not getattr(platform, "_platform_cache", None):
        import threading

        t = threading.Thread(target=platform.platform, name="sharebuf-provenance-platform", daemon=True)
        _HOST["thread"] = t
        t.start()


def _parse_git_status(out: str) -> Optional[str]:
    lines = out.splitlines()
    oid = next((ln.split()[2] for ln in lines if ln.startswith("# branch.oid ") and len(ln.split()) == 3), None)
    if oid is None or oid == "(initial)":
        return None
    dirty = any(ln and not ln.startswith("#") for ln in lines)
    return oid + ("+dirty" if dirty else "")


def git_commit() -> Optional[str]:
    """The commit of the checkout sharebuf runs from (editable installs), '+dirty' if modified."""
    if "value" not in _GIT:
        git_commit_start()
        proc = _GIT.pop("proc", None)
        value = None
        if proc is not None:
            try:
                out, _ = proc.communicate(timeout=5)
                value = _parse_git_status(out) if proc.returncode == 0 else None
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate()
            except (OSError, subprocess.SubprocessError):
                pass
        _GIT["value"] = value
    return _GIT["value"]


def host() -> Dict[str, Any]:
    t = _HOST.pop("thread", None)
    if t is not None:
        t.join()  # platform.platform() below is then its cached answer
    mem = None
    try:
        mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        pass
    return {"hostname": platform.node(), "cores": os.cpu_count(), "memory_bytes": mem, "platform": platform.platform(),
            "python": platform.python_version()}


def record(spec_json: str, started: _dt.datetime, wall_s: float, command: Optional[str]) -> Dict[str, Any]:
    from ._version import __version__

    return {
        "sharebuf_version": __version__,
        "model_revision": model_revision(),
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
    from ._version import __version__
    from .scenario.inputs import absolute_file_inputs

    d = sc.model_dump(mode="json", exclude_none=True)
    d["name"] = name
    d.pop(RECORD_KEY, None)
    inputs = {p: sha256_file(Path(p)) for p in absolute_file_inputs(d, base)}
    d[RECORD_KEY] = {"sharebuf_version": __version__, "model_revision": model_revision(), "inputs": inputs}
    return d


def check_recorded(recorded: Optional[Dict[str, Any]], warn) -> None:
    """Before a run of a recorded scenario: say if the version differs or an input file changed."""
    from ._version import __version__

    if not recorded:
        return
    v = recorded.get("sharebuf_version")
    if v and v != __version__:
        warn(f"warning: this scenario was recorded by sharebuf {v}; this is sharebuf {__version__}: results may differ")
    elif (r := recorded.get("model_revision")) and r != model_revision():
        warn(f"warning: this scenario was recorded by another build of sharebuf {__version__} (model revision {r}; "
             f"this is {model_revision()}): results may differ")
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
    from ._version import __version__

    return {b"sharebuf.version": __version__.encode(), b"sharebuf.model_revision": model_revision().encode(),
            b"sharebuf.engine_spec_sha256": spec_sha.encode()}
