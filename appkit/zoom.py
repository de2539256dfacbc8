"""One zoom shared by the time charts of a page, as in Grafana: drag across any time chart to zoom every
time chart of the page to that range; the range slider above them shows and sets the same range;
"Whole window" undoes it.

A page makes one `TimeZoom` for its window, calls `.control()` where the slider goes, then
`.show(container, fig, key)` for each time chart. The zoom is keyed by the window (log, start, length),
so another log or window starts unzoomed: no range can stick across logs.

The range is also in the page's URL as `from`/`to` (UTC; appkit.state.ZOOM_PARAMS, as Grafana keeps
its range): a reload or a shared link shows the same range. A URL range that differs from the one the
page last wrote wins (checked against the window: outside it, ignored with a one-line note); otherwise
the page's range is written to the URL (the whole window: no `from`/`to`).
"""

from __future__ import annotations

import datetime as dt
from functools import partial

import pandas as pd
import streamlit as st

from appkit import charts, state
from appkit.uploads import md

_URL_SEEN = "_zoom_url_seen"  # the `from`/`to` the page last wrote to the URL (or took from it)

# slider steps by the span shown: fine enough to pick an hour out of a week
_STEPS_S = ((2 * 86400, 300), (31 * 86400, 3600), (float("inf"), 86400))


class TimeZoom:
    """The shared time range of one page's time charts.

    kind "hours": the charts' x is hours since the window start, lo..hi in hours;
    kind "utc": the charts' x is UTC date-time, lo..hi in epoch seconds.
    """

    def __init__(self, page: str, lo: float, hi: float, kind: str, window: str = "", origin_s: float = 0.0):
        """origin_s (kind "hours"): the epoch seconds of hour 0, for the URL's UTC `from`/`to`."""
        if kind not in ("hours", "utc"):
            raise ValueError(f"kind must be hours or utc, got {kind!r}")
        self.kind, self.lo, self.hi = kind, float(lo), float(max(hi, lo))
        self.origin_s = float(origin_s) if kind == "hours" else 0.0
        self.key = f"zoom:{page}:{window}:{self.lo!r}:{self.hi!r}"
        self._gen = f"{self.key}:gen"  # bumped at each drag: the chart widgets start without a box
        self._note = f"{self.key}:note"  # a link's range that was ignored: why (until the zoom changes)

    # ---- values: the slider's (hours as float, UTC as naive datetime) <-> plotly ranges
    def _val(self, x: float):
        if self.kind == "hours":
            return float(x)
        return dt.datetime(1970, 1, 1) + dt.timedelta(seconds=float(x))

    def _secs(self, v) -> float:
        """A slider value (hours, or naive UTC date-time) -> epoch seconds."""
        if self.kind == "hours":
            return self.origin_s + 3600.0 * float(v)
        return (pd.Timestamp(v) - pd.Timestamp(0)).total_seconds()

    def _from_secs(self, t_s: float) -> float:
        """Epoch seconds -> the zoom's unit (hours since hour 0, or epoch seconds)."""
        return (float(t_s) - self.origin_s) / 3600.0 if self.kind == "hours" else float(t_s)

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
        st.session_state.pop(self._note, None)

    def sync_url(self) -> None:
        """The URL's `from`/`to` -> the zoom when they differ from what the page last wrote (a reload,
        a shared link; checked against the window), then the zoom -> the URL."""
        url = {k: st.query_params.get(k) for k in state.ZOOM_PARAMS if k in st.query_params}
        if url and url != st.session_state.get(_URL_SEEN):
            lo_s, hi_s = self._secs(self._val(self.lo)), self._secs(self._val(self.hi))
            rng, notes = state.zoom_from_params(url, lo_s, hi_s)
            if rng is not None:
                self._set(self._clip(self._from_secs(rng[0]), self._from_secs(rng[1])))
            if notes:
                st.session_state[self._note] = notes
        want = state.zoom_to_params(*map(self._secs, self.current())) if self.zoomed() else {}
        for k in state.ZOOM_PARAMS:
            if k in want and st.query_params.get(k) != want[k]:
                st.query_params[k] = want[k]
            elif k not in want and k in st.query_params:
                del st.query_params[k]
        st.session_state[_URL_SEEN] = want

    def _on_drag(self, chart_key: str, offset_h: float) -> None:
        rng = charts.box_x_range(st.session_state.get(chart_key))
        if rng is not None:
            a, b = (self._from_secs(round(self._secs(self._val(self._from_plot(x, offset_h))))) for x in rng)
            self._set(self._clip(a, b))  # whole seconds: the range the URL keeps (from/to) is the one shown

    def control(self, label: str = "Zoom: the time range of every time chart on this page", drag: bool = True) -> None:
        """The range slider and the button that shows the whole window again; `drag` False: the charts
        are pictures (a page's static first draw), which only the slider zooms."""
        if self.hi <= self.lo:
            return
        st.session_state.setdefault(self.key, self._full())
        self.sync_url()
        for n in st.session_state.get(self._note) or []:
            st.warning(md(n), icon=":material/warning:")  # quotes the link's values: Markdown-inert
        span = self.hi - self.lo
        row = st.container(horizontal=True, vertical_alignment="bottom")  # slider, then the button whole at any width
        if self.kind == "hours":
            step = 0.25 if span <= 48 else 1.0
            row.slider(label + " (h since the window start)", min_value=self.lo, max_value=self.hi, step=step,
                        key=self.key, format="%.2f h")
        else:
            step = next(s for limit, s in _STEPS_S if span <= limit)
            row.slider(label + " (UTC)", min_value=self._val(self.lo), max_value=self._val(self.hi),
                        step=dt.timedelta(seconds=step), key=self.key, format="YYYY-MM-DD HH:mm")
        row.button("Whole window", key=f"{self.key}:reset", on_click=self._set, args=(self._full(),),
                    disabled=not self.zoomed(), help="Show the whole window in every time chart again")
        st.caption("Drag across any time chart to zoom all of them to that time range (as in Grafana)." if drag else
                   "The slider zooms every time chart; with interactive charts, a drag across any of them does too.")

    def show(self, container, fig, key: str, offset_h: float = 0.0) -> None:
        """Draw a time chart: zoomed to the shared range; a drag across it sets the range for every chart."""
        fig.update_layout(dragmode="select", selectdirection="h")
        charts.with_x_range(fig, self.plot_range(offset_h))
        gen = st.session_state.get(self._gen, 0)
        chart_key = f"{key}_z{gen}" if gen else key  # a new widget after each zoom: no stale box on it
        container.plotly_chart(fig, key=chart_key, width="stretch", selection_mode="box",
                               on_select=partial(self._on_drag, chart_key, offset_h))


def clear(page: str) -> None:
    """Forget every zoom of `page` (a log switch); the URL's `from`/`to` follow at its next draw."""
    for k in [k for k in st.session_state if str(k).startswith(f"zoom:{page}:")]:
        del st.session_state[k]
