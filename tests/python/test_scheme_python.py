"""Issue #11 item 5: buffer-management schemes written in Python (docs/schemes/python.md).
Must-show 4: the Python DT example equals the built-in `dt` exactly on an incast run with drops.
"""

import tomllib
from pathlib import Path

import pytest

import sharebuf
from conftest import EXAMPLES, star
from sharebuf import PushOut, ScenarioError, SchemeError

DTPY = EXAMPLES / "schemes" / "dtpy.toml"


def _incast(bm):
    d = tomllib.loads(DTPY.read_text())
    d["switch"]["bm"] = dict(bm)
    return d


def _same(a, b):
    assert a.flows.equals(b.flows)
    assert a.buffer.equals(b.buffer)
    assert a.summary["drops"] == b.summary["drops"]
    assert a.summary["bytes"] == b.summary["bytes"]


def test_python_dt_equals_builtin_dt_on_incast_with_drops():
    """Must-show 4: examples/schemes/dtpy.py (per-queue α [1.0, 0.5], data in queue 1) run from
    its TOML (module found next to the scenario) gives the built-in dt's flow table, buffer
    samples and drop counts exactly; the run drops, and α matters (dt with α = 1 for the data
    queue drops differently), so the comparison can fail."""
    py = sharebuf.run(DTPY)
    rs = sharebuf.run(_incast({"scheme": "dt", "alpha": [1.0, 0.5]}))
    print("drops", py.summary["drops"], "flows", len(py.flows))
    assert py.summary["drops"]["bm_threshold"] > 100
    assert py.flows.end_s.notna().all()
    _same(py, rs)
    other = sharebuf.run(_incast({"scheme": "dt", "alpha": [1.0, 1.0]}))
    assert other.summary["drops"] != py.summary["drops"]


def test_schemes_argument_runs_a_class_by_name():
    import importlib.util

    spec = importlib.util.spec_from_file_location("dtpy_t", EXAMPLES / "schemes" / "dtpy.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    a = sharebuf.run(_incast({"scheme": "mydt", "alpha": [1.0, 0.5]}), schemes={"mydt": mod.DT})
    b = sharebuf.run(_incast({"scheme": "dt", "alpha": [1.0, 0.5]}))
    _same(a, b)
    with pytest.raises(ScenarioError, match="'dt' is a built-in scheme name"):
        sharebuf.run(_incast({"scheme": "dt"}), schemes={"dt": mod.DT})


class PyLqd:
    """LQD written in Python with PushOut: must equal the built-in `lqd` (ties: own queue, then
    the lowest index)."""

    def __init__(self, ctx):
        self.n = ctx.n_ports * ctx.n_queues
        self.nq = ctx.n_queues

    def admit(self, state, port, queue, pkt, now_s):
        if state.remaining_bytes >= pkt.size_bytes:
            return True
        own = port * self.nq + queue
        best, best_b = own, state.queue_bytes(port, queue) + pkt.size_bytes
        for i in range(self.n):
            b = state.queue_bytes(i // self.nq, i % self.nq)
            if b > best_b:
                best, best_b = i, b
        return False if best == own else PushOut(best // self.nq, best % self.nq)


def _two_ports(scheme):
    sc = star(hosts=6, buffer_bytes=300_000, nq=2, scheme=scheme)
    sc["max_ms"] = 3
    sc["output"] = {"buffer_sample_us": 10, "queue_sample_us": 10}
    flows = [{"src": s, "dst": 0, "rate_gbps": 10, "stop_ms": 3, "priority": s % 2} for s in (2, 3)]
    flows += [{"src": s, "dst": 1, "rate_gbps": 10, "start_ms": 1, "stop_ms": 3, "priority": s % 2} for s in (4, 5)]
    sc["workload"] = [{"kind": "cbr", "flows": flows}]
    return sc


def test_python_push_out_equals_builtin_lqd():
    a = sharebuf.run(_two_ports("pylqd"), schemes={"pylqd": PyLqd})
    b = sharebuf.run(_two_ports("lqd"))
    assert a.summary["drops"]["pushout"] > 100
    _same(a, b)
    assert a.queue_occupancy.equals(b.queue_occupancy)


class Hooks:
    """Keeps its own per-queue byte counts through on_enqueue / on_dequeue / on_evict and checks
    them against `state` at every admit (an exception would stop the run); counts ticks; sends
    ACKs (control packets) to queue 0 and data to queue 1 via classify."""

    tick_interval_s = 100e-6
    last = None

    def __init__(self, ctx, bound_s=50e-6):
        self.bound_s = bound_s
        self.nq = ctx.n_queues
        self.mine = [0] * (ctx.n_ports * ctx.n_queues)
        self.ticks = []
        self.classified = 0
        self.admits = 0
        self.dequeue_drops = 0
        self.evicted = 0
        Hooks.last = self

    def classify(self, state, port, pkt, default_queue, now_s):
        self.classified += 1
        return 0 if pkt.is_control else 1

    def admit(self, state, port, queue, pkt, now_s):
        self.admits += 1
        assert queue == (0 if pkt.is_control else 1)
        for i, b in enumerate(self.mine):
            if b != state.queue_bytes(i // self.nq, i % self.nq):
                raise AssertionError(f"queue {i}: mine {b} != state {state.queue_bytes(i // self.nq, i % self.nq)}")
        if state.remaining_bytes >= pkt.size_bytes:
            return True
        return PushOut(port, queue) if state.queue_pkts(port, queue) > 0 else False

    def on_enqueue(self, state, port, queue, pkt, now_s):
        self.mine[port * self.nq + queue] += pkt.size_bytes
        assert pkt.enq_time_s == now_s

    def on_dequeue(self, state, port, queue, pkt, now_s):
        self.mine[port * self.nq + queue] -= pkt.size_bytes
        if now_s - pkt.enq_time_s > self.bound_s:
            self.dequeue_drops += 1
            return False
        return True

    def on_evict(self, state, port, queue, pkt, now_s):
        self.evicted += 1
        self.mine[port * self.nq + queue] -= pkt.size_bytes

    def on_tick(self, state, now_s):
        self.ticks.append(now_s)


def test_optional_hooks_run_as_the_rust_trait_has_them():
    """Three 10 Gb/s CBR senders into one port for 5 ms, a 150 KB buffer: when full, the
    arrival pushes out its own queue's tail (on_evict), and a packet that waited more than
    50 µs is dropped at dequeue (on_dequeue returning False). The port still delivers at line
    rate (5 ms × 10 Gb/s = 6.25 MB, within 2%); the scheme's own byte counts kept through
    on_enqueue/on_dequeue/on_evict equal the switch's at every admission (checked inside admit:
    a mismatch would raise); the engine's push-out and dequeue-drop counters equal the hooks'
    counts; ticks come every 100 µs exactly; classify ran once per arrival and admit once more
    per push-out."""
    sc = star(hosts=4, buffer_bytes=150_000, nq=2, scheme="hooks")
    sc["max_ms"] = 5
    sc["workload"] = [{"kind": "cbr", "flows": [{"src": s, "dst": 0, "rate_gbps": 10, "stop_ms": 5} for s in (1, 2, 3)]}]
    res = sharebuf.run(sc, schemes={"hooks": Hooks})
    h = Hooks.last
    delivered = int(res.cbr.delivered_bytes.sum())
    print(f"delivered {delivered} B, pushouts {h.evicted}, dequeue drops {h.dequeue_drops}, ticks {len(h.ticks)}")
    assert delivered == pytest.approx(6.25e6, rel=0.02)
    assert res.summary["drops"]["pushout"] == h.evicted > 100
    assert res.summary["drops"]["bm_dequeue"] == h.dequeue_drops > 100
    assert res.summary["buffer"]["per_switch"]["switch0"]["peak_bytes"] <= 150_000
    n = len(h.ticks)
    assert n == 50  # ticks at 100 µs, ..., 5 ms (the horizon)
    assert h.ticks == pytest.approx([100e-6 * (k + 1) for k in range(n)], abs=1e-12)
    # classify once per arrival; admit once more after each push-out (the switch asks again).
    assert h.admits == h.classified + h.evicted and h.classified > 10_000


def test_an_exception_stops_the_run_names_class_hook_packet_and_writes_nothing(tmp_path):
    class Boom:
        def __init__(self, ctx):
            self.n = 0

        def admit(self, state, port, queue, pkt, now_s):
            self.n += 1
            if self.n == 50:
                return 1 / 0
            return True

    out = tmp_path / "run"
    with pytest.raises(SchemeError) as ei:
        sharebuf.run(_incast({"scheme": "boom"}), schemes={"boom": Boom}, out=out)
    msg = str(ei.value)
    print(msg)
    for part in ("Boom.admit", "ZeroDivisionError", "switch 0", "port ", "queue ", "flow ", "size "):
        assert part in msg, (part, msg)
    assert isinstance(ei.value.__cause__, ZeroDivisionError)
    assert not out.exists()


def test_a_bad_answer_is_an_error_too():
    class NoneAnswer:
        def __init__(self, ctx):
            pass

        def admit(self, state, port, queue, pkt, now_s):
            return None

    with pytest.raises(SchemeError, match=r"NoneAnswer\.admit raised RuntimeError: returned None; allowed: True"):
        sharebuf.run(_incast({"scheme": "x"}), schemes={"x": NoneAnswer})


def test_views_are_only_valid_during_the_call():
    kept = []

    class Keep:
        def __init__(self, ctx):
            pass

        def admit(self, state, port, queue, pkt, now_s):
            kept.append((state, pkt))
            return True

    sharebuf.run(_incast({"scheme": "k"}), schemes={"k": Keep})
    state, pkt = kept[-1]
    with pytest.raises(RuntimeError, match="only valid during the hook call"):
        state.remaining_bytes
    with pytest.raises(RuntimeError, match="only valid during the hook call"):
        pkt.size_bytes


def test_configuration_errors_name_the_key(tmp_path):
    with pytest.raises(ScenarioError, match=r"switch\.bm\.class: missing"):
        sharebuf.run(_incast({"scheme": "python"}))
    with pytest.raises(ScenarioError, match=r"switch\.bm\.class = 'nosuchmod_xyz:DT': no module 'nosuchmod_xyz'"):
        sharebuf.run(_incast({"scheme": "python", "class": "nosuchmod_xyz:DT"}))
    (tmp_path / "dtpy.py").write_text((EXAMPLES / "schemes" / "dtpy.py").read_text())

    def toml(cls, extra=""):
        text = DTPY.read_text().replace('class = "dtpy:DT"', f'class = "{cls}"').replace("alpha = [1.0, 0.5]", "alpha = [1.0, 0.5]" + extra)
        (tmp_path / "s.toml").write_text(text)
        return tmp_path / "s.toml"

    with pytest.raises(ScenarioError, match=r"switch\.bm\.class = 'dtpy': must be 'module:Class'"):
        sharebuf.run(toml("dtpy"))
    with pytest.raises(ScenarioError, match=r"switch\.bm\.class = 'dtpy:Nope': module 'dtpy' .* has no class 'Nope'; classes there: DT"):
        sharebuf.run(toml("dtpy:Nope"))
    with pytest.raises(ScenarioError, match=r"switch\.bm\.alfa = 0\.5: not a parameter of dtpy:DT .*allowed: alpha"):
        sharebuf.run(toml("dtpy:DT", "\nalfa = 0.5"))
    # The constructor refusing a value: a configuration error, the class's exception as cause.
    with pytest.raises(ScenarioError, match=r"switch\.bm: python scheme 'dtpy:DT': the constructor raised ValueError: alpha = -1\.0") as ei:
        sharebuf.run(_write(tmp_path, toml("dtpy:DT"), "alpha = [1.0, 0.5]", "alpha = -1.0"))
    assert isinstance(ei.value.__cause__, ValueError)
    # The module next to the scenario wins over sys.path; a sweep-style override keeps it
    # (the class is made absolute like other file inputs).
    _same(sharebuf.run(toml("dtpy:DT")), sharebuf.run(toml("dtpy:DT"), sets={"seed": 1}))
    with pytest.raises(ScenarioError, match=r"switch\.bm\.scheme = 'pythn': unknown scheme \(did you mean 'python'\?\); allowed: .*python"):
        sharebuf.run(_incast({"scheme": "pythn"}))
    # On sys.path (not next to the scenario): a module written to a directory put on sys.path.
    (tmp_path / "mymod_t11.py").write_text((EXAMPLES / "schemes" / "dtpy.py").read_text())
    import sys

    sys.path.insert(0, str(tmp_path))
    try:
        a = sharebuf.run(_incast({"scheme": "python", "class": "mymod_t11:DT", "alpha": [1.0, 0.5]}))
    finally:
        sys.path.remove(str(tmp_path))
    _same(a, sharebuf.run(_incast({"scheme": "dt", "alpha": [1.0, 0.5]})))


def _write(d, path, old, new):
    p = d / "edited.toml"
    p.write_text(path.read_text().replace(old, new))
    return p


def test_python_scheme_runs_are_deterministic():
    a = sharebuf.run(DTPY)
    b = sharebuf.run(DTPY)
    _same(a, b)


def test_the_scheme_module_is_part_of_the_run_key_and_the_resolved_scenario(tmp_path):
    """A sweep's content-addressed run key changes when the scheme's code changes (the module's
    SHA-256 is in the engine spec), and re-running the resolved scenario.toml (module by
    absolute path) reproduces the Parquet files byte for byte."""
    from sharebuf.sweep import run_key, scenario_dict

    (tmp_path / "dtpy.py").write_text((EXAMPLES / "schemes" / "dtpy.py").read_text())
    (tmp_path / "s.toml").write_text(DTPY.read_text())
    k1 = run_key(scenario_dict(tmp_path / "s.toml"))
    (tmp_path / "dtpy.py").write_text((EXAMPLES / "schemes" / "dtpy.py").read_text() + "\n# edited\n")
    k2 = run_key(scenario_dict(tmp_path / "s.toml"))
    assert k1 != k2
    sharebuf.run(tmp_path / "s.toml", out=tmp_path / "o1")
    assert f'class = "{tmp_path / "dtpy.py"}:DT"' in (tmp_path / "o1" / "scenario.toml").read_text()
    sharebuf.run(tmp_path / "o1" / "scenario.toml", out=tmp_path / "o2")
    for name in ("flows.parquet", "buffer.parquet"):
        assert (tmp_path / "o1" / name).read_bytes() == (tmp_path / "o2" / name).read_bytes()


def test_cli_prints_one_message_and_the_scheme_line(tmp_path, capsys):
    from sharebuf.cli import main

    (tmp_path / "dtpy.py").write_text("class DT:\n    def __init__(self, ctx, alpha=0.5):\n        pass\n"
                                      "    def admit(self, state, port, queue, pkt, now_s):\n        return pkt.nope\n")
    (tmp_path / "s.toml").write_text(DTPY.read_text())
    assert main(["run", str(tmp_path / "s.toml"), "--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert "error: python scheme 'dtpy:DT': DT.admit raised AttributeError" in err
    assert 'dtpy.py", line 5, in admit' in err
    assert not (tmp_path / "out").exists()
