"""Headline metric cells of a run against its baseline: value, delta coloured by better/worse,
glossary tooltip; the Trainer flow (arrived / started / completed / still waiting) and the
queueing time beside its lower bound counting the Trainers still waiting.

`cells` is pure (tests call it); `show` draws them with st.metric.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from appkit import glossary
from appkit.runs import HEADLINE, _get

# (summary key, scale to the unit shown, format): the Trainer flow and the queueing figure that
# counts the Trainers still waiting (shown under the headline row that has Trainers completed and
# the mean queueing time over the started ones)
FLOW: list[tuple[str, float, str]] = [
    ("trainers_arrived", 1.0, ",.0f"),
    ("trainers_started", 1.0, ",.0f"),
    ("trainers_waiting_at_end", 1.0, ",.0f"),
    ("mean_queue_incl_waiting_s", 1 / 60, ",.1f"),
]


def _num(v):
    return float(v) if isinstance(v, (int, float)) and math.isfinite(v) else None


def cells(summaries: Mapping[str, Mapping], rows: Sequence[tuple[str, float, str]]) -> list[dict]:
    """One cell per row whose key the first run's summary has: label (with unit), value text,
    delta / delta_color / delta_arrow against the second run (if any), help (glossary)."""
    labels = list(summaries)
    main, base = summaries[labels[0]], (summaries[labels[1]] if len(labels) > 1 else None)
    out = []
    for key, scale, fmt in rows:
        if key.split(".")[0] not in main:
            continue  # a key this summary does not have (e.g. an older simulator)
        v = _num(_get(main, key))
        t = glossary.term(key)
        label = f"{t.label} ({t.unit})" if t else key
        b = _num(_get(base, key)) if base is not None else None
        v_s, b_s = (None if v is None else v * scale), (None if b is None else b * scale)
        d, color, arrow = glossary.delta(key, v_s, b_s, fmt, labels[1]) if base is not None else (None, "off", "off")
        out.append({"key": key, "label": label, "value": "-" if v_s is None else f"{v_s:{fmt}}",
                    "delta": d, "delta_color": color, "delta_arrow": arrow, "help": glossary.help_for(key)})
    return out


def headline_rows() -> list[tuple[str, float, str]]:
    """The first four headline metrics of appkit.runs.HEADLINE as (key, scale, format)."""
    return [(key, scale, fmt) for key, _label, _unit, scale, fmt in HEADLINE[:4]]


def show(cs: list[dict], ncols: int = 4) -> None:
    import streamlit as st

    for i in range(0, len(cs), ncols):
        cols = st.columns(ncols)
        for col, c in zip(cols, cs[i:i + ncols]):
            col.metric(c["label"], c["value"], c["delta"], delta_color=c["delta_color"],
                       delta_arrow=c["delta_arrow"], help=c["help"])
