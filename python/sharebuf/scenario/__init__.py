"""A scenario, from what the user writes to the engine spec the Rust core runs. Each module
has one job, in the order a scenario passes through them:

==========================  ==============================================================
:mod:`.load`                a TOML file, a bundled name or a dict: read, profile applied,
                            validated (:func:`load_scenario`, :func:`parse_scenario`); as a
                            dict with ``--set`` overrides (:func:`scenario_dict`)
:mod:`.overrides`           the ``--set KEY=VALUE`` grammar and dotted keys (:func:`set_path`)
:mod:`.profiles`            compatibility profiles (``profile = "ns3dc"``)
:mod:`.model`               the whole scenario; its sections in :mod:`.topology`,
                            :mod:`.sections` (switch, host, transport, output, debug) and
                            :mod:`.workloads`, on the building blocks of :mod:`.fields`
:mod:`.messages`            validation errors as one line naming key, value, what is allowed
:mod:`.inputs`              the files a scenario reads: CDFs and flow lists
:mod:`.engine_spec`         the engine spec (:func:`resolve`): one function per part (times,
                            topology, switch and scheme, host NICs, transport, output) and
                            :mod:`.workload_spec`, one per workload kind; :mod:`.units`
==========================  ==============================================================

Adding a scenario key touches one model and one resolver function. The names below are
importable from here (loaded on first use, so that ``--set`` parsing needs no pydantic).
"""

from .._lazy import lazy_attributes

#: Public name -> the module that defines it (PEP 562: loaded on first use).
_PUBLIC = {
    "load_scenario": "load", "parse_scenario": "load", "bundled_scenarios": "load", "scenario_dict": "load",
    "apply_sets": "load",
    "set_path": "overrides", "parse_sets": "overrides", "parse_value": "overrides", "parse_values": "overrides",
    "add_set_argument": "overrides",
    "PROFILES": "profiles", "apply_profile": "profiles", "profile_key": "profiles", "strip_profile_keys": "profiles",
    "Scenario": "model",
    "format_validation_error": "messages",
    "BUNDLED_CDFS": "inputs", "read_cdf": "inputs", "cdf_mean_bytes": "inputs", "read_flow_file": "inputs",
    "absolute_file_inputs": "inputs",
    "resolve": "engine_spec", "engine_spec_json": "engine_spec",
}


__getattr__ = lazy_attributes(globals(), _PUBLIC)

__all__ = list(_PUBLIC)
