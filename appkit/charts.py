"""Plotly figure builders: pure functions from DataFrames to go.Figure (no Streamlit).

Every axis carries its unit; hover shows the values with units. Times in the data are
seconds since the Unix epoch (`t_s`); the figures show them as UTC date-times. Colours are
left to the active theme (the pages draw with theme="streamlit", the HTML report with
plotly's default template), so light and dark both read well.

Honest axes (issue 13): legends sit below the plot, never over the title; shares and counts
start at zero (`zero_based`, a utilization axis spans 0-100 %, not 99-100 %); counts get whole
ticks (`integer_ticks`); log axes are labelled with plain numbers or durations (`log_ticks`,
`duration_ticks`); every number printed goes through `fmt_num` (thousands separators, three
significant digits, never 0.03397168194806134).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

HEIGHT = 360


# px left of the plot area: room for y tick labels of up to ~5 characters ("4,000") and the y
# title. Plotly's axis automargin (on, so nothing is ever cut) redraws a whole figure when the
# labels need more than the margin given: at 60 px every Planner result chart was drawn once
# more in the browser (18 full draws for the six instead of 12, measured by call counts in
# Chromium; benchmarks/bench_pages.py's Run to charts). Wider labels still push it, with that redraw.
LEFT_MARGIN = 80


def _layout(fig: go.Figure, title: str, x: str, y: str, **kw) -> go.Figure:
    # the legend goes under the x axis title: never over the title or the data (one update_layout:
    # each call validates the whole layout, the largest cost of drawing a page's figures)
    legend = sum(1 for t in fig.data if t.showlegend is not False) > 1
    height = kw.pop("height", HEIGHT)
    if legend:
        kw.update(margin=dict(l=LEFT_MARGIN, r=20, t=50, b=95), height=height + 35)
    else:
        kw.update(margin=dict(l=LEFT_MARGIN, r=20, t=50, b=50), height=height, showlegend=False)
    fig.update_layout(title=dict(text=title), xaxis_title=x, yaxis_title=y,
                      hovermode=kw.pop("hovermode", "x unified"),
                      legend=dict(orientation="h", yanchor="top", y=-0.22, xanchor="left", x=0.0), **kw)
    return fig


# ---------------------------------------------------------------------------
# numbers and axes


def fmt_num(v, unit: str = "", digits: int = 3) -> str:
    """A number for people: thousands separators, `digits` significant digits (whole numbers from
    1,000 up), no exponent between 1e-4 and 1e15, unit appended; '-' for None/NaN."""
    if v is None:
        return "-"
    v = float(v)
    if not np.isfinite(v):
        return "-"
    a = abs(v)
    if a == 0:
        text = "0"
    elif a >= 10 ** (digits - 1):
        text = f"{v:,.0f}"
    elif a >= 1e-4:
        dec = digits - 1 - int(np.floor(np.log10(a)))
        text = f"{v:,.{dec}f}"
        if "." in text:
            text = text.rstrip("0").rstrip(".")
    else:
        text = f"{v:.{digits - 1}e}"
    if text in ("-0",):
        text = "0"
    return f"{text} {unit}".strip() if unit else text


def zero_based(fig: go.Figure, axis: str = "y", upper: float | None = None) -> go.Figure:
    """Start the axis at 0 (shares, counts, node-hours): no exaggerated differences. With upper,
    the axis spans at least 0..upper (e.g. 100 for a utilization in %)."""
    if upper is not None:
        top = upper
        for t in fig.data:
            vals = np.asarray(getattr(t, axis) if getattr(t, axis) is not None else [], dtype=float)
            if vals.size and np.isfinite(vals).any():
                top = max(top, float(np.nanmax(vals)))
        getattr(fig, f"update_{axis}axes")(range=[0, top * 1.02], autorange=False)
    else:
        getattr(fig, f"update_{axis}axes")(rangemode="tozero")
    return fig


def integer_ticks(fig: go.Figure, max_value: float, axis: str = "y") -> go.Figure:
    """Whole-number ticks for a count axis (no 0.5 jobs): a 1-2-5 step of at least 1."""
    top = max(float(max_value), 1.0)
    raw = top / 5.0
    mag = 10 ** np.floor(np.log10(raw)) if raw >= 1 else 1.0
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    getattr(fig, f"update_{axis}axes")(dtick=max(1, int(step)), tick0=0, tickformat=",d", rangemode="tozero")
    return fig


_DURATIONS = ((1, "1 s"), (10, "10 s"), (60, "1 min"), (600, "10 min"), (3600, "1 h"), (6 * 3600, "6 h"),
              (86400, "1 d"), (7 * 86400, "1 wk"), (30 * 86400, "30 d"), (365 * 86400, "1 yr"))


def duration_ticks(lo_s: float, hi_s: float) -> tuple[list[float], list[str]]:
    """Tick values and labels for a log axis of durations in seconds (1 s, 10 s, 1 min, ... 1 yr)."""
    ticks = [(v, t) for v, t in _DURATIONS if lo_s / 1.5 <= v <= hi_s * 1.5]
    if lo_s < 1:
        ticks = [(10.0 ** k, fmt_num(10.0 ** k, "s"))
                 for k in range(int(np.floor(np.log10(max(lo_s, 1e-6)))), 0)] + ticks
    return [float(v) for v, _ in ticks], [t for _, t in ticks]


def log_ticks(lo: float, hi: float, unit: str = "") -> tuple[list[float], list[str]]:
    """Decade ticks (and 2, 5 within when the axis spans three decades or less) with plain labels."""
    lo, hi = max(float(lo), 1e-12), max(float(hi), float(lo) * 10)
    k0, k1 = int(np.floor(np.log10(lo))), int(np.ceil(np.log10(hi)))
    mult = (1, 2, 5) if k1 - k0 <= 3 else (1,)
    vals = [m * 10.0 ** k for k in range(k0, k1 + 1) for m in mult if lo / 1.01 <= m * 10.0 ** k <= hi * 1.01]
    return vals, [fmt_num(v, unit) for v in vals]


def to_datetime(t_s) -> pd.Series:
    return pd.to_datetime(pd.Series(np.asarray(t_s, dtype=float)), unit="s", utc=True)


def _empty(title: str, note: str = "no data in this window") -> go.Figure:
    fig = go.Figure()
    fig.add_annotation(text=note, showarrow=False, xref="paper", yref="paper", x=0.5, y=0.5)
    return _layout(fig, title, "", "")


MAX_POINTS = 6000


def _thin_steps(t: np.ndarray, v: np.ndarray, max_points: int = MAX_POINTS) -> tuple[np.ndarray, np.ndarray]:
    """Fewer points for long step series: per bucket keep the first, min and max (shape kept)."""
    if len(t) <= max_points:
        return t, v
    buckets = max_points // 3
    edges = np.linspace(0, len(t), buckets + 1).astype(int)
    keep = set()
    for a, b in zip(edges[:-1], edges[1:]):
        if b <= a:
            continue
        seg = v[a:b]
        keep.update((a, a + int(np.argmin(seg)), a + int(np.argmax(seg))))
    idx = np.array(sorted(keep))
    return t[idx], v[idx]


def step_lines(series: Mapping[str, tuple], title: str, y_title: str, unit: str,
               end: float | None = None, dash: Mapping[str, str] | None = None,
               time_axis: bool = True, x_title: str = "time (UTC)", x_unit: str = "",
               fill: Sequence[str] = ()) -> go.Figure:
    """Step functions {name: (t, values)}; each value holds until the next t.

    time_axis: t are epoch seconds shown as UTC date-times; else plain numbers (e.g. hours
    since the window start, x_unit "h").
    """
    fig = go.Figure()
    for name, (t, v) in series.items():
        t = np.asarray(t, dtype=float)
        v = np.asarray(v, dtype=float)
        if len(t) == 0:
            continue
        if end is not None and end > t[-1]:  # draw the last step to the window's end
            t, v = np.append(t, end), np.append(v, v[-1])
        t, v = _thin_steps(t, v)
        x = to_datetime(t) if time_axis else t
        xh = "" if time_axis else f"%{{x:,.3f}} {x_unit}: "
        fig.add_trace(go.Scatter(
            x=x, y=v, name=name, mode="lines", line=dict(shape="hv", dash=(dash or {}).get(name)),
            fill="tozeroy" if name in fill else None, connectgaps=False,
            hovertemplate=f"{xh}%{{y:,.4g}} {unit}<extra>{name}</extra>"))
    if not fig.data:
        return _empty(title)
    return _layout(fig, title, x_title, y_title)


def band(t_s, mean, lo, hi, title: str, y_title: str, unit: str, name: str = "mean") -> go.Figure:
    """A long series binned: the mean per bin as a line over a shaded min-max band (readable
    over weeks, where a step line of every change would be a solid block); y from 0."""
    x = to_datetime(t_s)
    lo, hi, mean = (np.asarray(v, dtype=float) for v in (lo, hi, mean))
    if len(x) == 0:
        return _empty(title)
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=x, y=hi, mode="lines", line=dict(width=0, shape="hv"), name="max in bin",
                             showlegend=False, hovertemplate=f"max %{{y:,.0f}} {unit}<extra></extra>"))
    fig.add_trace(go.Scatter(x=x, y=lo, mode="lines", line=dict(width=0, shape="hv"), name="min-max in bin",
                             fill="tonexty", fillcolor="rgba(100,149,237,0.35)",
                             hovertemplate=f"min %{{y:,.0f}} {unit}<extra></extra>"))
    fig.add_trace(go.Scatter(x=x, y=mean, mode="lines", line=dict(shape="hv", width=1.2, color="rgb(0,70,160)"),
                             name=name,
                             hovertemplate=f"{name} %{{y:,.1f}} {unit}<extra></extra>"))
    return zero_based(_layout(fig, title, "time (UTC)", y_title))


def cdf(values_s: Sequence[float], weights: Sequence[float] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Empirical CDF of values (optionally weighted): sorted x and cumulative share 0..1."""
    v = np.asarray(values_s, dtype=float)
    w = np.ones_like(v) if weights is None else np.asarray(weights, dtype=float)
    order = np.argsort(v, kind="stable")
    v, w = v[order], w[order]
    total = w.sum()
    return v, (np.cumsum(w) / total if total > 0 else np.zeros_like(w))


def cdf_lines(curves: Mapping[str, tuple], title: str, x_title: str, unit: str, log_x: bool = True,
              vline: float | None = None, vline_label: str = "") -> go.Figure:
    """CDFs {name: (x, share)}; optional vertical marker (e.g. the 600 s threshold)."""
    fig = go.Figure()
    for name, (x, y) in curves.items():
        x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
        if len(x) == 0:
            continue
        if len(x) > 4000:  # keep the browser light: sample the curve at 4000 quantiles
            idx = np.unique(np.linspace(0, len(x) - 1, 4000).astype(int))
            x, y = x[idx], y[idx]
        fig.add_trace(go.Scatter(x=x, y=y * 100, name=name, mode="lines", line=dict(shape="hv"),
                                 hovertemplate=f"%{{x:,.4g}} {unit}: %{{y:.1f}} %<extra>{name}</extra>"))
    if not fig.data:
        return _empty(title)
    if vline is not None:
        fig.add_vline(x=vline, line_dash="dot", line_color="gray", annotation_text=vline_label)
    fig = _layout(fig, title, x_title, "cumulative share (%)", hovermode="closest")
    fig.update_yaxes(range=[0, 101])
    if log_x:
        xs = np.concatenate([np.asarray(t.x, dtype=float) for t in fig.data])
        xs = xs[xs > 0]
        fig.update_xaxes(type="log")
        if len(xs):
            vals, text = (duration_ticks(float(xs.min()), float(xs.max())) if unit == "s"
                          else log_ticks(float(xs.min()), float(xs.max()), unit))
            fig.update_xaxes(tickvals=vals, ticktext=text)
    return fig


def bars(x, ys: Mapping[str, Sequence[float]], title: str, x_title: str, y_title: str, unit: str,
         x_is_time: bool = False, barmode: str = "group") -> go.Figure:
    fig = go.Figure()
    xs = to_datetime(x) if x_is_time else list(x)
    for name, y in ys.items():
        fig.add_trace(go.Bar(x=xs, y=list(y), name=name,
                             hovertemplate=f"%{{x}}: %{{y:,.4g}} {unit}<extra>{name}</extra>"))
    if not fig.data or not len(xs):
        return _empty(title)
    return _layout(fig, title, x_title, y_title, barmode=barmode)


def histograms(samples: Mapping[str, Sequence[float]], title: str, x_title: str, unit: str,
               nbins: int = 40, log_x: bool = False) -> go.Figure:
    """Overlaid histograms {name: values} with shared bins (count on y, whole ticks); log_x bins
    are even in log10 and the ticks are labelled with the values themselves."""
    clean = {}
    for name, v in samples.items():
        v = np.asarray(v, dtype=float)
        v = v[np.isfinite(v)]
        if log_x:
            v = v[v > 0]
        if len(v):
            clean[name] = np.log10(v) if log_x else v
    if not clean:
        return _empty(title, "no values")
    edges = np.histogram_bin_edges(np.concatenate(list(clean.values())), bins=nbins)
    fig, top = go.Figure(), 0
    for name, v in clean.items():
        n, _ = np.histogram(v, bins=edges)
        top = max(top, int(n.max()))
        lo, hi = (10 ** edges[:-1], 10 ** edges[1:]) if log_x else (edges[:-1], edges[1:])
        fig.add_trace(go.Bar(x=(edges[:-1] + edges[1:]) / 2, y=n, width=np.diff(edges), name=name, opacity=0.7,
                             customdata=[f"{fmt_num(a)}-{fmt_num(b, unit)}" for a, b in zip(lo, hi)],
                             hovertemplate=f"%{{customdata}}: %{{y:,d}}<extra>{name}</extra>"))
    fig = _layout(fig, title, f"{x_title}, log scale" if log_x else x_title, "count", barmode="overlay",
                  hovermode="closest", bargap=0)
    integer_ticks(fig, top)
    if log_x:
        vals, text = log_ticks(10 ** edges[0], 10 ** edges[-1], unit)
        fig.update_xaxes(tickvals=np.log10(vals), ticktext=text)
    return fig


def boxes(df: pd.DataFrame, x: str, y: str, color: str | None, title: str, x_title: str, y_title: str,
          unit: str) -> go.Figure:
    """Box plot of y by x (one trace per colour group, e.g. allocator)."""
    fig = go.Figure()
    if df is None or df.empty:
        return _empty(title)
    groups = [(None, df)] if color is None else list(df.groupby(color, sort=False))
    for name, g in groups:
        fig.add_trace(go.Box(x=g[x], y=g[y], name=str(name) if name is not None else y, boxpoints=False,
                             hovertemplate=f"%{{x}}: %{{y:,.4g}} {unit}<extra>{name}</extra>"))
    return _layout(fig, title, x_title, y_title, boxmode="group", hovermode="closest")


def heatmap(df: pd.DataFrame, x: str, y: str, z: str, title: str, x_title: str, y_title: str,
            z_title: str, unit: str = "", zrange: tuple[float, float] | None = None) -> go.Figure:
    """Mean of z over a grid of x and y (categorical axes keep the values' order). zrange: one
    colour scale shared by several heatmaps (a colour means the same value on each)."""
    if df is None or df.empty:
        return _empty(title)
    pv = df.pivot_table(index=y, columns=x, values=z, aggfunc="mean", sort=True)
    zz = pv.to_numpy(dtype=float)
    rng = {} if zrange is None else {"zmin": float(zrange[0]), "zmax": float(zrange[1])}
    fig = go.Figure(go.Heatmap(
        **rng, z=zz, x=[str(c) for c in pv.columns], y=[str(i) for i in pv.index],
        colorbar=dict(title=dict(text=z_title)), text=[[fmt_num(v) for v in row] for row in zz],
        texttemplate="%{text}",
        hovertemplate=f"{x_title} %{{x}}<br>{y_title} %{{y}}<br>{z_title}: %{{z:,.4g}} {unit}<extra></extra>"))
    fig = _layout(fig, title, x_title, y_title, hovermode="closest")
    fig.update_xaxes(type="category")
    fig.update_yaxes(type="category")
    return fig


def lines(df: pd.DataFrame, x: str, y: str, color: str | None, title: str, x_title: str, y_title: str,
          unit: str = "", log_x: bool = False, log_y: bool = False) -> go.Figure:
    """Mean of y over x, one line per colour group, markers on points."""
    if df is None or df.empty:
        return _empty(title)
    fig = go.Figure()
    groups = [(y_title, df)] if color is None else list(df.groupby(color, sort=False))
    for name, g in groups:
        m = g.groupby(x, sort=True)[y].mean()
        fig.add_trace(go.Scatter(x=m.index, y=m.to_numpy(dtype=float), name=str(name), mode="lines+markers",
                                 hovertemplate=f"{x_title} %{{x}}: %{{y:,.4g}} {unit}<extra>{name}</extra>"))
    fig = _layout(fig, title, x_title, y_title, hovermode="closest")
    if log_x:  # ticks at the grid's own values (a few), not a crowd of log minor ticks
        xs = sorted(float(v) for v in df[x].dropna().unique() if float(v) > 0)
        fig.update_xaxes(type="log", tickvals=xs, ticktext=[fmt_num(v) for v in xs])
    if log_y:  # plain decade (and 2, 5) ticks with units, not plotly's crowded minor labels
        ys = pd.to_numeric(df[y], errors="coerce")
        ys = ys[ys > 0]
        if len(ys):
            vals, text = log_ticks(float(ys.min()), float(ys.max()), unit)
            fig.update_yaxes(type="log", tickvals=vals, ticktext=text)
        else:
            fig.update_yaxes(type="log")
    return fig


def grouped_metric_bars(table: Mapping[str, Mapping[str, float]], title: str, y_title: str,
                        unit: str) -> go.Figure:
    """{metric: {run: value}} -> grouped bars (metrics on x, one bar per run)."""
    runs: list[str] = []
    for vals in table.values():
        runs += [r for r in vals if r not in runs]
    # no empty categories: a metric that is 0 or missing for every run is left out
    metrics = [m for m, vals in table.items()
               if any(np.isfinite(v) and v != 0 for v in np.asarray(list(vals.values()), dtype=float))]
    return bars(metrics, {r: [table[m].get(r, np.nan) for m in metrics] for r in runs}, title, "", y_title, unit)


# ---------------------------------------------------------------------------
# Planner results (runs: {label: SimResult-like with .timeline .trainers .decisions .summary};
# SimResult times are seconds since the window start)


def _h(x) -> np.ndarray:
    return np.asarray(x, dtype=float) / 3600.0


# the Planner's charts whose x is time (hours since the window start): they share the page's zoom
PLANNER_TIME_CHARTS = ("Allocated nodes vs N(t)", "Utilization over time")


def planner_figures(runs: Mapping[str, object], window_h: float | None = None) -> dict[str, go.Figure]:
    """The Planner page's charts, in page order, for one or more runs (allocator, baseline)."""
    figs: dict[str, go.Figure] = {}
    first = next(iter(runs.values()), None)
    if first is None:
        return figs
    series = {"N(t) idle pool": (_h(first.timeline["t_s"]), first.timeline["pool_nodes"])}
    for label, r in runs.items():
        series[f"allocated: {label}"] = (_h(r.timeline["t_s"]), r.timeline["allocated_nodes"])
    figs["Allocated nodes vs N(t)"] = step_lines(
        series, "Allocated nodes vs idle pool N(t)", "nodes", "nodes", end=window_h,
        dash={f"allocated: {lab}": ("dash" if i else None) for i, lab in enumerate(runs)},
        time_axis=False, x_title="time since window start (h)", x_unit="h", fill=("N(t) idle pool",))

    util, means = {}, {}
    for label, r in runs.items():
        tl = r.timeline
        pool = tl["pool_nodes"].to_numpy(dtype=float)
        # no idle node, no utilization: a gap, not 0 %
        u = np.divide(tl["allocated_nodes"].to_numpy(dtype=float), pool, out=np.full_like(pool, np.nan),
                      where=pool > 0)
        util[label] = (_h(tl["t_s"]), u * 100.0)
        t = tl["t_s"].to_numpy(dtype=float)
        dt = np.diff(np.r_[t, (window_h or 0) * 3600.0 if window_h else (t[-1] if len(t) else 0.0)])
        dt = np.clip(dt, 0.0, None)
        node_s = float(np.sum(pool * dt))
        means[label] = float(np.sum(tl["allocated_nodes"].to_numpy(dtype=float) * dt)) / node_s if node_s else None
    fig = zero_based(step_lines(
        util, "Pool utilization (allocated / idle nodes)",
        "utilization (%)", "%", end=window_h, time_axis=False, x_title="time since window start (h)", x_unit="h"),
        upper=100.0)
    if means and all(m is not None and m >= 0.99 for m in means.values()):
        # why the line is flat at 100 %: the Trainers' demand (Pj_max x Nmax) exceeds the pool, so
        # every idle node is held; the definition is allocated / idle, not useful work
        fig.add_annotation(
            text="Flat at 100 %: the Trainers could use more nodes<br>than were idle (Pj_max x Nmax > pool), so every"
                 "<br>idle node was held. Rescaling costs show in U.", showarrow=False, xref="paper", yref="paper",
            x=0.02, y=0.08,
            xanchor="left", align="left", font=dict(size=11), bgcolor="rgba(255,255,255,0.8)")
    figs["Utilization over time"] = fig

    figs["Queueing time"] = histograms(
        {label: r.trainers["queue_s"].dropna() / 60.0 for label, r in runs.items()},
        "Queueing time of Trainers (submit to first nodes)", "queueing time (min)", "min")

    rt = []
    for label, r in runs.items():
        t = r.trainers
        done = t[t["run_s"].notna()] if "run_s" in t else t.iloc[0:0]
        rt.append(pd.DataFrame({"model": done["model"], "run_h": done["run_s"] / 3600.0, "run": label}))
    rt = pd.concat(rt, ignore_index=True) if rt else pd.DataFrame()
    figs["Runtime per model"] = boxes(rt, "model", "run_h", "run", "Runtime per model (completed Trainers)",
                                      "model", "runtime (h)", "h")

    costs: dict[str, dict[str, float]] = {}
    for name, col in (("rescaling", "rescale_cost_incurred_samples"),
                      ("preemption", "preemption_cost_incurred_samples"),
                      ("idle during solve", "solve_idle_cost_samples")):
        costs[name] = {label: float(r.trainers[col].sum()) / 1e6 if col in r.trainers else np.nan
                       for label, r in runs.items()}
    figs["Rescaling and preemption cost"] = grouped_metric_bars(
        costs, "Rescaling and preemption cost (samples lost)", "cost (million samples)", "M samples")

    figs["Solve time"] = histograms(
        {label: r.decisions["wall_s"] * 1000.0 for label, r in runs.items() if len(r.decisions)},
        "Allocator time per decision", "time per decision (ms)", "ms", log_x=True)
    return figs


# ---------------------------------------------------------------------------
# a page's charts: the log's unit on every label, one time range shared by the time charts


def in_units(fig: go.Figure, unit: str) -> go.Figure:
    """Every label of `fig` (titles, axis and legend titles, trace names, hover templates, annotations)
    worded in the log's unit (planner.report.glossary.in_units: a GPU trace reads GPUs and GPU-hours).
    Data values (categories, node names) are left alone."""
    if unit != "GPU":
        return fig
    from planner.report.glossary import in_units as words  # lazy: only GPU traces need it

    def walk(obj):
        if isinstance(obj, dict):
            out = {k: (words(v, unit) if k in ("text", "name", "hovertemplate") and isinstance(v, str)
                       else walk(v)) for k, v in obj.items()}
            if obj.get("type") == "heatmap" and all(isinstance(v, str) for v in obj.get("y") or [0]):
                out["y"] = [words(v, unit) for v in obj["y"]]  # size classes ("2-3 nodes") are labels
            return out
        if isinstance(obj, list):
            return [walk(v) for v in obj]
        return obj

    return go.Figure(walk(fig.to_plotly_json()))


def with_x_range(fig: go.Figure, rng: Sequence | None) -> go.Figure:
    """`fig` zoomed to x in [rng[0], rng[1]] (None: the whole range)."""
    if rng is not None:
        fig.update_xaxes(range=list(rng), autorange=False)
    return fig


def box_x_range(chart_state) -> tuple | None:
    """The x range of the last box drawn on a Plotly chart (Streamlit's selection state), ordered; None
    without one. Values are numbers on a linear axis and date-time strings on a date axis."""
    try:
        boxes = chart_state["selection"]["box"]
    except (KeyError, TypeError):
        return None
    if not boxes:
        return None
    x = boxes[-1].get("x") or []
    if len(x) != 2:
        return None
    a, b = x
    try:
        a, b = float(a), float(b)
    except (TypeError, ValueError):
        a, b = pd.Timestamp(a), pd.Timestamp(b)
    return (a, b) if a <= b else (b, a)


def svg_steps(x, y, title: str, x_title: str, y_title: str, width: int = 900, height: int = 240,
              max_points: int = 900) -> str:
    """A step function (each y holds until the next x) as a small static SVG, filled to zero: a
    preview drawn without Plotly's 4.7 MB chunk (the Planner before a Run; issue 25, speed). Axes
    from 0, whole-number ticks on y, the x range's ends and middle labelled; the points thinned to
    about the chart's pixel width (first, min and max per bucket: the shape kept). `svg_plot` draws it."""
    return svg_plot(title, x_title, y_title, steps=[(None, x, y)], width=width, height=height, max_points=max_points)


# ---------------------------------------------------------------------------
# static SVG charts: a page's first draw without Plotly's 4.7 MB chunk (issue 25, speed)

SVG_FILL, SVG_LINE = "rgba(100,149,237,0.35)", "rgb(0,70,160)"  # charts.band's colours
SVG_COLORS = ("#0068c9", "#83c9ff", "#ff2b2b", "#ffabab", "#29b09d")  # Streamlit's chart colours, in order
_SVG_MARGINS = (56, 12, 28, 40)  # left (y ticks), right, top (the title), bottom (x ticks and title)
_TIME_STEPS_S = (3600, 2 * 3600, 3 * 3600, 6 * 3600, 12 * 3600, 86400, 2 * 86400, 3 * 86400, 7 * 86400,
                 14 * 86400)
_MONTH_STEPS = (1, 2, 3, 6, 12)


def _svg_head(title: str, width: int, height: int, title_x: float = _SVG_MARGINS[0]) -> str:
    """The SVG's opening tag and its title, from `title_x` (the plot's left margin by default)."""
    from html import escape

    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="100%" role="img" '
            f'aria-label="{escape(title)}" style="font: 12px sans-serif; fill: #808495">'
            f'<text x="{title_x}" y="16" font-weight="600" font-size="14">{escape(title)}</text>')


def _svg_legend(items: Sequence[tuple[str, str]], x0: float, y0: float, right: float) -> tuple[str, int]:
    """Legend entries (name, colour) from (x0, y0), each a swatch and its name, flowing onto a new row of
    20 px when the next would pass `right`: (the SVG, the number of rows)."""
    from html import escape

    out, x, y, rows = [], x0, y0, 1
    for name, color in items:
        w = 16 + 6.6 * len(name)  # ~6.6 px per character at 12 px
        if x > x0 and x + w > right:
            x, y, rows = x0, y + 20, rows + 1
        out.append(f'<rect x="{x:.1f}" y="{y - 9:.1f}" width="12" height="10" fill="{color}"/>'
                   f'<text x="{x + 16:.1f}" y="{y:.1f}">{escape(name)}</text>')
        x += w + 24
    return "".join(out), rows


def time_ticks(lo_s: float, hi_s: float, most: int = 7) -> tuple[list[float], list[str]]:
    """Tick positions (epoch s) and UTC labels for a time axis from lo_s to hi_s: whole hours, days,
    weeks (Mondays) or months (their first day), at most `most` of them; labelled as Plotly labels a
    date axis: the time of day below daily steps ("Feb 10 06:00"), the day ("Feb 10"), the month
    ("Feb 2021")."""
    span = max(float(hi_s) - float(lo_s), 1.0)
    step = next((s for s in _TIME_STEPS_S if span / s <= most), None)
    if step is not None:
        first = np.ceil((lo_s - (4 * 86400 if step % (7 * 86400) == 0 else 0)) / step) * step \
            + (4 * 86400 if step % (7 * 86400) == 0 else 0)  # weeks from a Monday (1970-01-05)
        vals = list(np.arange(first, hi_s + 1e-6, step))
    else:  # months: the first of a month, every 1, 2, 3, 6 or 12 months
        n = next((m for m in _MONTH_STEPS if span / (m * 30.44 * 86400) <= most), None)
        n = n or int(np.ceil(span / (most * 365.25 * 86400))) * 12
        m0 = pd.Timestamp(lo_s, unit="s").to_period("M").to_timestamp()
        months = pd.date_range(m0, pd.Timestamp(hi_s, unit="s"), freq=f"{n}MS")
        vals = [(m - pd.Timestamp(0)).total_seconds() for m in months]
        vals = [v for v in vals if v >= lo_s]
    fmt = "%b %Y" if step is None else "%b %d %H:%M" if step < 86400 else "%b %d"
    return [float(v) for v in vals], [pd.Timestamp(v, unit="s").strftime(fmt) for v in vals]


def _step_vertices(x: np.ndarray, v: np.ndarray, end: float) -> tuple[np.ndarray, np.ndarray]:
    """A step function's corners: each v holds from its x to the next x (the last to `end`)."""
    xe = np.r_[x[1:], end]
    return np.column_stack([x, xe]).ravel(), np.repeat(v, 2)


def svg_plot(title: str, x_title: str, y_title: str, steps: Sequence[tuple] = (), band: tuple | None = None,
             bars: Sequence[tuple] = (), x_time: bool = False, x_range: Sequence[float] | None = None,
             end: float | None = None, bar_width: float | None = None, width: int = 900, height: int = 240,
             max_points: int = 900) -> str:
    """One static SVG chart (steps, a min-max band, grouped bars) drawn without Plotly: a page's first
    draw (issue 25, speed; the interactive Plotly figure one click away). y from 0 with whole 1-2-5
    ticks; x labelled with plain numbers (the range's ends and middle) or, `x_time` (epoch seconds), UTC
    dates (`time_ticks`). A legend under the chart when more than one series is named.

    steps: (name or None, x, y[, fill]) step functions, each y holding until the next x (the last until
    `end`, else its own x), filled to 0 unless fill is False; band: (x, lo, hi) steps shaded between lo
    and hi; bars: (name, x, y) series grouped side by side, each group `bar_width` wide from its x.
    x_range: the x span shown (a zoom), else the data's; points thinned to about the chart's width
    (first, min and max per bucket: the shape kept)."""
    from html import escape

    ml, mr, mt, mb = _SVG_MARGINS
    named = [s[0] for s in steps if s[0]] + [b[0] for b in bars if b[0]]
    legend = len(named) > 1
    height += 22 if legend else 0
    w, h = width - ml - mr, height - mt - mb - (22 if legend else 0)
    head = _svg_head(title, width, height)
    steps = [(s[0], np.asarray(s[1], dtype=float), np.asarray(s[2], dtype=float), s[3] if len(s) > 3 else True)
             for s in steps]
    bars = [(b[0], np.asarray(b[1], dtype=float), np.asarray(b[2], dtype=float)) for b in bars]
    band = None if band is None else tuple(np.asarray(a, dtype=float) for a in band)
    xs = [s[1] for s in steps] + [b[1] for b in bars] + ([band[0]] if band is not None else [])
    xs = [x for x in xs if len(x)]
    if not xs:
        return head + (f'<text x="{ml + w / 2}" y="{mt + h / 2}" text-anchor="middle">no data in this window</text>'
                       '</svg>')
    bw = float(bar_width) if bar_width else 0.0
    x0 = float(min(x.min() for x in xs))
    x1 = max(float(max(x.max() for x in xs)) + bw, float(end) if end is not None else -np.inf)
    if x_range is not None:
        x0, x1 = float(x_range[0]), float(x_range[1])
    x1 = x1 if x1 > x0 else x0 + 1.0
    stop = float(end) if end is not None else x1

    def shown(x, *vals):  # the points within [x0, x1], with the value holding at x0
        i = max(int(np.searchsorted(x, x0, side="right")) - 1, 0)
        j = int(np.searchsorted(x, x1, side="right"))
        return (x[i:j], *(v[i:j] for v in vals))

    steps = [(n, *shown(x, y), f) for n, x, y, f in steps]
    if band is not None:
        band = shown(*band)
    tops = [np.nanmax(y) for _, x, y, _ in steps if len(y)] + [np.nanmax(y) for _, x, y in bars if len(y)]
    if band is not None and len(band[0]):
        tops.append(np.nanmax(band[2]))
    top = max([float(t) for t in tops if np.isfinite(t)] + [1.0])
    ystep = next(m * 10 ** k for k in range(0, 12) for m in (1, 2, 5) if m * 10 ** k >= top / 5)
    top = ystep * np.ceil(top / ystep)

    def px(v):
        return ml + (np.asarray(v, dtype=float) - x0) / (x1 - x0) * w

    def py(v):
        return mt + h - np.asarray(v, dtype=float) / top * h

    def poly(X, Y):
        return "".join(f"L{a:.1f},{b:.1f}" for a, b in zip(px(X), py(Y)))[1:]

    out = [head, f'<defs><clipPath id="plot"><rect x="{ml}" y="{mt - 1}" width="{w}" height="{h + 2}"/>'
                 '</clipPath></defs><g clip-path="url(#plot)">']
    if band is not None and len(band[0]):  # under the lines
        x, lo, hi = band
        Xh, Yh = _step_vertices(np.maximum(x, x0), hi, stop)
        Xl, Yl = _step_vertices(np.maximum(x, x0), lo, stop)
        out.append(f'<path d="M{poly(np.r_[Xh, Xl[::-1]], np.r_[Yh, Yl[::-1]])}Z" fill="{SVG_FILL}" stroke="none"/>')
    for k, (_name, x, y, fill) in enumerate(steps):
        if not len(x):
            continue
        x, y = _thin_steps(x, y, max_points)
        X, Y = _step_vertices(np.maximum(x, x0), y, max(stop, float(x[-1])))
        color = SVG_LINE if k == 0 else SVG_COLORS[k % len(SVG_COLORS)]
        d = f"M{px(X[0]):.1f},{py(0):.1f}L" + poly(X, Y) + f"L{px(X[-1]):.1f},{py(0):.1f}Z" if fill \
            else "M" + poly(X, Y)
        out.append(f'<path d="{d}" fill="{SVG_FILL if fill else "none"}" stroke="{color}" stroke-width="1"/>')
    k = len(bars)
    for i, (_name, x, y) in enumerate(bars):
        keep = (x + bw >= x0) & (x <= x1)
        color = SVG_COLORS[i % len(SVG_COLORS)]
        bx = px(x[keep] + bw * i / k)
        bwp = max(bw / k * w / (x1 - x0) * 0.9, 0.5)
        out.append("".join(f'<rect x="{a:.1f}" y="{b:.1f}" width="{bwp:.1f}" height="{py(0) - b:.1f}" '
                           f'fill="{color}"/>' for a, b in zip(bx, py(y[keep])) if py(0) - b > 0))
    out.append("</g>")
    out += [f'<line x1="{ml}" y1="{mt + h}" x2="{ml + w}" y2="{mt + h}" stroke="#888"/>',
            f'<line x1="{ml}" y1="{mt}" x2="{ml}" y2="{mt + h}" stroke="#888"/>']
    for v in np.arange(0.0, top + ystep / 2, ystep):
        out.append(f'<text x="{ml - 6}" y="{py(v) + 4:.1f}" text-anchor="end">{fmt_num(v)}</text>'
                   f'<line x1="{ml}" y1="{py(v):.1f}" x2="{ml + w}" y2="{py(v):.1f}" stroke="#ddd" '
                   'stroke-width="0.5"/>')
    if x_time:  # a label that would pass the picture's edge is left out (its tick stays)
        ticks = list(zip(*time_ticks(x0, x1)))
        out += [(f'<text x="{px(v):.1f}" y="{mt + h + 16}" text-anchor="middle">{t}</text>'
                 if 3.4 * len(t) <= px(v) <= width - 3.4 * len(t) else "")
                + f'<line x1="{px(v):.1f}" y1="{mt + h}" x2="{px(v):.1f}" y2="{mt + h + 4}" stroke="#888"/>'
                for v, t in ticks]
    else:
        out += [f'<text x="{px(v):.1f}" y="{mt + h + 16}" text-anchor="{a}">{fmt_num(v)}</text>'
                for v, a in ((x0, "start"), ((x0 + x1) / 2, "middle"), (x1, "end"))]
    out.append(f'<text x="{ml + w / 2}" y="{mt + h + 34}" text-anchor="middle">{escape(x_title)}</text>')
    out.append(f'<text transform="translate(14,{mt + h / 2}) rotate(-90)" text-anchor="middle">'
               f'{escape(y_title)}</text>')
    if legend:
        items = [(s[0], SVG_LINE if i == 0 else SVG_COLORS[i % len(SVG_COLORS)]) for i, s in enumerate(steps) if s[0]]
        items += [(b[0], SVG_COLORS[i % len(SVG_COLORS)]) for i, b in enumerate(bars) if b[0]]
        out.append(_svg_legend(items, ml, height - 8, width - mr)[0])
    return "".join(out) + "</svg>"


def svg_share_bar(parts: Sequence[tuple[str, float, str]], title: str, unit: str = "node-hours",
                  width: int = 900) -> str:
    """One horizontal bar split into parts (label, value, colour): where a total went (the Idle page's
    idle split, as sreport splits a machine), each part's share of the total; a legend with each
    part's value and share. Parts of 0 are left out."""
    from html import escape

    parts = [(n, float(v), c) for n, v, c in parts if float(v) > 0]
    ml, mr, mt = 12, 12, 28
    total = sum(v for _, v, _ in parts)
    legend, rows = _svg_legend([(f"{n}: {fmt_num(v)} ({100 * v / total:.1f} %)", c) for n, v, c in parts],
                               ml, mt + 46, width - mr) if total > 0 else ("", 1)
    height = mt + 30 + 20 * rows + 8
    out = [_svg_head(title, width, height, title_x=ml)]
    if total <= 0:
        return out[0] + f'<text x="{width / 2}" y="{mt + 18}" text-anchor="middle">no node-hours</text></svg>'
    x, w = float(ml), width - ml - mr
    for name, v, color in parts:
        bw = v / total * w
        out.append(f'<rect x="{x:.1f}" y="{mt}" width="{bw:.1f}" height="24" fill="{color}">'
                   f'<title>{escape(name)}: {fmt_num(v)} {escape(unit)} ({100 * v / total:.1f} %)</title></rect>')
        x += bw
    out.append(legend)
    return "".join(out) + "</svg>"


# the colour of an experiment's bar by how it reads (planner.studies.common.READINGS)
GAP_COLORS = {"explains": "#29b09d", "past": "#ff8c00", "miss": "#83c9ff", "fitted": "#a3a8b8"}
GAP_LIMITS = (-1.0, 3.0)  # the x axis' widest span (shares of the gap); a bar past it ends in an arrow


def svg_gap_bars(items: Sequence[tuple[str, float, str, str]], title: str, legend: Mapping[str, str],
                 band: tuple[float, float] = (0.5, 1.5), width: int = 900) -> str:
    """How much of the gap between ours and the paper's value each one-change experiment closes, one
    horizontal bar each (label, share closed, reading, full text for the hover): 0 % is our value, 100 %
    the paper's, `band` (shaded) the shares that explain the gap; a bar past GAP_LIMITS is cut and ends
    in an arrow, its value printed; `legend`: each reading's words (those drawn). Static SVG (no Plotly):
    the Papers page's reasons."""
    from html import escape

    label_w, ml_gap, mr, mt, row_h = 380, 8, 52, 46, 22
    ml = label_w + ml_gap
    w = width - ml - mr
    vals = [float(c) for _, c, _, _ in items]
    lo = max(min([0.0, -0.25] + vals), GAP_LIMITS[0])
    hi = min(max([band[1] + 0.25] + vals), GAP_LIMITS[1])
    bottom = mt + row_h * max(len(items), 1)
    shown = [k for k in GAP_COLORS if any(r == k for _, _, r, _ in items)]
    key, rows = _svg_legend([(legend.get(k, k), GAP_COLORS[k]) for k in shown], ml, bottom + 56, width - mr)
    height = bottom + 42 + 20 * rows
    out = [_svg_head(title, width, height, title_x=0)]

    def px(v):
        return ml + (min(max(v, lo), hi) - lo) / (hi - lo) * w

    out.append(f'<rect x="{px(band[0]):.1f}" y="{mt - 4}" width="{px(band[1]) - px(band[0]):.1f}" '
               f'height="{bottom - mt + 4}" fill="rgba(41,176,157,0.12)"><title>closes {100 * band[0]:.0f}-'
               f'{100 * band[1]:.0f} % of the gap: explains it</title></rect>')
    for v, name in ((0.0, "ours"), (1.0, "paper")):
        out.append(f'<line x1="{px(v):.1f}" y1="{mt - 4}" x2="{px(v):.1f}" y2="{bottom}" stroke="#888" '
                   f'stroke-dasharray="{"none" if v == 0 else "4,3"}"/>'
                   f'<text x="{px(v):.1f}" y="{mt - 8}" text-anchor="middle">{name}</text>')
    for i, (label, c, reading, full) in enumerate(items):
        y = mt + i * row_h
        x0, x1 = sorted((px(0.0), px(c)))
        cut = c > hi or c < lo
        short = label if len(label) <= 56 else label[:55].rsplit(" ", 1)[0] + " ..."
        out.append(f'<g><title>{escape(full)}: closes {100 * c:.0f} % of the gap</title>'
                   f'<text x="{label_w}" y="{y + 14}" text-anchor="end">{escape(short)}</text>'
                   f'<rect x="{x0:.1f}" y="{y + 4}" width="{max(x1 - x0, 1.0):.1f}" height="{row_h - 8}" '
                   f'fill="{GAP_COLORS.get(reading, GAP_COLORS["miss"])}"/>')
        if cut:  # an arrow head at the axis' end
            tip, back = (px(hi) + 8, px(hi)) if c > hi else (px(lo) - 8, px(lo))
            out.append(f'<path d="M{back:.1f},{y + 4}L{tip:.1f},{y + row_h / 2:.1f}L{back:.1f},{y + row_h - 4}Z" '
                       f'fill="{GAP_COLORS.get(reading, GAP_COLORS["miss"])}"/>')
        # the value beside the bar's end; inside the bar where that would leave the plot (or meet the labels)
        tx, anchor, inside = (x1 + (10 if cut else 4), "start", False) if c >= 0 else (x0 - 4, "end", False)
        if c >= 0 and tx > width - 40:
            tx, anchor, inside = x1 - 4, "end", True
        elif c < 0 and cut:
            tx, anchor, inside = x0 + 4, "start", True
        fill = ' fill="#262730"' if inside else ""
        out.append(f'<text x="{tx:.1f}" y="{y + 14}" text-anchor="{anchor}"{fill}>{round(100 * c)} %</text></g>')
    out.append(f'<line x1="{ml}" y1="{bottom}" x2="{ml + w}" y2="{bottom}" stroke="#888"/>')
    step = next(s for s in (0.25, 0.5, 1.0) if (hi - lo) / s <= 8)
    for t in np.arange(np.ceil(lo / step) * step, hi + 1e-9, step):
        out.append(f'<line x1="{px(t):.1f}" y1="{bottom}" x2="{px(t):.1f}" y2="{bottom + 4}" stroke="#888"/>'
                   f'<text x="{px(t):.1f}" y="{bottom + 16}" text-anchor="middle">{round(100 * t)} %</text>')
    out.append(f'<text x="{ml + w / 2}" y="{bottom + 34}" text-anchor="middle">share of the gap between ours and '
               'the paper closed by the one change</text>')
    out.append(key)
    return "".join(out) + "</svg>"
