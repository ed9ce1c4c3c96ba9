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

#: Public names loaded on first use (PEP 562), so that ``import sharebuf`` (and ``sharebuf
#: --version``) imports nothing else; issue 10.
_LAZY = {"ScenarioError": "errors", "SchemeError": "errors", "PushOut": "schemes"}


def __getattr__(name):
    mod = _LAZY.get(name)
    if mod is None:
        raise AttributeError(f"module 'sharebuf' has no attribute '{name}'")
    from importlib import import_module

    value = getattr(import_module(f".{mod}", __name__), name)
    globals()[name] = value
    return value


def run(*args, **kwargs):
    """Run a scenario; see :func:`sharebuf.runner.run`."""
    from .runner import run as _run

    return _run(*args, **kwargs)


__all__ = ["run", "ScenarioError", "SchemeError", "PushOut", "__version__"]
