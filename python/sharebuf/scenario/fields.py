"""The building blocks of the scenario models: a TOML table that refuses unknown keys, and
the constrained number types every section uses.

No ``from __future__ import annotations`` in the model modules: pydantic would compile and
evaluate every field's annotation from its string when the models are built at import
(issue 10: start-up).
"""

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from ..errors import did_you_mean


def empty_dict() -> dict:
    """Default factory (not ``dict``: pydantic reads a factory's signature, and a builtin's costs
    a tokenizer regex compiled at start-up; issue 10)."""
    return {}


def empty_list() -> list:
    """Default factory (see :func:`empty_dict`)."""
    return []


class Section(BaseModel):
    """A TOML table: unknown keys are errors that list the allowed ones."""

    #: inf and nan are refused everywhere ("Input should be a finite number").
    model_config = ConfigDict(extra="forbid", validate_assignment=True, allow_inf_nan=False)

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, data: Any) -> Any:
        if isinstance(data, dict):
            allowed = set(cls.model_fields)
            for k in data:
                if k not in allowed:
                    raise ValueError(f"unknown key '{k}'{did_you_mean(k, allowed)}; allowed: {', '.join(sorted(allowed))}")
        return data


def _not_bool(v: Any) -> Any:
    """pydantic's lax mode reads true as 1: a number key given a boolean is an error instead."""
    if isinstance(v, bool):
        raise ValueError("expected a number, got a boolean")
    return v


NotBool = BeforeValidator(_not_bool)


def _strict_bool(v: Any) -> Any:
    """pydantic's lax mode reads "yes", "on" or 1 as true: a flag takes a TOML boolean only."""
    if not isinstance(v, bool):
        raise ValueError("expected a boolean; allowed: true, false")
    return v


#: A flag that is a TOML boolean and nothing else.
StrictFlag = Annotated[bool, BeforeValidator(_strict_bool)]


def _whole(v: Any) -> Any:
    """pydantic's lax mode reads 3.0, "3" or true as 3: a count or an id takes a TOML integer only."""
    if isinstance(v, bool) or not isinstance(v, int):
        raise ValueError("expected a whole number (a TOML integer, not a float, string or boolean)")
    return v


#: A TOML integer and nothing else (no float, string or boolean), at least 0.
NonNegWhole = Annotated[int, BeforeValidator(_whole), Field(ge=0)]
#: A flow id as the engine numbers flows (flows.parquet's flow_id): a TOML integer, 0 .. 2^32 - 1.
FlowId = Annotated[int, BeforeValidator(_whole), Field(ge=0, le=2**32 - 1)]


def u64_seed(v: int) -> int:
    """A seed fits the engine's unsigned 64 bits."""
    if v >= 2**64:
        raise ValueError("above the largest seed; allowed: 0 .. 18446744073709551615 (2^64 - 1)")
    return v


PosFloat = Annotated[float, NotBool, Field(gt=0)]
NonNegFloat = Annotated[float, NotBool, Field(ge=0)]
Priority = Annotated[int, NotBool, Field(ge=0, le=7)]
