"""Figures of the operator views (planner.idle.views): pure functions from DataFrames to go.Figure.

Same rules as appkit.charts (whose layout and number helpers they use): units on every axis,
zero-based node-hours, whole ticks for counts, no empty categories (a hole size or length with
no holes is not drawn; heatmap cells the window never covers are blank, not 0).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from appkit.charts import _empty, _layout, duration_ticks, fmt_num, zero_based


def weekhour_heatmap(df: pd.DataFrame, clock: str = "UTC") -> go.Figure:
    """planner.idle.views.by_hour_weekday -> 7 x 24 heatmap of idle node-hours (Monday on top)."""
    title = f"Idle node-hours by hour of day and day of week ({clock})"
    if df is None or df.empty or not (df["covered_h"] > 0).any():
        return _empty(title)
    z = df.pivot(index="weekday", columns="hour", values="idle_node_hours").to_numpy(dtype=float)
    cov = df.pivot(index="weekday", columns="hour", values="covered_h").to_numpy(dtype=float)
    mean = df.pivot(index="weekday", columns="hour", values="mean_idle_nodes").to_numpy(dtype=float)
    z = np.where(cov > 0, z, np.nan)
    names = list(df.drop_duplicates("weekday").sort_values("weekday")["weekday_name"])
    text = [[f"{fmt_num(z[i, j], 'node-h')} over {fmt_num(cov[i, j], 'h')}, mean {fmt_num(mean[i, j], 'idle nodes')}"
             if cov[i, j] > 0 else "not in the window" for j in range(24)] for i in range(7)]
    fig = go.Figure(go.Heatmap(
        z=z, x=[f"{h:02d}" for h in range(24)], y=names, customdata=text, colorscale="Blues",
        colorbar=dict(title=dict(text="idle node-h"), tickformat=",.0f"), zmin=0, hoverongaps=False,
        hovertemplate="%{y} %{x}:00: %{customdata}<extra></extra>"))
    fig = _layout(fig, title, f"hour of day ({clock})", "day of week", hovermode="closest")
    fig.update_yaxes(autorange="reversed", type="category")
    fig.update_xaxes(type="category")
    return fig


def day_bars(df: pd.DataFrame, clock: str = "UTC") -> go.Figure:
    """planner.idle.views.by_day -> idle node-hours per calendar day (hover: mean idle nodes, ratio)."""
    title = f"Idle node-hours per calendar day ({clock})"
    if df is None or df.empty:
        return _empty(title)
    def line(a, m, r, c, d):
        part = "" if c >= d - 0.01 else f"; partial day: {fmt_num(c, 'h')} of its {fmt_num(d, 'h')} in the window"
        return f"{fmt_num(a, 'node-h')}; mean {fmt_num(m, 'idle nodes')} ({100 * r:.1f} % of the machine){part}"

    text = [line(*v) for v in zip(df["idle_node_hours"], df["mean_idle_nodes"], df["idle_ratio"], df["covered_h"],
                                  df["day_h"])]
    fig = go.Figure(go.Bar(x=pd.to_datetime(df["day"]), y=df["idle_node_hours"], customdata=text,
                           name="idle node-hours", hovertemplate="%{x|%a %Y-%m-%d}: %{customdata}<extra></extra>"))
    fig = _layout(fig, title, "day", "idle node-hours", hovermode="closest", bargap=0.1)
    fig.update_yaxes(tickformat=",.0f")
    return zero_based(fig)


def holes_heatmap(df: pd.DataFrame) -> go.Figure:
    """planner.idle.views.holes -> heatmap of node-hours by hole size (rows) and length (columns);
    only sizes and lengths that have holes."""
    title = "Idle holes: node-hours by size (nodes idle at once) and length"
    if df is None or df.empty:
        return _empty(title)
    sizes = df.drop_duplicates("nodes_min").sort_values("nodes_min")["size"].tolist()
    lengths = df.drop_duplicates("length_min_s").sort_values("length_min_s")["length"].tolist()
    z = df.pivot(index="size", columns="length", values="node_hours").reindex(index=sizes, columns=lengths)
    n = df.pivot(index="size", columns="length", values="holes").reindex(index=sizes, columns=lengths)
    zz, nn = z.to_numpy(dtype=float), n.to_numpy(dtype=float)
    dense = zz.size > 60  # too many cells to print a number in each: hover only
    cells = [["" if dense or not np.isfinite(v) else fmt_num(v) for v in row] for row in zz]
    hover = [[f"{fmt_num(v, 'node-h')} in {fmt_num(c)} holes" if np.isfinite(v) else "no holes"
              for v, c in zip(rz, rn)] for rz, rn in zip(zz, nn)]
    fig = go.Figure(go.Heatmap(
        z=zz, x=lengths, y=[f"{s} node" if s == "1" else f"{s} nodes" for s in sizes], text=cells,
        texttemplate="%{text}", customdata=hover,
        colorscale="Blues", zmin=0, colorbar=dict(title=dict(text="node-h"), tickformat=",.0f"), hoverongaps=False,
        hovertemplate="at least %{y} idle together for %{x}: %{customdata}<extra></extra>"))
    fig = _layout(fig, title, "hole length", "hole size", hovermode="closest",
                  height=max(360, 140 + 24 * len(sizes)))
    fig.update_xaxes(type="category", tickangle=-45)
    fig.update_yaxes(type="category")
    return fig


def partition_bars(df: pd.DataFrame) -> go.Figure:
    """planner.idle.job_views.by_partition -> horizontal bars of idle node-hours with their share."""
    label = str(df["label"].iloc[0]) if df is not None and len(df) else "partition"
    basis = str(df["basis"].iloc[0]) if df is not None and len(df) else ""
    title = f"Idle node-hours by {label} ({basis})"
    if df is None or df.empty:
        return _empty(title)
    d = df.sort_values("idle_node_hours")
    harv = d["harvestable_node_hours"] if "harvestable_node_hours" in d else d["idle_node_hours"]
    fig = go.Figure(go.Bar(
        y=d["partition"].astype(str), x=harv, orientation="h", name="harvestable idle node-hours",
        text=[f"{fmt_num(v, 'node-h')} ({100 * s:.1f} %)" for v, s in zip(d["idle_node_hours"], d["share"])],
        textposition="auto", hovertemplate="%{y}: %{text}<extra></extra>"))
    if "outage_node_hours" in d and (d["outage_node_hours"] > 0).any():
        fig.add_bar(y=d["partition"].astype(str), x=d["outage_node_hours"], orientation="h",
                    name="in the partition's own outages (excluded)", marker_color="#bbbbbb",
                    hovertemplate="%{y}: %{x:,.0f} node-h in partition-wide outages<extra></extra>")
        fig.update_layout(barmode="stack")
    fig = _layout(fig, title, "idle node-hours", label, hovermode="closest",
                  height=max(260, 80 + 28 * len(d)))
    fig.update_xaxes(tickformat=",.0f")
    fig.update_yaxes(type="category")
    return zero_based(fig, "x")


def label_bars(df: pd.DataFrame, what: str) -> go.Figure:
    """planner.idle.job_views.by_label (its largest rows) -> grouped horizontal bars: idle node-hours
    attributed to each name's waiting jobs and the node-hours its jobs used."""
    title = f"Idle and used node-hours per {what} (the {len(df)} with most idle)"
    if df is None or df.empty:
        return _empty(title)
    d = df.iloc[::-1]
    y = d["name"].astype(str)
    fig = go.Figure([
        go.Bar(y=y, x=d["idle_node_hours"], orientation="h", name="idle while its jobs waited",
               hovertemplate="%{y}: %{x:,.0f} idle node-h<extra></extra>"),
        go.Bar(y=y, x=d["used_node_hours"], orientation="h", name="used by its jobs",
               hovertemplate="%{y}: %{x:,.0f} node-h used<extra></extra>")])
    fig = _layout(fig, title, "node-hours", what, hovermode="closest", height=max(300, 90 + 22 * len(d)))
    fig.update_layout(barmode="group")
    fig.update_xaxes(tickformat=",.0f")
    fig.update_yaxes(type="category")
    return zero_based(fig, "x")


WAIT_PARTS = (("idle_no_wait_node_hours", "no job waiting (nothing to run)"),
              ("idle_while_waiting_none_fit_node_hours", "jobs waiting, none fit the idle nodes"),
              ("idle_while_waiting_some_fit_node_hours", "jobs waiting, one would fit"))


def waiting_bars(w: Mapping[str, float]) -> go.Figure:
    """planner.idle.job_views.idle_while_waiting -> the idle node-hours split three ways."""
    title = "Where the idle capacity comes from"
    if not w:
        return _empty(title, "no submit times in this log")
    total = sum(float(w[k]) for k, _ in WAIT_PARTS) or 1.0
    names = [lab for _, lab in WAIT_PARTS]
    vals = [float(w[k]) for k, _ in WAIT_PARTS]
    fig = go.Figure(go.Bar(y=names, x=vals, orientation="h", name="idle node-hours",
                           text=[f"{fmt_num(v, 'node-h')} ({100 * v / total:.1f} %)" for v in vals],
                           textposition="auto", hovertemplate="%{y}: %{text}<extra></extra>"))
    fig = _layout(fig, title, "idle node-hours", "", hovermode="closest", height=260)
    fig.update_xaxes(tickformat=",.0f")
    fig.update_yaxes(autorange="reversed")
    return zero_based(fig, "x")


def compare_cdfs(cdfs: pd.DataFrame, weight: str = "cdf_nodetime") -> go.Figure:
    """Fragment-length CDFs of several logs on one chart (weight: cdf_nodetime or cdf_count)."""
    by = "idle node-time" if weight == "cdf_nodetime" else "count of fragments"
    title = f"Fragment length CDF by {by}, per log"
    if cdfs is None or cdfs.empty:
        return _empty(title)
    fig = go.Figure()
    for log, g in cdfs.groupby("log", sort=False):
        x, y = g["length_s"].to_numpy(dtype=float), g[weight].to_numpy(dtype=float)
        if len(x) > 4000:
            idx = np.unique(np.linspace(0, len(x) - 1, 4000).astype(int))
            x, y = x[idx], y[idx]
        fig.add_trace(go.Scatter(x=x, y=100 * y, mode="lines", line=dict(shape="hv"), name=str(log),
                                 hovertemplate=f"%{{x:,.0f}} s: %{{y:.1f}} %<extra>{log}</extra>"))
    fig = _layout(fig, title, "fragment length (log scale)", "cumulative share (%)", hovermode="closest")
    xs = cdfs["length_s"].to_numpy(dtype=float)
    xs = xs[xs > 0]
    fig.update_xaxes(type="log")
    if len(xs):
        vals, text = duration_ticks(float(xs.min()), float(xs.max()))
        fig.update_xaxes(tickvals=vals, ticktext=text)
    fig.update_yaxes(range=[0, 101])
    return fig

