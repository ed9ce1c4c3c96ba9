"""Run results: Arrow tables (flows, queries, buffer, queue occupancy, cbr), the summary,
and writing them to a directory atomically."""

from __future__ import annotations

import json
import math
import os
import shutil
import tempfile
from pathlib import Path
from typing import Dict, List, Optional

import numpy as np
import pyarrow as pa

from .classes import class_masks

PS = 1e-12
UNFINISHED = np.iinfo(np.uint64).max
#: Summary keys that measure the machine, not the simulation (excluded from determinism checks).
WALL_CLOCK_KEYS = ("wall_s", "cpu_s", "events_per_s", "sim_s_per_wall_s", "delivered_data_pkts_per_wall_s", "provenance")


def _cols(raw: dict) -> Dict[str, np.ndarray]:
    return {k: np.frombuffer(buf, dtype=dt) for k, (dt, buf) in raw.items()}


def _arr(a: np.ndarray, mask: Optional[np.ndarray] = None) -> pa.Array:
    """A numpy column as an Arrow array (nulls where ``mask``), built from its buffers:
    ``pa.array`` would import pandas (~0.7 s of CPU) on every run."""
    a = np.ascontiguousarray(a)
    valid, nulls = None, 0
    if mask is not None and mask.any():
        valid, nulls = pa.py_buffer(np.packbits(~mask, bitorder="little")), int(mask.sum())
    if a.dtype == np.bool_:
        return pa.Array.from_buffers(pa.bool_(), len(a), [valid, pa.py_buffer(np.packbits(a, bitorder="little"))], null_count=nulls)
    return pa.Array.from_buffers(pa.from_numpy_dtype(a.dtype), len(a), [valid, pa.py_buffer(a)], null_count=nulls)


def _strs(names, index: np.ndarray) -> pa.Array:
    """Strings ``names[index]`` (workload and switch names) as an Arrow string array, from
    numpy buffers (``take`` would import pyarrow.compute, ~0.1 s)."""
    enc = [str(x).encode() for x in names]
    lens = np.array([len(e) for e in enc] + [0], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(lens)[:-1]])
    chars = np.frombuffer(b"".join(enc) or b"\0", dtype=np.uint8)
    idx = np.asarray(index, dtype=np.int64)
    row_lens = lens[idx]
    offsets = np.zeros(len(idx) + 1, dtype=np.int64)
    np.cumsum(row_lens, out=offsets[1:])
    if offsets[-1] >= 2**31:
        raise ValueError("string column over 2 GiB")
    # byte j of the column comes from chars[starts[row] + (j - offsets[row])]
    src = np.arange(offsets[-1], dtype=np.int64) + np.repeat(starts[idx] - offsets[:-1], row_lens)
    data = chars[src] if len(src) else np.zeros(1, dtype=np.uint8)
    return pa.Array.from_buffers(pa.string(), len(idx), [None, pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(data)])


def write_parquet(table: pa.Table, path) -> None:
    """``pyarrow.parquet.write_table(table, path, compression="zstd")``, the same bytes, without
    importing ``pyarrow.parquet``: that module imports ``pyarrow.fs`` and with it ``ssl`` and
    the cloud filesystems (~0.03 s at start-up; issue 10). The writer underneath, given the
    settings ``write_table`` gives it (pyarrow 12+); tests/python/test_startup.py compares the
    bytes. Should that private class change, the public function is used."""
    try:
        from pyarrow._parquet import ParquetWriter

        w = ParquetWriter(str(path), table.schema, version="2.6", compression="zstd", use_dictionary=True, write_statistics=True,
                          use_deprecated_int96_timestamps=False, writer_engine_version="V2", data_page_version="1.0",
                          use_compliant_nested_type=True, store_schema=True)
    except (ImportError, TypeError):
        import pyarrow.parquet as pq

        pq.write_table(table, path, compression="zstd")
        return
    try:
        w.write_table(table, row_group_size=None)
    finally:
        w.close()


_PFC_COLS = ("port", "node", "local", "pauses_sent", "resumes_sent", "pauses_received", "resumes_received", "paused_ps",
             "max_headroom_bytes", "headroom_limit_bytes")


def _pfc_summary(p: dict, switch_names, n_hosts: int) -> dict:
    """summary.json's ``pfc``: totals and one entry per port that sent or received a frame
    (``paused_us``: time its priorities were paused, summed over priorities)."""
    ports = []
    for row in p["ports"]:
        r = dict(zip(_PFC_COLS, (int(v) for v in row)))
        r["paused_us"] = r.pop("paused_ps") / 1e6
        ports.append(r)
    return {
        "lossless_drops": int(p["lossless_drops"]),
        "headroom_overflows": int(p["headroom_overflows"]),
        "pauses_sent": sum(r["pauses_sent"] for r in ports),
        "resumes_sent": sum(r["resumes_sent"] for r in ports),
        "pauses_received": sum(r["pauses_received"] for r in ports),
        "ports": ports,
    }


def _pct(x: np.ndarray, q: int) -> Optional[float]:
    """``np.percentile(x, q)`` (its default "linear" method), bit for bit, without its call of
    ``np.unique``, which imports ``numpy.ma`` (~0.03 s at start-up; issue 10). As numpy: the
    virtual index ``(n - 1) q / 100`` between the order statistics ``a`` and ``b`` found by a
    partition, then ``a + (b - a) g``, or ``b - (b - a)(1 - g)`` when ``g >= 0.5``; NaN if any."""
    n = len(x)
    if not n:
        return None
    v = (n - 1) * (q / 100)  # numpy: (n - 1) * true_divide(q, 100), in float64
    lo = math.floor(v)
    hi = lo + 1
    if v >= n - 1:
        lo = hi = n - 1
    part = np.partition(np.asarray(x, dtype=np.float64), sorted({0, lo, hi, n - 1}))
    if math.isnan(part[n - 1]):
        return math.nan
    a, b = float(part[lo]), float(part[hi])
    g = v - (lo if v < n - 1 else -1)  # numpy's gamma: past the end its index is -1
    d = b - a
    return b - d * (1 - g) if g >= 0.5 else a + d * g



#: lqd_trace.parquet's columns and their types (None: as the engine gives them, float64);
#: docs/outputs.md describes each.
LQD_TRACE_COLUMNS = [("switch", np.int32), ("port", np.int32), ("queue", np.int32), ("flow", np.int64),
                     ("flow_key", np.int64), ("seq", np.int64), ("occurrence", np.int64), ("size_bytes", np.int64),
                     ("flags", np.int32), ("t_arrival_ps", np.int64), ("t_fate_ps", np.int64), ("q_bytes", np.int64),
                     ("q_avg_bytes", None), ("occ_bytes", np.int64), ("occ_avg_bytes", None),
                     ("longest_bytes", np.int64), ("fate", np.int8)]

#: drops.parquet's ``kind`` values, by the packet's flag bits (engine ``packet::flags``).
DROP_KINDS = ["data", "ack", "syn", "syn_ack", "other"]
#: The engine's drop causes, in its order (``DropCause``), as summary.json names them.
DROP_CAUSES = ["bm_threshold", "buffer_full", "bm_dequeue", "pushout", "nic_qdisc"]
_SYN, _ACK, _DATA, _CBR = 1, 2, 4, 128


def drop_kinds(flags: np.ndarray) -> np.ndarray:
    """Index into :data:`DROP_KINDS` per packet: TCP/RoCE data; a pure ACK (RoCE's ACK, NACK
    and CNP too); SYN; SYN-ACK; anything else (constant-rate packets)."""
    f = flags.astype(np.int64)
    kind = np.full(len(f), 4, dtype=np.int64)
    kind[(f & _CBR == 0) & (f & _DATA != 0)] = 0
    ctl = (f & (_CBR | _DATA)) == 0
    kind[ctl & (f & _SYN == 0) & (f & _ACK != 0)] = 1
    kind[ctl & (f & _SYN != 0) & (f & _ACK == 0)] = 2
    kind[ctl & (f & _SYN != 0) & (f & _ACK != 0)] = 3
    return kind


def _drop_table(d: Dict[str, np.ndarray]) -> pa.Table:
    """drops.parquet (``[output] drop_log``): one row per dropped packet, in drop order."""
    at_host = d["at_host"].astype(bool)
    return pa.table({
        "time_ns": _arr(d["time_ps"] / 1000.0),
        "node_kind": _strs(["switch", "host"], at_host.astype(np.int64)),
        "node": _arr(d["node"].astype(np.int32)),
        "port": _arr(d["port"].astype(np.int32)),
        "queue": _arr(d["queue"].astype(np.int32)),
        "flow_id": _arr(d["flow"].astype(np.int64)),
        "kind": _strs(DROP_KINDS, drop_kinds(d["flags"])),
        "seq": _arr(d["seq"].astype(np.int64)),
        "size_bytes": _arr(d["size_bytes"].astype(np.int64)),
        "cause": _strs(DROP_CAUSES, d["cause"].astype(np.int64)),
        "queue_bytes": _arr(d["queue_bytes"].astype(np.int64)),
        "switch_occupied_bytes": _arr(d["occupied_bytes"].astype(np.int64), mask=at_host),
    })


#: tcp_trace.parquet's ``event`` values, in the engine's order (``metrics::TRACE_*``).
TRACE_EVENTS = ["send", "ack", "timeout", "syn_ack"]
#: tcp_trace.parquet's ``state`` values, in the engine's order (``metrics::STATE_*``).
TRACE_STATES = ["open", "disorder", "cwr", "recovery", "loss", "syn_sent"]


def _tcp_trace_table(d: Dict[str, np.ndarray]) -> pa.Table:
    """tcp_trace.parquet (``[output] tcp_trace_flows`` / ``tcp_trace_min_size_bytes``): one row
    per sender event of a traced TCP flow, in time order."""
    ss_inf = d["ssthresh_bytes"] == UNFINISHED
    return pa.table({
        "time_ns": _arr(d["time_ps"] / 1000.0),
        "flow_id": _arr(d["flow"].astype(np.int64)),
        "event": _strs(TRACE_EVENTS, d["event"].astype(np.int64)),
        "retx": _arr(d["retx"].astype(bool)),
        "seq": _arr(d["seq"].astype(np.int64)),
        "ece": _arr(d["ece"].astype(bool)),
        "cwnd_bytes": _arr(d["cwnd_bytes"].astype(np.int64)),
        "ssthresh_bytes": _arr(np.where(ss_inf, 0, d["ssthresh_bytes"]).astype(np.int64), mask=ss_inf),
        "in_flight_bytes": _arr(d["in_flight_bytes"].astype(np.int64)),
        "snd_una": _arr(d["snd_una"].astype(np.int64)),
        "snd_nxt": _arr(d["snd_nxt"].astype(np.int64)),
        "state": _strs(TRACE_STATES, d["state"].astype(np.int64)),
        "alpha": _arr(d["alpha"].astype(np.float64)),
    })


class Results:
    """What one run produced. Tables are pyarrow; ``.flows`` etc. give pandas DataFrames."""

    def __init__(self, raw: dict, *, scenario_name: str, seed: int):
        self.scenario_name = scenario_name
        self.tables: Dict[str, pa.Table] = {}
        names = list(raw["workload_names"])
        sw_names = list(raw["switch_names"])
        f = _cols(raw["flows"])
        n = len(f["src"])
        done = f["end_ps"] != UNFINISHED
        start_s = f["start_ps"] * PS
        end_s = np.where(done, f["end_ps"], 0) * PS
        # Durations in integer picoseconds first, so a flow that reaches its bound has slowdown 1 exactly.
        fct_ps = np.where(done, f["end_ps"] - f["start_ps"], 0).astype(np.float64)
        fct = fct_ps * PS
        ideal = f["ideal_ps"] * PS
        ideal_paper = f["ideal_paper_ps"] * PS
        slowdown = np.divide(fct_ps, f["ideal_ps"], out=np.zeros(n), where=f["ideal_ps"] > 0)
        slowdown_paper = np.divide(fct_ps, f["ideal_paper_ps"], out=np.zeros(n), where=f["ideal_paper_ps"] > 0)
        wl = np.array(names, dtype=object)[f["workload"]] if n else np.array([], dtype=object)  # for the summary
        self.tables["flows"] = pa.table({
            "flow_id": _arr(np.arange(n, dtype=np.int64)),
            "src": _arr(f["src"].astype(np.int32)),
            "dst": _arr(f["dst"].astype(np.int32)),
            "size_bytes": _arr(f["size_bytes"].astype(np.int64)),
            "start_s": _arr(start_s),
            "end_s": _arr(end_s, mask=~done),
            "fct_s": _arr(fct, mask=~done),
            "ideal_fct_s": _arr(ideal),
            "slowdown": _arr(slowdown, mask=~done),
            "priority": _arr(f["priority"].astype(np.int8)),
            "workload": _strs(names, f["workload"]),
            "query_id": _arr(f["query_id"], mask=f["query_id"] < 0),
            "finished": _arr(done),
            "retransmits": _arr(f["retransmits"].astype(np.int32)),
            "timeouts": _arr(f["timeouts"].astype(np.int32)),
            "received_bytes": _arr(f["received_bytes"].astype(np.int64)),
            "ideal_fct_paper_s": _arr(ideal_paper),
            "slowdown_paper": _arr(slowdown_paper, mask=~done),
        })
        q = _cols(raw["queries"])
        qdone = q["end_ps"] != UNFINISHED
        qs = q["start_ps"] * PS
        qe = np.where(qdone, q["end_ps"], 0) * PS
        self.tables["queries"] = pa.table({
            "query_id": _arr(np.arange(len(qs), dtype=np.int64)),
            "requester": _arr(q["requester"].astype(np.int32)),
            "size_bytes": _arr(q["size_bytes"].astype(np.int64)),
            "start_s": _arr(qs),
            "end_s": _arr(qe, mask=~qdone),
            "qct_s": _arr(qe - qs, mask=~qdone),
            "finished": _arr(qdone),
            "workload": _strs(names, q["workload"]),
        })
        b = _cols(raw["buffer"])
        self.tables["buffer"] = pa.table({
            "time_s": _arr(b["time_ps"] * PS),
            "switch": _strs(sw_names, b["switch"]),
            "occupancy_bytes": _arr(b["occupancy_bytes"].astype(np.int64)),
        })
        qo = _cols(raw["queue_occupancy"])
        if len(qo["time_ps"]):
            self.tables["queue_occupancy"] = pa.table({
                "time_s": _arr(qo["time_ps"] * PS),
                "switch": _arr(qo["switch"].astype(np.int32)),
                "port": _arr(qo["port"].astype(np.int32)),
                "queue": _arr(qo["queue"].astype(np.int32)),
                "bytes": _arr(qo["bytes"].astype(np.int64)),
            })
        if "drops" in raw:  # [output] drop_log = true: written even with no drop
            self.tables["drops"] = _drop_table(_cols(raw["drops"]))
        if "tcp_trace" in raw:  # a flow is traced: written even with no row
            self.tables["tcp_trace"] = _tcp_trace_table(_cols(raw["tcp_trace"]))
        c = _cols(raw["cbr"])
        if len(c["src"]):
            self.tables["cbr"] = pa.table({
                "src": _arr(c["src"].astype(np.int32)),
                "dst": _arr(c["dst"].astype(np.int32)),
                "sent_bytes": _arr(c["sent_bytes"].astype(np.int64)),
                "delivered_bytes": _arr(c["delivered_bytes"].astype(np.int64)),
                "workload": _strs(names, c["workload"]),
            })
        if raw.get("pfc") is not None:  # lossless priorities: one row per port that sent or received a PFC frame
            rows = raw["pfc"]["ports"]
            cols = {c: np.array([r[i] for r in rows], dtype=np.int64) for i, c in enumerate(_PFC_COLS)}
            self.tables["pfc"] = pa.table({c: _arr(v) for c, v in cols.items()})
        if "lqd_trace" in raw:  # [switch.bm] scheme = "lqd", trace = true (docs/schemes/credence.md 5.2)
            t = _cols(raw["lqd_trace"])
            self.tables["lqd_trace"] = pa.table({name: _arr(t[name] if dt is None else t[name].astype(dt))
                                                 for name, dt in LQD_TRACE_COLUMNS})
        self.summary = self._summary(raw, seed, f, done, slowdown, slowdown_paper, wl, qdone, qe - qs, b, sw_names)
        if raw.get("scheme_stats"):  # the scheme's own counters (credence), summed over switches
            self.summary["scheme_stats"] = {k: int(v) for k, v in raw["scheme_stats"]}
        if raw.get("roce") is not None:  # transport.kind = "roce": NACKs and CNPs that reached the senders
            self.summary["roce"] = {"nacks": int(raw["roce"]["nacks"]), "cnps": int(raw["roce"]["cnps"])}
        if raw.get("pfc") is not None:  # lossless priorities (docs/lossless.md): PFC per port
            self.summary["pfc"] = _pfc_summary(raw["pfc"], raw.get("switch_names") or [], int(raw["stats"].get("n_hosts", 0) or 0))

    def _summary(self, raw, seed, f, done, slowdown, slowdown_paper, wl, qdone, qct, b, sw_names) -> dict:
        from ._version import __version__

        st = raw["stats"]
        sim_s = st["end_ps"] * PS
        wall = max(st["wall_s"], 1e-9)
        slow, slow_paper = {}, {}
        for name in dict.fromkeys(wl.tolist()):
            m = (wl == name) & done
            for out, sd in ((slow, slowdown), (slow_paper, slowdown_paper)):
                s = sd[m]
                out[name] = {"flows": int((wl == name).sum()), "finished": int(m.sum()), "p50": _pct(s, 50), "p99": _pct(s, 99), "mean": float(s.mean()) if len(s) else None}
        by_class = {}
        for name, cm in class_masks(f["size_bytes"], f["query_id"] >= 0).items():
            m = cm & done
            s = slowdown[m]
            # % of the class that waited out a retransmission timeout: a p99 is a timeout once it is >= 1
            rto = 100.0 * float((f["timeouts"][cm] > 0).sum()) / int(cm.sum()) if cm.any() else None
            by_class[name] = {"flows": int(cm.sum()), "finished": int(m.sum()), "p50": _pct(s, 50), "p99": _pct(s, 99), "rto_pct": rto}
        buf = {}
        occ = b["occupancy_bytes"]
        for i, name in enumerate(sw_names):
            x = occ[b["switch"] == i].astype(np.float64)
            cap = raw["switch_buffer_bytes"][i]
            buf[name] = {"buffer_bytes": int(cap), "mean_bytes": float(x.mean()) if len(x) else None, "p99_bytes": _pct(x, 99),
                         "peak_bytes": int(raw["switch_peak_bytes"][i]), "final_bytes": int(raw["switch_final_bytes"][i])}
        xs = occ.astype(np.float64)
        drops = dict(st["drops_pkts"])
        return {
            "scenario": self.scenario_name,
            "seed": seed,
            "sharebuf_version": __version__,
            "events": st["events"],
            "wall_s": st["wall_s"],
            "sim_s": sim_s,
            "events_per_s": st["events"] / wall,
            "sim_s_per_wall_s": sim_s / wall,
            "delivered_data_pkts_per_wall_s": st["delivered_data_pkts"] / wall,
            "hit_max_time": st["hit_max_time"],
            "packets": {"sent": st["sent_pkts"], "delivered": st["delivered_pkts"], "delivered_data": st["delivered_data_pkts"],
                        "ecn_marked": st["ecn_marks"] + st["nic_ecn_marks"],
                        "ecn_marked_at_switches": st["ecn_marks"], "ecn_marked_at_nics": st["nic_ecn_marks"], "in_flight_at_end": st["in_flight_pkts"]},
            "bytes": {"sent": st["sent_bytes"], "delivered": st["delivered_bytes"], "dropped": sum(st["drops_bytes"].values()),
                      "in_flight_at_end": st["in_flight_bytes"]},
            "drops": drops,
            "drops_total": sum(drops.values()),
            "flows": {"total": int(len(done)), "started": int((f["start_ps"] <= st["end_ps"]).sum()), "finished": int(done.sum()),
                      "unfinished": int((~done).sum())},
            "slowdown": slow,
            "slowdown_by_class": by_class,
            "slowdown_paper": slow_paper,
            "queries": {"total": int(len(qdone)), "finished": int(qdone.sum()), "qct_p50_s": _pct(qct[qdone], 50), "qct_p99_s": _pct(qct[qdone], 99)},
            "buffer": {"mean_bytes": float(xs.mean()) if len(xs) else None, "p99_bytes": _pct(xs, 99), "per_switch": buf},
            "host_nic": {"peak_pkts": st["nic_peak_pkts"], "peak_bytes": st["nic_peak_bytes"]},
        }

    # pandas views -----------------------------------------------------------------
    def _df(self, name):
        t = self.tables.get(name)
        return None if t is None else t.to_pandas()

    @property
    def flows(self):
        return self._df("flows")

    @property
    def queries(self):
        return self._df("queries")

    @property
    def buffer(self):
        return self._df("buffer")

    @property
    def queue_occupancy(self):
        return self._df("queue_occupancy")

    @property
    def drops(self):
        """One row per dropped packet (``[output] drop_log = true``): see docs/outputs.md."""
        return self._df("drops")

    @property
    def tcp_trace(self):
        """One row per sender event of a traced TCP flow (``[output] tcp_trace_flows`` or
        ``tcp_trace_min_size_bytes``): see docs/outputs.md."""
        return self._df("tcp_trace")

    @property
    def cbr(self):
        return self._df("cbr")

    @property
    def lqd_trace(self):
        return self._df("lqd_trace")

    @property
    def pfc(self):
        """Per port PFC counters (lossless priorities only): see docs/outputs.md."""
        return self._df("pfc")

    def write(self, out_dir) -> Path:
        """Write every table as Parquet plus summary.json. The directory appears complete or
        not at all: files go to a temporary sibling that is renamed into place."""
        out = Path(out_dir)
        out.parent.mkdir(parents=True, exist_ok=True)
        remove_stale_partials(out.parent, out.name)
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.partial-{os.getpid()}-", dir=out.parent))
        try:
            meta = getattr(self, "parquet_metadata", None)
            for name, t in self.tables.items():
                if meta:  # where the table came from, so a copied-out file still says it
                    t = t.replace_schema_metadata({**(t.schema.metadata or {}), **meta})
                write_parquet(t, tmp / f"{name}.parquet")
            (tmp / "summary.json").write_text(json.dumps(self.summary, indent=2) + "\n")
            if getattr(self, "scenario", None) is not None:  # the scenario as resolved and run
                from .provenance import to_toml

                (tmp / "scenario.toml").write_text(to_toml(self.scenario))
            if out.exists():
                old = out.parent / f".{out.name}.old-{os.getpid()}"
                out.rename(old)
                tmp.rename(out)
                shutil.rmtree(old, ignore_errors=True)
            else:
                tmp.rename(out)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return out


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True


def remove_stale_partials(parent: Path, name: str = "*") -> List[Path]:
    """Remove the temporary directories ``.NAME.partial-PID-*`` that :meth:`Results.write` left
    in ``parent`` when its process was killed (SIGKILL: no cleanup ran); a directory whose
    process is still alive (a concurrent writer) is left alone. Returns what was removed."""
    removed = []
    for p in Path(parent).glob(f".{name}.partial-*"):
        pid = p.name.rsplit(".partial-", 1)[1].split("-", 1)[0]
        if p.is_dir() and (not pid.isdigit() or not _alive(int(pid))):
            shutil.rmtree(p, ignore_errors=True)
            removed.append(p)
    return removed
