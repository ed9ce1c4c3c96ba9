"""Run results: Arrow tables (flows, queries, buffer, queue occupancy, cbr), the summary,
and writing them to a directory atomically."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Dict, List, Optional

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from .classes import class_masks

PS = 1e-12
UNFINISHED = np.iinfo(np.uint64).max
#: Summary keys that measure the machine, not the simulation (excluded from determinism checks).
WALL_CLOCK_KEYS = ("wall_s", "events_per_s", "sim_s_per_wall_s", "delivered_data_pkts_per_wall_s", "provenance")


def _cols(raw: dict) -> Dict[str, np.ndarray]:
    return {k: np.frombuffer(buf, dtype=dt) for k, (dt, buf) in raw.items()}


def _pct(x: np.ndarray, q: float) -> Optional[float]:
    return float(np.percentile(x, q)) if len(x) else None


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
        wl = np.array(names, dtype=object)[f["workload"]] if n else np.array([], dtype=object)
        self.tables["flows"] = pa.table({
            "flow_id": pa.array(np.arange(n, dtype=np.int64)),
            "src": pa.array(f["src"].astype(np.int32)),
            "dst": pa.array(f["dst"].astype(np.int32)),
            "size_bytes": pa.array(f["size_bytes"].astype(np.int64)),
            "start_s": pa.array(start_s),
            "end_s": pa.array(end_s, mask=~done),
            "fct_s": pa.array(fct, mask=~done),
            "ideal_fct_s": pa.array(ideal),
            "slowdown": pa.array(slowdown, mask=~done),
            "priority": pa.array(f["priority"].astype(np.int8)),
            "workload": pa.array(wl, type=pa.string()),
            "query_id": pa.array(f["query_id"], mask=f["query_id"] < 0),
            "finished": pa.array(done),
            "retransmits": pa.array(f["retransmits"].astype(np.int32)),
            "timeouts": pa.array(f["timeouts"].astype(np.int32)),
            "received_bytes": pa.array(f["received_bytes"].astype(np.int64)),
            "ideal_fct_paper_s": pa.array(ideal_paper),
            "slowdown_paper": pa.array(slowdown_paper, mask=~done),
        })
        q = _cols(raw["queries"])
        qdone = q["end_ps"] != UNFINISHED
        qs = q["start_ps"] * PS
        qe = np.where(qdone, q["end_ps"], 0) * PS
        self.tables["queries"] = pa.table({
            "query_id": pa.array(np.arange(len(qs), dtype=np.int64)),
            "requester": pa.array(q["requester"].astype(np.int32)),
            "size_bytes": pa.array(q["size_bytes"].astype(np.int64)),
            "start_s": pa.array(qs),
            "end_s": pa.array(qe, mask=~qdone),
            "qct_s": pa.array(qe - qs, mask=~qdone),
            "finished": pa.array(qdone),
            "workload": pa.array(np.array(names, dtype=object)[q["workload"]] if len(qs) else np.array([], dtype=object), type=pa.string()),
        })
        b = _cols(raw["buffer"])
        self.tables["buffer"] = pa.table({
            "time_s": pa.array(b["time_ps"] * PS),
            "switch": pa.array(np.array(sw_names, dtype=object)[b["switch"]] if len(b["switch"]) else np.array([], dtype=object), type=pa.string()),
            "occupancy_bytes": pa.array(b["occupancy_bytes"].astype(np.int64)),
        })
        qo = _cols(raw["queue_occupancy"])
        if len(qo["time_ps"]):
            self.tables["queue_occupancy"] = pa.table({
                "time_s": pa.array(qo["time_ps"] * PS),
                "switch": pa.array(qo["switch"].astype(np.int32)),
                "port": pa.array(qo["port"].astype(np.int32)),
                "queue": pa.array(qo["queue"].astype(np.int32)),
                "bytes": pa.array(qo["bytes"].astype(np.int64)),
            })
        c = _cols(raw["cbr"])
        if len(c["src"]):
            self.tables["cbr"] = pa.table({
                "src": pa.array(c["src"].astype(np.int32)),
                "dst": pa.array(c["dst"].astype(np.int32)),
                "sent_bytes": pa.array(c["sent_bytes"].astype(np.int64)),
                "delivered_bytes": pa.array(c["delivered_bytes"].astype(np.int64)),
                "workload": pa.array(np.array(names, dtype=object)[c["workload"]], type=pa.string()),
            })
        self.summary = self._summary(raw, seed, f, done, slowdown, slowdown_paper, wl, qdone, qe - qs, b, sw_names)

    def _summary(self, raw, seed, f, done, slowdown, slowdown_paper, wl, qdone, qct, b, sw_names) -> dict:
        from . import __version__

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
            by_class[name] = {"flows": int(cm.sum()), "finished": int(m.sum()), "p50": _pct(s, 50), "p99": _pct(s, 99)}
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
    def cbr(self):
        return self._df("cbr")

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
                pq.write_table(t, tmp / f"{name}.parquet", compression="zstd")
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
