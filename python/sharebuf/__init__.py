"""sharebuf: a fast, faithful packet-level simulator and toolkit for shared-buffer
management in datacenter switches.

>>> import sharebuf
>>> res = sharebuf.run("default")          # a bundled scenario, a TOML path, or a dict
>>> res.summary["slowdown"]
>>> res.flows.head()                        # pandas DataFrame

The engine is Rust (``sharebuf._core``), loaded on first use so that ``sharebuf.analysis``
works without it.
"""

__version__ = "0.1.0"

from .errors import ScenarioError, SchemeError  # noqa: E402
from .schemes import PushOut  # noqa: E402


def run(*args, **kwargs):
    """Run a scenario; see :func:`sharebuf.runner.run`."""
    from .runner import run as _run

    return _run(*args, **kwargs)


__all__ = ["run", "ScenarioError", "SchemeError", "PushOut", "__version__"]
