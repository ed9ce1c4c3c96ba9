"""sharebuf: a fast, faithful packet-level simulator and toolkit for shared-buffer
management in datacenter switches.

>>> import sharebuf
>>> res = sharebuf.run("default")          # a bundled scenario, a TOML path, or a dict
>>> res.summary["slowdown"]
>>> res.flows.head()                        # pandas DataFrame

The engine is Rust (``sharebuf._core``), loaded on first use so that ``sharebuf.analysis``
works without it.
"""

from ._lazy import lazy_attributes
from ._version import __version__

#: Public names loaded on first use (PEP 562), so that ``import sharebuf`` (and ``sharebuf
#: --version``) imports nothing else; issue 10.
_LAZY = {"ScenarioError": "errors", "SchemeError": "errors", "PushOut": "schemes"}


__getattr__ = lazy_attributes(globals(), _LAZY)


def run(*args, **kwargs):
    """Run a scenario; see :func:`sharebuf.runner.run`."""
    from .runner import run as _run

    return _run(*args, **kwargs)


__all__ = ["run", "ScenarioError", "SchemeError", "PushOut", "__version__"]
