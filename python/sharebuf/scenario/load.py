"""Loading a scenario: a TOML file, a bundled scenario by name, or a dict shaped like the
TOML; its profile applied and every section validated (:func:`parse_scenario`); and the same
as a dict with ``--set`` overrides applied (:func:`scenario_dict`)."""

import json
from importlib import resources
from pathlib import Path
from typing import Any, Dict, List, Optional, Union

from pydantic import ValidationError

from ..errors import ScenarioError, did_you_mean
from .inputs import absolute_file_inputs, read_text
from .messages import format_validation_error
from .model import Scenario
from .overrides import set_path, tomllib
from .profiles import apply_profile, strip_profile_keys


def parse_scenario(data: dict) -> Scenario:
    """A scenario dict, its profile applied, validated; errors as one :class:`ScenarioError` line."""
    data, applied = apply_profile(data)
    try:
        sc = Scenario.model_validate(data)
    except ValidationError as e:
        raise ScenarioError(format_validation_error(e)) from None
    sc._profile_set = applied
    return sc


def bundled_scenarios() -> List[str]:
    d = resources.files("sharebuf") / "scenarios"
    return sorted(p.name[:-5] for p in d.iterdir() if p.name.endswith(".toml"))


def load_scenario(source: Union[str, Path, dict, None], profile: Optional[str] = None) -> tuple[Scenario, Path, str]:
    """Load a scenario from a TOML path, a bundled scenario name, or a dict.

    ``profile`` replaces the scenario's own ``profile`` key ("none": sharebuf's defaults).
    Returns the validated scenario, the directory relative file names resolve against,
    and a display name.
    """
    if source is None:
        source = "default"
    if isinstance(source, dict):
        data = source if profile is None else {**source, "profile": profile}
        return parse_scenario(data), Path.cwd(), str(source.get("name", "scenario"))
    p = Path(source)
    if p.suffix == ".toml" or p.exists():
        if not p.is_file():
            raise ScenarioError(f"scenario '{source}': no such file (bundled scenarios: {', '.join(bundled_scenarios())})")
        text = read_text(p, f"scenario '{source}'")
        base, name = p.resolve().parent, p.stem
    else:
        f = resources.files("sharebuf") / "scenarios" / f"{source}.toml"
        if not f.is_file():
            raise ScenarioError(f"scenario '{source}': not a file nor a bundled scenario{did_you_mean(str(source), bundled_scenarios())}; "
                                f"bundled: {', '.join(bundled_scenarios())}")
        text, base, name = f.read_text(), Path.cwd(), str(source)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError(f"scenario '{source}': invalid TOML: {e}") from None
    if profile is not None:
        data["profile"] = profile
    sc = parse_scenario(data)
    return sc, base, sc.name or name


def scenario_base(scenario: Union[str, Path, dict, None]) -> tuple:
    """A scenario loaded and dumped as a dict to override: the keys a profile set removed, file
    inputs absolute, its display name as ``name``. Returns (the validated scenario, the dict)."""
    sc, base, name = load_scenario(scenario)
    # Keys a profile sets stay unset unless the scenario set them, so a changed (or swept) `profile` applies.
    d = strip_profile_keys(sc, sc.model_dump(exclude_none=True, exclude_defaults=False))
    absolute_file_inputs(d, base)  # relative file names resolve against the scenario's directory
    d["name"] = name
    return sc, d


def apply_sets(d: dict, sets: Optional[Dict[str, Any]]) -> dict:
    """Apply ``--set`` overrides to a scenario dict in order, validating after each one so
    that an error names the key and value at fault."""
    for k, v in (sets or {}).items():
        set_path(d, k, v)
        try:
            parse_scenario(d)
        except ScenarioError as e:
            raise ScenarioError(f"--set {k}={json.dumps(v)}: {e}") from None
    return d


def scenario_dict(scenario: Union[str, Path, dict, None], sets: Optional[Dict[str, Any]] = None) -> dict:
    """A scenario (TOML path, bundled name or dict) as a validated dict, ``sets`` applied."""
    return apply_sets(scenario_base(scenario)[1], sets)
