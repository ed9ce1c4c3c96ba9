"""The scenario's names where they were before :mod:`sharebuf.scenario` (kept for scripts and
tests that import them from here): the models, loading, profiles, inputs and resolution."""

from .errors import ScenarioError
from .scenario.inputs import BUNDLED_CDFS, FLOW_COLUMNS, absolute_file_inputs, cdf_mean_bytes, read_cdf, read_flow_file
from .scenario.load import bundled_scenarios, load_scenario, parse_scenario
from .scenario.messages import check_finite, format_validation_error, show_value
from .scenario.model import Scenario
from .scenario.overrides import tomllib
from .scenario.profiles import PROFILES, apply_profile, cc_param_applies, cc_param_owners, profile_key, strip_profile_keys
from .scenario.engine_spec import engine_spec_json, resolve
from .scenario.topology import FatTree, LeafSpine, Star
from .scenario.units import PS_PER_MS, PS_PER_S, PS_PER_US, bps, ms, us

__all__ = ["Scenario", "ScenarioError", "load_scenario", "resolve", "parse_scenario", "bundled_scenarios", "cdf_mean_bytes",
           "read_cdf", "read_flow_file", "FLOW_COLUMNS", "BUNDLED_CDFS", "absolute_file_inputs", "engine_spec_json",
           "format_validation_error", "show_value", "check_finite", "tomllib", "PROFILES", "apply_profile", "cc_param_applies", "cc_param_owners", "profile_key",
           "strip_profile_keys", "LeafSpine", "FatTree", "Star", "PS_PER_US", "PS_PER_MS", "PS_PER_S", "bps", "us", "ms"]
