"""Errors a user can act on: they name the scenario key, the value and what is allowed."""


class ScenarioError(ValueError):
    """A scenario is invalid. The message names the key, the value and what is allowed."""
