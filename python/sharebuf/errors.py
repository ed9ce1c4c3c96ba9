"""Errors a user can act on: they name the scenario key, the value and what is allowed.

The command line maps :class:`ScenarioError` to one ``error:`` line and exit code 2 (nothing
written), :class:`InternalError` (a panic inside the engine: a bug in sharebuf) to one
``internal error:`` line and exit code 3. docs/reliability.md lists every case.
"""

from __future__ import annotations

from typing import Iterable

#: Where to report an internal error (the project has no public URL recorded in the repository yet).
ISSUE_TRACKER = "the sharebuf issue tracker"


class ScenarioError(ValueError):
    """A scenario is invalid. The message names the key, the value and what is allowed."""


class SchemeError(RuntimeError):
    """A buffer-management scheme written in Python raised (or answered out of range) during a
    run. The message names the scheme's class, the hook and the packet (switch, port, queue,
    flow, size); the Python exception is the ``__cause__``. The run wrote no output."""
class InternalError(RuntimeError):
    """The engine panicked (a bug in sharebuf, not in the scenario). The message names the
    scenario, the panic and how to report it."""


def did_you_mean(value: object, allowed: Iterable[str]) -> str:
    """``" (did you mean 'x'?)"`` for the allowed name closest to ``value``, or ``""``."""
    if not isinstance(value, str):
        return ""
    import difflib  # only for a mistake: not at start-up (issue 10)

    close = difflib.get_close_matches(value, [str(a) for a in allowed], n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""
