"""Errors a user can act on: they name the scenario key, the value and what is allowed."""


class ScenarioError(ValueError):
    """A scenario is invalid. The message names the key, the value and what is allowed."""


class SchemeError(RuntimeError):
    """A buffer-management scheme written in Python raised (or answered out of range) during a
    run. The message names the scheme's class, the hook and the packet (switch, port, queue,
    flow, size); the Python exception is the ``__cause__``. The run wrote no output."""
