"""Flow classes a researcher reads first (ABM §4 and FB §6 report these): incast responses,
short background flows (< 100 KB) and long background flows (>= 1 MB). One definition, used
by the run summary, the sweep table, ``sharebuf compare`` and the plots."""

from __future__ import annotations

from typing import Dict

import numpy as np

SHORT_MAX_BYTES = 100_000
LONG_MIN_BYTES = 1_000_000
#: class name -> label shown in tables and figures
CLASSES = {"incast": "incast responses", "short": "short (<100 KB)", "long": "long (>=1 MB)"}


def class_masks(size_bytes, is_incast) -> Dict[str, np.ndarray]:
    """Boolean masks per class. ``is_incast``: the flow answers an incast query."""
    size = np.asarray(size_bytes)
    inc = np.asarray(is_incast, dtype=bool)
    return {"incast": inc, "short": ~inc & (size < SHORT_MAX_BYTES), "long": ~inc & (size >= LONG_MIN_BYTES)}


def flow_classes(flows) -> Dict[str, np.ndarray]:
    """Masks per class for a flows DataFrame (``flows.parquet``)."""
    return class_masks(flows["size_bytes"].to_numpy(), flows["query_id"].notna().to_numpy())
