"""Every malformed input is refused before the run: one ``error:`` line naming the key (or the
file, row and column), the value and what is allowed; exit code 2; no traceback; nothing
written. ``CASES`` is the table (input -> the exact message); docs/reliability.md is generated
from it (``python tests/python/test_reliability.py`` rewrites it; a test checks it is current).
Each case runs through the CLI (``sharebuf.cli.main``) and, for ``run``, the Python API
(``sharebuf.run``); a few run as real subprocesses to check the exit code and the absence of a
traceback end to end."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, NamedTuple, Optional, Union

import pytest

import sharebuf
from sharebuf.cli import main

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "reliability.md"


class Case(NamedTuple):
    id: str
    what: str
    argv: List[str]
    scenario: Optional[str]            # s.toml's text (None: no scenario file)
    files: Dict[str, Union[str, bytes]]
    env: Optional[Dict[str, str]]
    message: str                       # the whole line after "error: "


BASE_TOPO = 'kind = "star"\nhosts = 4'


def sc(top="", topo=BASE_TOPO, switch="buffer_bytes = 200000", tail=""):
    """A 4-host star scenario (2 ms) with the case's lines put in place."""
    return f'max_ms = 2\n{top}\n[topology]\n{topo}\n[switch]\n{switch}\n{tail}'.replace("\n\n", "\n")


FLOWS = '[[workload]]\nkind = "flows"\nfile = "f.csv"\n'
CDF = '[[workload]]\nkind = "poisson"\ncdf = "c.cdf"\nload = 0.2\n'
H = "id,src,dst,size_bytes,start_s\n"


def cbr(x):
    return '[[workload]]\nkind = "cbr"\n[[workload.flows]]\n' + x


RUN = ["run", "s.toml", "--out", "out", "--quiet"]
LIMIT_8GB = {"SHAREBUF_MEMORY_LIMIT_BYTES": "8e9"}


CASES = [
    Case("key-unknown", "a misspelt key", RUN, sc(topo=BASE_TOPO + "\nlink_gbsp = 10"), {}, None,
         "topology: unknown key 'link_gbsp' (did you mean 'link_gbps'?); allowed: ecmp_hash, hosts, kind, link_delay_us, link_gbps"),
    Case("key-unknown-top", "a misspelt top-level key", RUN, sc(top="max_msx = 3"), {}, None,
         "(top level): unknown key 'max_msx' (did you mean 'max_ms'?); allowed: arrivals_until_ms, debug, description, host, max_ms, name, output, profile, recorded, seed, switch, topology, transport, workload"),
    Case("key-type", "a string where a number is expected", RUN, sc(topo='kind = "star"\nhosts = "four"'), {}, None,
         "topology.hosts = 'four': Input should be a valid integer, unable to parse string as an integer"),
    Case("key-bool", "a boolean where a number is expected", RUN, sc(topo='kind = "star"\nhosts = true'), {}, None,
         'topology.hosts = true: expected a number, got a boolean'),
    Case("key-fraction", "a fraction where an integer is expected", RUN, sc(topo='kind = "star"\nhosts = 4.5'), {}, None,
         'topology.hosts = 4.5: Input should be a valid integer, got a number with a fractional part'),
    Case("key-range", "a value out of range", RUN, sc(topo='kind = "star"\nhosts = 1'), {}, None,
         'topology.hosts = 1: Input should be greater than or equal to 2'),
    Case("key-nan", "nan", RUN, sc().replace("max_ms = 2", "max_ms = nan"), {}, None,
         'max_ms = nan: Input should be a finite number'),
    Case("key-inf", "inf", RUN, sc(topo=BASE_TOPO + "\nlink_gbps = inf"), {}, None,
         'topology.link_gbps = inf: Input should be a finite number'),
    Case("key-union-nan", "nan in a list given to a number-or-list key (found by bench/fuzz.py)", RUN,
         sc(switch='buffer_bytes = 200000\necn_k_bytes = [nan, nan, nan, nan]'), {}, None,
         "switch.ecn_k_bytes[0] = nan: Input should be a finite number; switch.ecn_k_bytes[1] = nan: Input should be a finite number; "
         "switch.ecn_k_bytes[2] = nan: Input should be a finite number (and 1 more)"),
    Case("key-literal", "a value not in the allowed list", RUN, sc(switch='buffer_bytes = 200000\nscheduler = "dr"'), {}, None,
         "switch.scheduler = 'dr': Input should be 'sp', 'rr', 'rr_strict0' or 'drr' (did you mean 'drr'?)"),
    Case("key-kind", "an unknown topology kind", RUN, sc(topo='kind = "leafspine"'), {}, None,
         "topology: kind 'leafspine' found using 'kind' does not match any of the expected tags: 'leaf_spine', 'fat_tree', 'star' (did you mean 'leaf_spine'?)"),
    Case("key-seed", "a seed beyond 64 bits", RUN, sc(top="seed = 18446744073709551616"), {}, None,
         'seed = 18446744073709551616: above the largest seed; allowed: 0 .. 18446744073709551615 (2^64 - 1)'),
    Case("key-horizon-clock", "a horizon beyond the engine's clock", RUN, sc().replace("max_ms = 2", "max_ms = 1e11"), {}, None,
         "max_ms = 100000000000.0: beyond the engine's clock (64-bit picoseconds); allowed: <= 18,446,744,074 ms"),
    Case("key-scheme", "an unknown scheme", RUN, sc(tail='[switch.bm]\nscheme = "abn"\n'), {}, None,
         "switch.bm.scheme = 'abn': unknown scheme (did you mean 'fab'?); allowed: cs, cp, dt, fab, ib, fb, fb_pisa, fba, abm, abm_approx, cbm, bshare, lqd, credence, reverie, python"),
    Case("key-scheme-param", "an unknown scheme parameter", RUN, sc(tail='[switch.bm]\nscheme = "dt"\nalpah = 1\n'), {}, None,
         "switch.bm.alpah: unknown parameter for 'dt' (did you mean 'alpha'?); allowed: alpha"),
    Case("key-cc", "an unknown congestion control", RUN, sc(tail='[transport]\ncc = "cubik"\n'), {}, None,
         "transport.cc = 'cubik': unknown congestion control (did you mean 'cubic'?); allowed: newreno, dctcp, cubic, timely, powertcp, theta_powertcp, hpcc, dcqcn, fixed_window"),
    Case("key-cc-param-nan", "nan in a congestion-control parameter", RUN, sc(tail='[transport]\ncc = "dctcp"\ncc_params = { g = nan }\n'), {}, None,
         'transport.cc_params.g = nan: not a finite number; allowed: finite numbers'),
    Case("key-profile", "an unknown profile", RUN, sc(top='profile = "ns3"'), {}, None,
         "profile = 'ns3': unknown profile; allowed: none, ns3dc"),
    Case("toml-syntax", "a TOML syntax error", RUN, "max_ms = \n", {}, None,
         "scenario 's.toml': invalid TOML: Invalid value (at line 1, column 10)"),
    Case("scenario-name", "a misspelt bundled scenario", ["run", "defualt", "--out", "out"], None, {}, None,
         "scenario 'defualt': not a file nor a bundled scenario (did you mean 'default'?); bundled: abm-eval, default, standard"),
    Case("set-key", "--set with an unknown key", ["run", "s.toml", "--out", "out", "--set", "switch.bufer_bytes=5"], sc(), {}, None,
         "--set switch.bufer_bytes=5: switch: unknown key 'bufer_bytes' (did you mean 'buffer_bytes'?); allowed: bm, buffer_accounting, buffer_bytes, buffer_kb_per_port_per_gbps, device_queue_packets, drr_quantum_bytes, drr_weights, ecn_k_bytes, int_stamp, int_tx_bytes, lossless_priorities, pfc_alpha_ingress, pfc_headroom_bytes, pfc_xon_bytes, pfc_xon_offset_bytes, queues_per_port, red_kmax_bytes, red_kmin_bytes, red_pmax, scheduler, spine_buffer"),
    Case("flows-nan", "flow list: nan start time", RUN, sc(tail=FLOWS), {"f.csv": H + "0,0,1,1000,nan\n"}, None,
         "workload[0].file = 'f.csv': row 1 (line 2), column 'start_s' = 'nan': allowed: a finite time in seconds >= 0"),
    Case("flows-inf", "flow list: infinite size", RUN, sc(tail=FLOWS), {"f.csv": H + "0,0,1,inf,0\n"}, None,
         "workload[0].file = 'f.csv': row 1 (line 2), column 'size_bytes' = 'inf': allowed: a whole number of bytes >= 1"),
    Case("flows-empty-cell", "flow list: empty cell", RUN, sc(tail=FLOWS), {"f.csv": H + "0,0,,1000,0\n"}, None,
         "workload[0].file = 'f.csv': row 1 (line 2), column 'dst' = '': allowed: a host number >= 0"),
    Case("flows-short-row", "flow list: a row with missing cells", RUN, sc(tail=FLOWS), {"f.csv": H + "0,0,1\n"}, None,
         "workload[0].file = 'f.csv': row 1 (line 2), column 'size_bytes' = (missing): allowed: a whole number of bytes >= 1"),
    Case("flows-negative", "flow list: negative size", RUN, sc(tail=FLOWS), {"f.csv": H + "0,0,1,-5,0\n"}, None,
         "workload[0].file = 'f.csv': row 1 (line 2), column 'size_bytes' = '-5': allowed: a whole number of bytes >= 1"),
    Case("flows-fraction", "flow list: non-integer size", RUN, sc(tail=FLOWS), {"f.csv": H + "0,0,1,100.5,0\n"}, None,
         "workload[0].file = 'f.csv': row 1 (line 2), column 'size_bytes' = '100.5': allowed: a whole number of bytes >= 1"),
    Case("flows-negative-start", "flow list: negative start time", RUN, sc(tail=FLOWS), {"f.csv": H + "0,0,1,100,-1\n"}, None,
         "workload[0].file = 'f.csv': row 1 (line 2), column 'start_s' = '-1': allowed: a finite time in seconds >= 0"),
    Case("flows-host-fraction", "flow list: non-integer host", RUN, sc(tail=FLOWS), {"f.csv": H + "0,0.5,1,100,0\n"}, None,
         "workload[0].file = 'f.csv': row 1 (line 2), column 'src' = '0.5': allowed: a host number >= 0"),
    Case("flows-dup-id", "flow list: duplicate flow id", RUN, sc(tail=FLOWS), {"f.csv": H + "0,0,1,100,0\n1,1,2,100,0\n0,2,3,100,0\n"}, None,
         "workload[0].file = 'f.csv': row 3 (line 4), column 'id' = '0': the same id as row 1; allowed: ids unique in the file"),
    Case("flows-self", "flow list: a flow to itself", RUN, sc(tail=FLOWS), {"f.csv": H + "0,1,1,100,0\n"}, None,
         "workload[0].file = 'f.csv': row 1 (line 2): src = dst = 1; allowed: two different hosts (a flow to itself never crosses the network)"),
    Case("flows-host-range", "flow list: host out of range", RUN, sc(tail=FLOWS), {"f.csv": H + "0,0,9,100,0\n"}, None,
         "workload[0].file = 'f.csv': row 1 (line 2), dst = 9: no such host; allowed: 0..3"),
    Case("flows-priority", "flow list: priority out of range", RUN, sc(tail=FLOWS), {"f.csv": "id,src,dst,size_bytes,start_s,priority\n0,0,1,100,0,9\n"}, None,
         "workload[0].file = 'f.csv': row 1 (line 2), column 'priority' = '9': allowed: empty or an integer 0..7"),
    Case("flows-handshake", "flow list: handshake not a boolean", RUN, sc(tail=FLOWS), {"f.csv": "id,src,dst,size_bytes,start_s,handshake\n0,0,1,100,0,maybe\n"}, None,
         "workload[0].file = 'f.csv': row 1 (line 2), column 'handshake' = 'maybe': allowed: true, false, 1, 0 or empty"),
    Case("flows-missing-column", "flow list: a required column missing", RUN, sc(tail=FLOWS), {"f.csv": "id,src,size_bytes,start_s\n0,0,100,0\n"}, None,
         "workload[0].file = 'f.csv': columns ['id', 'src', 'size_bytes', 'start_s'] lack ['dst']; expected id,src,dst,size_bytes,start_s[,priority,query,handshake]"),
    Case("flows-unknown-column", "flow list: an unknown column", RUN, sc(tail=FLOWS), {"f.csv": "id,src,dst,size_bytes,start_s,prio\n0,0,1,100,0,1\n"}, None,
         "workload[0].file = 'f.csv': unknown column 'prio' (did you mean 'priority'?); allowed: id, src, dst, size_bytes, start_s, priority, query, handshake, ecmp_hash, ecmp_hash_reverse"),
    Case("flows-empty-file", "flow list: empty file", RUN, sc(tail=FLOWS), {"f.csv": ""}, None,
         "workload[0].file = 'f.csv': empty file; expected a header line id,src,dst,size_bytes,start_s[,priority,query,handshake] and one row per flow"),
    Case("flows-no-rows", "flow list: header only", RUN, sc(tail=FLOWS), {"f.csv": H}, None,
         "workload[0].file = 'f.csv': no rows; a flows workload needs at least one flow"),
    Case("flows-binary", "flow list: not text", RUN, sc(tail=FLOWS), {"f.csv": b"\xff\xfe\x00\x01"}, None,
         "workload[0].file = 'f.csv': not a UTF-8 text file (byte 0: b'\\xff'); expected text"),
    Case("flows-missing-file", "flow list: no such file", RUN, sc(tail=FLOWS), {}, None,
         "workload[0].file = 'f.csv': no such file"),
    Case("flows-inline-self", "inline flows: a flow to itself", RUN, sc(tail='[[workload]]\nkind = "flows"\nflows = [{ src = 2, dst = 2, size_bytes = 10, start_s = 0 }]\n'), {}, None,
         'workload[0].flows[0]: src = dst = 2; allowed: two different hosts (a flow to itself never crosses the network)'),
    Case("cdf-not-monotone", "CDF: sizes decrease", RUN, sc(tail=CDF), {"c.cdf": "100 0.5\n50 0.7\n200 1\n"}, None,
         "workload[0].cdf = 'c.cdf': line 2, column 1 (bytes) = 50 is below line 1's 100; allowed: sizes and probabilities non-decreasing"),
    Case("cdf-prob-decreasing", "CDF: probabilities decrease", RUN, sc(tail=CDF), {"c.cdf": "100 0.5\n150 0.4\n200 1\n"}, None,
         "workload[0].cdf = 'c.cdf': line 2, column 2 (cumulative probability) = 0.4 is below line 1's 0.5; allowed: sizes and probabilities non-decreasing"),
    Case("cdf-prob-above-1", "CDF: probability above 1", RUN, sc(tail=CDF), {"c.cdf": "100 0.5\n200 1.5\n300 1\n"}, None,
         "workload[0].cdf = 'c.cdf': line 2, column 2 (cumulative probability) = '1.5'; allowed: a probability within [0, 1]"),
    Case("cdf-prob-negative", "CDF: negative probability", RUN, sc(tail=CDF), {"c.cdf": "100 -0.5\n200 1\n"}, None,
         "workload[0].cdf = 'c.cdf': line 1, column 2 (cumulative probability) = '-0.5'; allowed: a probability within [0, 1]"),
    Case("cdf-not-ending-1", "CDF: does not end at 1", RUN, sc(tail=CDF), {"c.cdf": "100 0.5\n200 0.9\n"}, None,
         "workload[0].cdf = 'c.cdf': line 2: the last cumulative probability is 0.9; a CDF must end at 1"),
    Case("cdf-nan", "CDF: nan", RUN, sc(tail=CDF), {"c.cdf": "100 nan\n200 1\n"}, None,
         "workload[0].cdf = 'c.cdf': line 1, column 2 (cumulative probability) = 'nan'; allowed: a probability within [0, 1]"),
    Case("cdf-zero-mean", "CDF: every size 0", RUN, sc(tail=CDF), {"c.cdf": "0 0\n0 1\n"}, None,
         "workload[0].cdf = 'c.cdf': mean flow size 0 bytes; allowed: a CDF whose mean is >= 1 byte"),
    Case("cdf-one-point", "CDF: one point", RUN, sc(tail=CDF), {"c.cdf": "100 1\n"}, None,
         "workload[0].cdf = 'c.cdf': 1 point(s); a CDF needs >= 2 lines 'bytes cumulative_probability' ending at probability 1"),
    Case("cdf-garbage", "CDF: a line that is not two numbers", RUN, sc(tail=CDF), {"c.cdf": "100 0.5\nlots\n200 1\n"}, None,
         "workload[0].cdf = 'c.cdf': line 2 is 'lots'; expected 'bytes cumulative_probability'"),
    Case("cdf-name", "CDF: a misspelt bundled name", RUN, sc(tail=CDF.replace("c.cdf", "websearh")), {}, None,
         "workload[0].cdf = 'websearh': not a bundled CDF (websearch, datamining, hadoop) nor a readable file (did you mean 'websearch'?)"),
    Case("cbr-stop-before-start", "CBR: stop before start", RUN, sc(tail=cbr("src = 0\ndst = 1\nrate_gbps = 1\nstart_ms = 1\nstop_ms = 0.5\n")), {}, None,
         'workload[0].flows[0].stop_ms = 0.5: before start_ms = 1.0; allowed: >= start_ms'),
    Case("cbr-rate-above-link", "CBR: rate above the link", RUN, sc(tail=cbr("src = 0\ndst = 1\nrate_gbps = 100\nstop_ms = 1\n")), {}, None,
         "workload[0].flows[0].rate_gbps = 100.0: above the host link (10.0 Gbps); allowed: 0 < rate_gbps <= 10.0 (or above_link_rate = true: the excess queues in the sender's NIC)"),
    Case("cbr-self", "CBR: a flow to itself", RUN, sc(tail=cbr("src = 1\ndst = 1\nrate_gbps = 1\nstop_ms = 1\n")), {}, None,
         'workload[0].flows[0]: src = dst = 1; allowed: two different hosts'),
    Case("cbr-host-range", "CBR: host out of range", RUN, sc(tail=cbr("src = 0\ndst = 4\nrate_gbps = 1\nstop_ms = 1\n")), {}, None,
         'workload[0].flows[0].dst = 4: no such host; allowed: 0..3'),
    Case("incast-fan-in", "incast: fan-in above the responders (star)", RUN, sc(tail='[[workload]]\nkind = "incast"\nrequest_bytes = 10000\nfan_in = 10\nresponders = "any"\n'), {}, None,
         "workload[0].fan_in = 10: a requester has 3 possible responders (every other host, responders = 'any'); allowed: 1..3"),
    Case("incast-fan-in-leaf", "incast: fan-in above the other leaf's servers", RUN,
  sc(topo='kind = "leaf_spine"\nleaves = 2\nservers_per_leaf = 4', tail='[[workload]]\nkind = "incast"\nrequest_bytes = 10000\nfan_in = 5\n'), {}, None,
         "workload[0].fan_in = 5: a requester has 4 possible responders (the hosts of the other leaves, responders = 'other_leaf'); allowed: 1..4"),
    Case("incast-requester", "incast: requester out of range", RUN, sc(tail='[[workload]]\nkind = "incast"\nrequest_bytes = 10000\nfan_in = 2\nrequesters = [7]\n'), {}, None,
         'workload[0].requesters: host 7 does not exist; allowed: 0..3'),
    Case("memory-topology", "10 million servers per leaf", RUN,
  sc(topo='kind = "leaf_spine"\nleaves = 2\nservers_per_leaf = 10000000'), {}, LIMIT_8GB,
         "scenario 's': needs about 10.3 GiB of memory (estimate: 20,000,000 hosts, 20,000,008 switch ports, 0 flows expected from load x horizon, 0 packets in flight, 80 sample rows); the limit is 7.5 GiB (available memory, or $SHAREBUF_MEMORY_LIMIT_BYTES); allowed: a smaller topology, a shorter max_ms / arrivals_until_ms, a lower load, or coarser output sampling"),
    Case("memory-horizon", "a 10^7 ms horizon of Poisson arrivals", RUN,
  sc(tail='[[workload]]\nkind = "poisson"\nload = 0.5\n').replace("max_ms = 2", "max_ms = 1e7"), {}, LIMIT_8GB,
         "scenario 's': needs about 10.9 GiB of memory (estimate: 4 hosts, 4 switch ports, 14,609,439 flows expected from load x horizon, 293 packets in flight, 100,000,000 sample rows); the limit is 7.5 GiB (available memory, or $SHAREBUF_MEMORY_LIMIT_BYTES); allowed: a smaller topology, a shorter max_ms / arrivals_until_ms, a lower load, or coarser output sampling"),
    Case("sweep-grid-value", "sweep: a bad grid value", ["sweep", "s.toml", "--grid", "topology.hosts=4,1", "--out", "out", "--jobs", "1", "--quiet"], sc(), {}, None,
         "sweep point {'topology.hosts': 1} seed 1: topology.hosts = 1: Input should be greater than or equal to 2"),
    Case("sweep-grid-key", "sweep: a misspelt grid key", ["sweep", "s.toml", "--grid", "switch.bufer_bytes=1,2", "--out", "out", "--jobs", "1", "--quiet"], sc(), {}, None,
         "sweep point {'switch.bufer_bytes': 1} seed 1: switch: unknown key 'bufer_bytes' (did you mean 'buffer_bytes'?); allowed: bm, buffer_accounting, buffer_bytes, buffer_kb_per_port_per_gbps, device_queue_packets, drr_quantum_bytes, drr_weights, ecn_k_bytes, int_stamp, int_tx_bytes, lossless_priorities, pfc_alpha_ingress, pfc_headroom_bytes, pfc_xon_bytes, pfc_xon_offset_bytes, queues_per_port, red_kmax_bytes, red_kmin_bytes, red_pmax, scheduler, spine_buffer"),
    Case("sweep-memory", "sweep: one point too large", ["sweep", "s.toml", "--grid", "topology.hosts=4,100000000", "--out", "out", "--jobs", "1", "--quiet"], sc(), {}, LIMIT_8GB,
         "sweep point {'topology.hosts': 100000000, 'seed': 1}: needs about 44.5 GiB of memory (estimate: 100,000,000 hosts, 100,000,000 switch ports, 0 flows expected from load x horizon, 0 packets in flight, 20 sample rows); the limit is 7.5 GiB (available memory, or $SHAREBUF_MEMORY_LIMIT_BYTES); allowed: a smaller topology, a shorter max_ms / arrivals_until_ms, a lower load, or coarser output sampling"),
    Case("cli-seed", "--seed below 0", ["run", "s.toml", "--out", "out", "--seed", "-1"], sc(), {}, None,
         "seed override: seed = -1: Input should be greater than or equal to 0"),
    Case("cli-int", "--seed not an integer", ["run", "s.toml", "--out", "out", "--seed", "abc"], sc(), {}, None,
         "argument --seed: invalid int value: 'abc' (see: sharebuf run --help)"),
    Case("cli-option", "an unknown option", ["run", "s.toml", "--out", "out", "--sed", "1"], sc(), {}, None,
         "unrecognized arguments: --sed 1 (see: sharebuf --help)"),
    Case("cli-jobs", "--jobs below 1", ["sweep", "s.toml", "--seeds", "1,2", "--jobs", "-1", "--out", "out"], sc(), {}, None,
         "--jobs -1: allowed: an integer >= 1 (default: all cores)"),
    Case("cli-scale", "repro: an unknown --scale", ["repro", "abm-fig7", "--scale", "huge", "--out", "out"], None, {}, None,
         "argument --scale: invalid choice: 'huge' (choose from 'tiny', 'quick', 'full') (see: sharebuf repro --help)"),
    Case("repro-id", "repro: an unknown figure id", ["repro", "abm-fig77", "--out", "out"], None, {}, None,
         "repro: figure id 'abm-fig77' is not known; `sharebuf repro list` lists 28: fb-fig2, fb-fig3, fb-fig4, fb-fig5, fb-fig7, fb-fig8, fb-fig9, fb-fig10b, fb-fig11, fb-pisa, fab-fig2, fab-fig3, fab-hw, abm-fig3, abm-fig4, abm-fig5, abm-fig6, abm-fig7, abm-fig8, abm-fig9, abm-fig10, abm-fig11, abm-fig12, cbm-fig1, bshare-fig2, bshare-fig3, bshare-fig4, bshare-fig5"),
    Case("repro-path-id", "repro: a path as figure id", ["repro", "../../etc/passwd", "--out", "out"], None, {}, None,
         "repro: figure id '../../etc/passwd' is not known; `sharebuf repro list` lists 28: fb-fig2, fb-fig3, fb-fig4, fb-fig5, fb-fig7, fb-fig8, fb-fig9, fb-fig10b, fb-fig11, fb-pisa, fab-fig2, fab-fig3, fab-hw, abm-fig3, abm-fig4, abm-fig5, abm-fig6, abm-fig7, abm-fig8, abm-fig9, abm-fig10, abm-fig11, abm-fig12, cbm-fig1, bshare-fig2, bshare-fig3, bshare-fig4, bshare-fig5"),
]

def _setup(case: Case, d: Path) -> None:
    if case.scenario is not None:
        (d / "s.toml").write_text(case.scenario)
    for name, content in case.files.items():
        (d / name).write_bytes(content if isinstance(content, bytes) else content.encode())


def _listing(d: Path) -> set:
    return {str(p.relative_to(d)) for p in d.rglob("*")}


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_malformed_input_is_refused(case, tmp_path, monkeypatch, capsys):
    _setup(case, tmp_path)
    before = _listing(tmp_path)
    monkeypatch.chdir(tmp_path)
    for k, v in (case.env or {}).items():
        monkeypatch.setenv(k, v)
    try:
        rc = main(list(case.argv))
    except SystemExit as e:  # argparse's own errors
        rc = e.code
    err = capsys.readouterr().err
    assert (rc, err) == (2, f"error: {case.message}\n")
    assert _listing(tmp_path) == before, "nothing may be written"
    if case.argv == RUN:  # the Python API says the same
        with pytest.raises(sharebuf.ScenarioError) as e:
            sharebuf.run("s.toml", out="out", quiet=True)
        assert str(e.value) == case.message
        assert _listing(tmp_path) == before


E2E = ["flows-nan", "cdf-zero-mean", "memory-topology", "key-unknown"]


@pytest.mark.parametrize("cid", E2E)
def test_malformed_input_end_to_end(cid, tmp_path):
    """A real `sharebuf` process: exit code 2, exactly one line on stderr, no traceback, nothing written."""
    case = next(c for c in CASES if c.id == cid)
    _setup(case, tmp_path)
    before = _listing(tmp_path)
    env = {**os.environ, **(case.env or {})}
    r = subprocess.run([sys.executable, "-m", "sharebuf", *case.argv], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2
    assert r.stderr == f"error: {case.message}\n" and "Traceback" not in r.stderr
    assert _listing(tmp_path) == before


def test_table_covers_every_kind_of_input():
    """The table keeps at least one case of each kind the issue lists."""
    ids = {c.id for c in CASES}
    for needed in ("flows-nan", "flows-inf", "flows-empty-cell", "flows-negative", "flows-fraction", "flows-dup-id",
                   "flows-self", "flows-host-range", "cdf-not-monotone", "cdf-prob-above-1", "cdf-prob-negative",
                   "cdf-not-ending-1", "cbr-stop-before-start", "cbr-rate-above-link", "incast-fan-in", "key-type",
                   "key-range", "key-unknown", "memory-topology", "memory-horizon"):
        assert needed in ids
    assert len(ids) == len(CASES), "case ids are unique"


def test_unsorted_start_times_are_fine(tmp_path):
    """Unsorted start times are not an error: flows keep the file order and start when they say."""
    (tmp_path / "f.csv").write_text(H + "0,0,1,1000,0.0005\n1,2,3,1000,0\n")
    (tmp_path / "s.toml").write_text(sc(tail=FLOWS))
    res = sharebuf.run(tmp_path / "s.toml", quiet=True)
    assert list(res.flows.start_s) == [0.0005, 0.0]
    assert res.summary["flows"]["finished"] == 2


# ----------------------------------------------------------------------------- docs/reliability.md
BEGIN, END = "<!-- BEGIN malformed-inputs (generated by tests/python/test_reliability.py) -->", "<!-- END malformed-inputs -->"


def _cell(s: str) -> str:
    return s.replace("|", "\\|").replace("\n", "<br>")


def render_table() -> str:
    rows = ["| case | input | command | message (after `error: `) |", "|---|---|---|---|"]
    for c in CASES:
        shown = "; ".join(f"`{n}`: " + (repr(v) if isinstance(v, bytes) else f"`{_cell(v.strip()) or '(empty)'}`") for n, v in c.files.items())
        what = c.what + (f" ({shown})" if shown else "")
        cmd = "sharebuf " + " ".join(c.argv) + "".join(f" [{k}={v}]" for k, v in (c.env or {}).items())
        rows.append(f"| {c.id} | {_cell(what)} | `{cmd}` | {_cell(c.message)} |")
    return "\n".join([BEGIN, *rows, END])


def _doc_with_table(text: str) -> str:
    a, b = text.index(BEGIN), text.index(END) + len(END)
    return text[:a] + render_table() + text[b:]


def test_reliability_doc_is_current():
    text = DOC.read_text()
    assert _doc_with_table(text) == text, "docs/reliability.md is stale: run `python tests/python/test_reliability.py`"


if __name__ == "__main__":
    DOC.write_text(_doc_with_table(DOC.read_text()))
    print(f"wrote {DOC}")
