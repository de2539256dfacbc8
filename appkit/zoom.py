"""One zoom shared by the time charts of a page, as in Grafana: drag across any time chart to zoom every
time chart of the page to that range; the range slider above them shows and sets the same range;
"Whole window" undoes it.

A page makes one `TimeZoom` for its window, calls `.control()` where the slider goes, then
`.show(container, fig, key)` for each time chart. The zoom is keyed by the window (log, start, length),
so another log or window starts unzoomed: no range can stick across logs.
"""

from __future__ import annotations

import datetime as dt
from functools import partial

import pandas as pd
import streamlit as st

from appkit import charts

# slider steps by the span shown: fine enough to pick an hour out of a week
_STEPS_S = ((2 * 86400, 300), (31 * 86400, 3600), (float("inf"), 86400))


class TimeZoom:
    """The shared time range of one page's time charts.

    kind "hours": the charts' x is hours since the window start, lo..hi in hours;
    kind "utc": the charts' x is UTC date-time, lo..hi in epoch seconds.
    """

    def __init__(self, page: str, lo: float, hi: float, kind: str, window: str = ""):
        if kind not in ("hours", "utc"):
            raise ValueError(f"kind must be hours or utc, got {kind!r}")
        self.kind, self.lo, self.hi = kind, float(lo), float(max(hi, lo))
        self.key = f"zoom:{page}:{window}:{self.lo:g}:{self.hi:g}"
        self._gen = f"{self.key}:gen"  # bumped at each drag: the chart widgets start without a box

    # ---- values: the slider's (hours as float, UTC as naive datetime) <-> plotly ranges
    def _val(self, x: float):
        if self.kind == "hours":
            return float(x)
        return dt.datetime(1970, 1, 1) + dt.timedelta(seconds=float(x))

    def _full(self) -> tuple:
        return self._val(self.lo), self._val(self.hi)

    def _from_plot(self, x, offset_h: float) -> float:
        """A plotted x (hours, or a naive date-time string shifted by offset_h) in the zoom's unit."""
        if self.kind == "hours":
            return float(x)
        return (pd.Timestamp(x) - pd.Timestamp(0)).total_seconds() - offset_h * 3600.0

    def _clip(self, a: float, b: float) -> tuple:
        a, b = max(self.lo, min(a, self.hi)), max(self.lo, min(b, self.hi))
        return (self._val(a), self._val(b)) if b > a else self._full()

    def current(self) -> tuple:
        return st.session_state.get(self.key, self._full())

    def zoomed(self) -> bool:
        return tuple(self.current()) != tuple(self._full())

    def plot_range(self, offset_h: float = 0.0) -> list | None:
        """The x range for a chart (None when not zoomed); offset_h shifts a chart drawn on a local clock."""
        if not self.zoomed():
            return None
        a, b = self.current()
        if self.kind == "hours":
            return [a, b]
        shift = dt.timedelta(hours=offset_h)
        return [(a + shift).isoformat(sep=" "), (b + shift).isoformat(sep=" ")]

    # ---- Streamlit
    def _set(self, value: tuple) -> None:
        st.session_state[self.key] = value
        st.session_state[self._gen] = st.session_state.get(self._gen, 0) + 1

    def _on_drag(self, chart_key: str, offset_h: float) -> None:
        rng = charts.box_x_range(st.session_state.get(chart_key))
        if rng is not None:
            self._set(self._clip(self._from_plot(rng[0], offset_h), self._from_plot(rng[1], offset_h)))

    def control(self, label: str = "Zoom: the time range of every time chart on this page") -> None:
        """The range slider and the button that shows the whole window again."""
        if self.hi <= self.lo:
            return
        st.session_state.setdefault(self.key, self._full())
        span = self.hi - self.lo
        c = st.columns([6, 1])
        if self.kind == "hours":
            step = 0.25 if span <= 48 else 1.0
            c[0].slider(label + " (h since the window start)", min_value=self.lo, max_value=self.hi, step=step,
                        key=self.key, format="%.2f h")
        else:
            step = next(s for limit, s in _STEPS_S if span <= limit)
            c[0].slider(label + " (UTC)", min_value=self._val(self.lo), max_value=self._val(self.hi),
                        step=dt.timedelta(seconds=step), key=self.key, format="YYYY-MM-DD HH:mm")
        c[1].button("Whole window", key=f"{self.key}:reset", on_click=self._set, args=(self._full(),),
                    disabled=not self.zoomed(), help="Show the whole window in every time chart again")
        st.caption("Drag across any time chart to zoom all of them to that time range (as in Grafana).")

    def show(self, container, fig, key: str, offset_h: float = 0.0) -> None:
        """Draw a time chart: zoomed to the shared range; a drag across it sets the range for every chart."""
        fig.update_layout(dragmode="select", selectdirection="h")
        charts.with_x_range(fig, self.plot_range(offset_h))
        gen = st.session_state.get(self._gen, 0)
        chart_key = f"{key}_z{gen}" if gen else key  # a new widget after each zoom: no stale box on it
        container.plotly_chart(fig, key=chart_key, width="stretch", selection_mode="box",
                               on_select=partial(self._on_drag, chart_key, offset_h))
