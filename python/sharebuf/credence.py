"""Credence's predictor (docs/schemes/credence.md §2, §5.2–5.3): LQD traces, training a random
forest on them, exporting it as the arrays the engine walks per packet, and resolving the
scheme's file parameters (``model``, ``oracle_trace``) for the engine.

A trace is the ``lqd_trace.parquet`` of a run under ``[switch.bm] scheme = "lqd"`` with
``trace = true``: one row per arrival at a switch queue, with the four features Credence reads
(``FEATURES``) and the fate (0 sent, 1 pushed out, 2 refused; label = fate != 0).

Training needs scikit-learn (``pip install 'sharebuf[test]'`` or ``scikit-learn``); the rest does not.
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Dict, Iterable, Optional, Sequence, Tuple, Union

from .errors import ScenarioError

# numpy, pyarrow and scikit-learn are imported inside the functions: the command line builds its
# parser (``register``) from this module, and ``sharebuf --help`` stays fast (issue 10).

#: The predictor's features, in the order of ns3dc's trace and of the engine's feature row.
FEATURES = ("q_bytes", "q_avg_bytes", "occ_bytes", "occ_avg_bytes")
#: The format tag of an exported forest (the engine refuses anything else).
FOREST_FORMAT = "sharebuf-forest-1"
TRACE_FILE = "lqd_trace.parquet"


def _trace_path(p: Union[str, Path]) -> Path:
    p = Path(p)
    if p.is_dir():
        p = p / TRACE_FILE
    if not p.is_file():
        raise ScenarioError(f"trace '{p}': not found (a run directory of an lqd run with [switch.bm] trace = true, or its {TRACE_FILE})")
    return p


def load_trace(paths: Union[str, Path, Sequence[Union[str, Path]]]):
    """The rows of one or more traces (run directories or ``lqd_trace.parquet`` files) as one
    pandas DataFrame, with a ``trace`` column numbering the input."""
    import pandas as pd
    import pyarrow.parquet as pq

    if isinstance(paths, (str, Path)):
        paths = [paths]
    frames = []
    for i, p in enumerate(paths):
        df = pq.read_table(_trace_path(p)).to_pandas()
        missing = [c for c in (*FEATURES, "fate") if c not in df.columns]
        if missing:
            raise ScenarioError(f"trace '{p}': columns {missing} missing; not an lqd_trace.parquet")
        df["trace"] = i
        frames.append(df)
    return pd.concat(frames, ignore_index=True)


def eta(tn: int, fp: int, fn: int, n_ports: int) -> float:
    """The prediction error η of credence.md §1.3 (``trainLqd.py``'s ``errorinv`` inverted, with
    the switch's real N instead of the hard-coded 20): (TN + FP) / (TN − (N − 1)·FN); ∞ once
    (N − 1)·FN ≥ TN. Positive = "LQD drops"."""
    den = tn - (n_ports - 1) * fn
    return float("inf") if den <= 0 else (tn + fp) / den


def scores(y, pred, n_ports: Optional[int] = None) -> Dict[str, float]:
    """Accuracy, precision, recall (positive = drop), the confusion counts and η (if ``n_ports``)."""
    import numpy as np

    y = np.asarray(y, dtype=bool)
    pred = np.asarray(pred, dtype=bool)
    tp = int((y & pred).sum())
    tn = int((~y & ~pred).sum())
    fp = int((~y & pred).sum())
    fn = int((y & ~pred).sum())
    n = len(y)
    out = {"rows": n, "positives": int(y.sum()), "tp": tp, "tn": tn, "fp": fp, "fn": fn,
           "accuracy": (tp + tn) / n if n else float("nan"),
           "precision": tp / (tp + fp) if tp + fp else float("nan"),
           "recall": tp / (tp + fn) if tp + fn else float("nan")}
    if n_ports is not None:
        out["eta"] = eta(tn, fp, fn, n_ports)
    return out


def export_forest(rf) -> dict:
    """A fitted scikit-learn ``RandomForestClassifier`` (binary, classes 0/1) as the arrays the
    engine reads (``bm::credence::Forest``): per tree ``feature`` (−2 = leaf), ``threshold``,
    ``left``, ``right`` and ``value`` = the leaf's class fractions [P(accept), P(drop)],
    normalized as sklearn's ``predict_proba`` does."""
    import numpy as np

    classes = [int(c) for c in rf.classes_]
    if classes not in ([0, 1], [0], [1]):
        raise ValueError(f"export_forest: classes {classes}; a binary forest over labels 0/1 is needed")
    trees = []
    for est in rf.estimators_:
        t = est.tree_
        v = t.value[:, 0, :].astype(np.float64)
        if v.shape[1] == 1:  # a forest trained on one class only
            col = np.zeros((len(v), 2))
            col[:, classes[0]] = v[:, 0]
            v = col
        norm = v.sum(axis=1)
        norm[norm == 0] = 1.0
        v = v / norm[:, None]
        trees.append({"feature": t.feature.astype(int).tolist(), "threshold": t.threshold.astype(float).tolist(),
                      "left": t.children_left.astype(int).tolist(), "right": t.children_right.astype(int).tolist(),
                      "value": v.tolist()})
    return {"format": FOREST_FORMAT, "n_features": int(rf.n_features_in_), "features": list(FEATURES), "trees": trees}


def forest_predict(model: Union[dict, str, Path], x):
    """The engine's own forest walk (Rust, ``bm::credence::Forest``) on rows ``x`` (n × 4):
    True where it predicts "drop" (a numpy bool array)."""
    import numpy as np

    from . import _core

    text = json.dumps(model) if isinstance(model, dict) else Path(model).read_text()
    x = np.ascontiguousarray(np.asarray(x, dtype="<f8"))
    return np.frombuffer(bytes(_core.forest_predict(text, x.tobytes())), dtype=np.uint8).astype(bool)


def train(traces: Sequence[Union[str, Path]], *, test: Optional[Sequence[Union[str, Path]]] = None, trees: int = 4,
          depth: int = 4, test_fraction: float = 0.6, seed: int = 0, queues: Optional[Iterable[int]] = None,
          n_ports: Optional[int] = None, class_weight: Optional[str] = None) -> Tuple[dict, dict]:
    """Train ns3dc's forest (``RandomForestClassifier(max_depth=depth, n_estimators=trees)``,
    other settings sklearn's defaults, ``random_state=seed``) on the rows of ``traces``.
    Held out: the rows of ``test`` traces if given, else a ``test_fraction`` of the rows
    (ns3dc: 0.6, ``train_test_split`` with ``random_state=seed``). ``queues``: keep only the
    rows of these queue indices (ns3dc trains on every queue). ``n_ports``: N for η.
    ``class_weight``: None (ns3dc: every row weighs 1) or ``"balanced"`` (scikit-learn's: each
    class weighs rows / (2 · its rows), so LQD's rare drops count as much as its sends).
    Returns (model dict for the engine, report with the train and test scores)."""
    import numpy as np

    try:
        from sklearn.ensemble import RandomForestClassifier
        from sklearn.model_selection import train_test_split
    except ImportError:
        raise ScenarioError("train-predictor needs scikit-learn: pip install scikit-learn (or 'sharebuf[test]')") from None
    if trees < 1 or depth < 1:
        raise ScenarioError(f"trees = {trees}, depth = {depth}: both must be integers >= 1")
    if class_weight not in (None, "balanced"):
        raise ScenarioError(f"class_weight = {class_weight!r}: allowed: none (every row weighs 1) or balanced")
    if not 0 < test_fraction < 1:
        raise ScenarioError(f"test_fraction = {test_fraction}: allowed: 0 < test_fraction < 1")

    def xy(paths):
        df = load_trace(paths)
        if queues is not None:
            df = df[df["queue"].isin(list(queues))]
        return df[list(FEATURES)].to_numpy(dtype=np.float64), (df["fate"].to_numpy() != 0).astype(np.int64)

    x, y = xy(traces)
    if len(y) == 0:
        raise ScenarioError("train-predictor: the traces have no rows (after the queue filter)")
    if test:
        xt, yt = xy(test)
        xtr, ytr = x, y
    else:
        xtr, xt, ytr, yt = train_test_split(x, y, test_size=test_fraction, random_state=seed)
    rf = RandomForestClassifier(n_estimators=trees, max_depth=depth, random_state=seed, class_weight=class_weight)
    rf.fit(xtr, ytr)
    model = export_forest(rf)
    report = {"trees": trees, "depth": depth, "seed": seed, "class_weight": class_weight, "train": scores(ytr, rf.predict(xtr), n_ports),
              "test": scores(yt, rf.predict(xt), n_ports), "held_out": "traces" if test else f"{test_fraction:g} of the rows"}
    model["training"] = {k: v for k, v in report.items()}
    return model, report


def _json_safe(x):
    """NaN and ±∞ (an undefined precision, η = ∞) as null: the engine's JSON reader, like the
    JSON standard, has no NaN."""
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: _json_safe(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_json_safe(v) for v in x]
    return x


def write_model(model: dict, path: Union[str, Path]) -> None:
    """Write a forest (``export_forest``/``train``) as the JSON file ``[switch.bm] model`` reads;
    scores that are not finite (precision with no predicted drop, η = ∞) are written as null."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(_json_safe(model), allow_nan=False) + "\n")


def resolve_params(params: dict, base: Path) -> Tuple[dict, dict]:
    """``[switch.bm]`` of ``credence`` for the engine: ``model`` as an absolute path (relative
    paths are relative to the scenario file), ``oracle_trace`` read into ``oracle_drops`` (the
    arrivals the lqd run dropped: switch, flow_key, seq, occurrence). Returns (params, keys to
    add to the spec beside them: the files' sha256, so a changed file changes the spec hash)."""
    import numpy as np

    params = dict(params)
    extra = {}
    model = params.get("model")
    if isinstance(model, str):
        p = Path(model)
        p = p if p.is_absolute() else (base / p)
        if not p.is_file():
            raise ScenarioError(f"switch.bm.model = '{model}': file not found (looked at {p}); write one with `sharebuf train-predictor`")
        params["model"] = str(p.resolve())
        extra["model_sha256"] = hashlib.sha256(p.read_bytes()).hexdigest()
    trace = params.pop("oracle_trace", None)
    if trace is not None:
        if not isinstance(trace, str):
            raise ScenarioError(f"switch.bm.oracle_trace = {trace!r}: expected a path to an lqd run directory or its {TRACE_FILE}")
        p = Path(trace)
        p = p if p.is_absolute() else (base / p)
        try:
            path = _trace_path(p)
        except ScenarioError as e:
            raise ScenarioError(f"switch.bm.oracle_trace = '{trace}': {e}") from None
        import pyarrow.parquet as pq

        t = pq.read_table(path, columns=["switch", "flow_key", "seq", "occurrence", "fate"])
        fate = t.column("fate").to_numpy()
        keep = fate != 0
        params["oracle_drops"] = {c: t.column(c).to_numpy()[keep].astype(np.int64).tolist() for c in ("switch", "flow_key", "seq", "occurrence")}
        extra["oracle_trace_sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
    return params, extra


def cmd_train(args) -> int:
    """``sharebuf train-predictor TRACES... --out model.json``."""
    queues = None
    if args.queues:
        try:
            queues = [int(q) for q in args.queues.split(",")]
        except ValueError:
            raise ScenarioError(f"--queues {args.queues}: allowed: a comma list of queue indices, e.g. 1 or 0,1") from None
    if args.ports is not None and args.ports < 2:
        raise ScenarioError(f"--ports {args.ports}: allowed: the switch's port count, an integer >= 2")
    model, report = train(args.traces, test=args.test or None, trees=args.trees, depth=args.depth,
                          test_fraction=args.test_fraction, seed=args.seed, queues=queues, n_ports=args.ports,
                          class_weight=None if args.class_weight == "none" else args.class_weight)
    out = Path(args.out)
    write_model(model, out)
    for part in ("train", "test"):
        s = report[part]
        eta_s = f", eta {s['eta']:.3f}" if "eta" in s else ""
        print(f"{part}: {s['rows']} rows ({s['positives']} dropped by LQD): accuracy {s['accuracy']:.4f}, "
              f"precision {s['precision']:.4f}, recall {s['recall']:.4f}{eta_s}")
    print(f"wrote {out} ({args.trees} trees, depth {args.depth}; held out: {report['held_out']})")
    return 0


def register(sub) -> None:
    t = sub.add_parser("train-predictor", help="train Credence's random forest on LQD traces and export it for the engine")
    t.add_argument("traces", nargs="+", help="lqd runs with [switch.bm] trace = true (run directories or lqd_trace.parquet)")
    t.add_argument("--out", required=True, help="model file to write (JSON; [switch.bm] model = this path)")
    t.add_argument("--test", action="append", metavar="TRACE", help="held-out trace (repeatable); default: a --test-fraction of the rows")
    t.add_argument("--test-fraction", type=float, default=0.6, help="rows held out when no --test trace is given (ns3dc: 0.6)")
    t.add_argument("--trees", type=int, default=4, help="number of trees (ns3dc's evaluation: 4)")
    t.add_argument("--depth", type=int, default=4, help="maximum depth (ns3dc: 4)")
    t.add_argument("--seed", type=int, default=0, help="random_state of the split and the forest")
    t.add_argument("--queues", help="comma list of queue indices to train on (default: all rows)")
    t.add_argument("--class-weight", choices=("none", "balanced"), default="none",
                   help="none: every row weighs 1 (ns3dc); balanced: LQD's drops weigh as much in total as its sends")
    t.add_argument("--ports", type=int, help="N, the switch's port count, to report eta (credence.md 1.3)")
    t.set_defaults(func=cmd_train)
