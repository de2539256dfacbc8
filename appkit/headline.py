"""Headline metric cells of a run against its baseline: value, delta coloured by better/worse,
glossary tooltip; the Trainer flow (arrived / started / completed / still waiting) and the
queueing time beside its lower bound counting the Trainers still waiting.

`cells` is pure (tests call it); `show` draws them with st.metric.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from planner.report import glossary
from planner.report.headline import HEADLINE, _get

# the Trainer flow and the queueing figure that counts the Trainers still waiting (shown under the
# headline row that has Trainers completed and the mean queueing time over the started ones)
FLOW: tuple[str, ...] = ("trainers_arrived", "trainers_started", "trainers_waiting_at_end",
                         "mean_queue_incl_waiting_s")


def _num(v):
    return float(v) if isinstance(v, (int, float)) and math.isfinite(v) else None


def cells(summaries: Mapping[str, Mapping], keys: Sequence[str]) -> list[dict]:
    """One cell per key the first run's summary has: label (with unit), value text, delta /
    delta_color / delta_arrow against the second run (if any), help; scale and format from the
    glossary."""
    labels = list(summaries)
    main, base = summaries[labels[0]], (summaries[labels[1]] if len(labels) > 1 else None)
    out = []
    for key in keys:
        if key.split(".")[0] not in main:
            continue  # a key this summary does not have (e.g. an older simulator)
        t = glossary.term(key)
        v = _num(_get(main, key))
        b = _num(_get(base, key)) if base is not None else None
        v_s, b_s = (None if v is None else v * t.scale), (None if b is None else b * t.scale)
        d, color, arrow = (glossary.delta(key, v_s, b_s, t.fmt, labels[1]) if base is not None
                           else (None, "off", "off"))
        out.append({"key": key, "label": f"{t.label} ({t.unit})", "value": t.show(v),
                    "delta": d, "delta_color": color, "delta_arrow": arrow, "help": glossary.help_for(key)})
    return out


def headline_rows() -> tuple[str, ...]:
    """The first four headline metrics of appkit.runs.HEADLINE."""
    return HEADLINE[:4]


def show(cs: list[dict], ncols: int = 4, unit: str = "node") -> None:
    """Draw the cells, labels worded in the log's unit (a GPU trace: GPUs, GPU-hours)."""
    import streamlit as st

    for i in range(0, len(cs), ncols):
        cols = st.columns(ncols)
        for col, c in zip(cols, cs[i:i + ncols]):
            col.metric(glossary.in_units(c["label"], unit), c["value"], c["delta"], delta_color=c["delta_color"],
                       delta_arrow=c["delta_arrow"], help=glossary.in_units(c["help"], unit))
