"""The Planner's many-window section: the scenario over many windows of its log, each headline
as median with its 10-90 % band and every window's value as a strip, the paired comparison
with the baseline, and what each allocator reaches of its cost-free replay.

Figure and table builders are pure (a `planner.replay.windows.run_windows` result -> figure /
DataFrame); `render(sc)` is the one call the Planner page makes. The last run is saved in the
workspace (windows/latest.json) so that it survives a reload of the page (the link keeps ws=).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from appkit.charts import _layout
from planner.report import glossary

FILE = Path("windows") / "latest.json"
METRICS = ("utilization_efficiency", "cost_free_utilization_efficiency", "allocated_share", "trainers_completed")
LABELS = {"cost_free_utilization_efficiency": ("U, cost-free replay", "ratio"),
          "bound_share": ("share of the clairvoyant bound", "ratio")}


def label(key: str) -> tuple[str, str]:
    if key in LABELS:
        return LABELS[key]
    t = glossary.term(key)
    return (t.label, t.unit) if t else (key, "")


def band_strip_figure(out: dict, key: str = "utilization_efficiency") -> go.Figure:
    """Per allocator: every window's value as a strip (jittered points), the 10-90 % band as a
    bar and the median as a diamond."""
    fig = go.Figure()
    allocs = out["allocators"]
    rng = np.random.default_rng(0)
    lab, unit = label(key)
    per = out["summary"]["per_allocator"]
    for i, a in enumerate(allocs):
        vals = [(r["window"], r.get(key)) for r in out["rows"] if r["allocator"] == a and r.get(key) is not None]
        s = per[a][key]
        if s["n"]:
            fig.add_trace(go.Bar(x=[a], y=[s["p90"] - s["p10"]], base=[s["p10"]], width=0.5, opacity=0.25,
                                 name="10-90 % band", showlegend=i == 0, marker_color="#1f77b4",
                                 hovertemplate=f"{a}: 10 % {s['p10']:.3f}, 90 % {s['p90']:.3f}<extra></extra>"))
            fig.add_trace(go.Scatter(x=[a], y=[s["median"]], mode="markers", name="median", showlegend=i == 0,
                                     marker=dict(symbol="diamond", size=14, color="#d62728"),
                                     hovertemplate=f"{a}: median {s['median']:.3f}<extra></extra>"))
        if vals:
            x = i + rng.uniform(-0.15, 0.15, len(vals))
            fig.add_trace(go.Scatter(x=x, y=[v for _, v in vals], mode="markers", name="one window",
                                     showlegend=i == 0, marker=dict(size=7, color="#333", opacity=0.6),
                                     text=[f"window {w}" for w, _ in vals], xaxis="x2",
                                     hovertemplate="%{text}: %{y:.3f}<extra></extra>"))
    fig.update_layout(xaxis2=dict(overlaying="x", range=[-0.5, len(allocs) - 0.5], visible=False),
                      xaxis=dict(categoryorder="array", categoryarray=allocs, range=[-0.5, len(allocs) - 0.5]))
    return _layout(fig, f"{lab} over {out['windows']} windows: median, 10-90 % band, every window",
                   "allocator", f"{lab} ({unit})", hovermode="closest")


def spread_table(out: dict) -> pd.DataFrame:
    """One row per allocator and headline: windows, median, 10-90 % band, CI of the median."""
    rows = []
    for a in out["allocators"]:
        for k in METRICS:
            s = out["summary"]["per_allocator"][a][k]
            lab, unit = label(k)
            ci = s.get("median_ci") or [None, None]
            rows.append({"allocator": a, "metric": lab, "unit": unit, "windows": s["n"], "median": s["median"],
                         "10 %": s["p10"], "90 %": s["p90"], "median CI low": ci[0], "median CI high": ci[1]})
    return pd.DataFrame(rows)


def headroom_lines(out: dict) -> list[str]:
    """'dp: median U 0.886; cost-free 0.907 (gap 0.021)' per allocator."""
    lines = []
    for a in out["allocators"]:
        per = out["summary"]["per_allocator"][a]
        u, cf = per["utilization_efficiency"]["median"], per["cost_free_utilization_efficiency"]["median"]
        if u is None:
            continue
        text = f"{a}: median U {u:.3f}"
        if cf is not None:
            text += f"; the same allocator with free rescaling and preemption {cf:.3f} (headroom {cf - u:+.3f})"
        lines.append(text)
    return lines


def save(ws_dir, out: dict) -> None:
    from appkit import workspace
    from planner.cli import _clean

    d = workspace.private_dir(Path(ws_dir) / FILE.parent)
    workspace.write_private(d / FILE.name, json.dumps(_clean(out)).encode())


def load(ws_dir) -> dict | None:
    try:
        return json.loads((Path(ws_dir) / FILE).read_text())
    except (OSError, ValueError):
        return None


def render(sc: dict) -> None:
    """The section (Streamlit): its form, the run as a background job, the saved result."""
    import streamlit as st

    from appkit import data, session
    from planner.errors import InputError

    st.subheader("Many windows")
    with st.expander("Run this scenario over many windows of the log (spread, paired comparison)",
                     expanded=load(session.ws_dir()) is not None):
        c = st.columns(4)
        hours = c[0].number_input("Window length (h)", min_value=0.25, max_value=24.0 * 30, value=6.0, step=1.0,
                                  key="mw_hours")
        which = c[1].text_input("Windows: all, or a number of random ones", value="8", key="mw_windows")
        stride = c[2].number_input("Stride with all (h, 0 = window length)", min_value=0.0, value=0.0, step=1.0,
                                   key="mw_stride")
        base = sc.get("baseline") if sc.get("baseline") not in (None, "none", sc["allocator"]) else None
        c[3].caption(f"Allocators: {sc['allocator']}" + (f" vs {base}" if base else "") +
                     " (the Planner's allocator and baseline); the other settings as above.")
        go_clicked = st.button("Run over many windows", key="mw_run",
                               disabled=sc["pool"] != "log" or session.active_job("windows") is not None)
        if sc["pool"] != "log":
            st.caption("Many windows need a log pool.")
        if go_clicked and session.active_job("windows") is None:
            try:
                from planner.replay import windows as W

                k = W.parse_windows(which)
                session.start_job("windows", "windows", {
                    "scenario": dict(sc), "db": data.db_path_for_log(sc["log"]), "hours": float(hours),
                    "count": k, "stride": float(stride) or None, "ws_dir": str(session.ws_dir())})
            except InputError as e:
                st.error(str(e))
        outcome = session.follow_job("windows", "many-window run")
        if outcome is not None:
            session.show_failure(outcome, "many-window run")
    out = load(session.ws_dir())
    if out is None:
        return
    st.caption(f"{out['windows']} windows of {out['window_hours']:g} h of {out.get('log')}, "
               f"{', '.join(out['allocators'])}; {out['wall_s']:.1f} s wall time.")
    for p in out["summary"]["paired"].values():
        st.markdown(f"**{p['sentence']}.** Sign test p = {p['utilization_efficiency']['sign_test_p']:.3g}"
                    if p["utilization_efficiency"]["sign_test_p"] is not None else f"**{p['sentence']}.**")
    for line in headroom_lines(out):
        st.caption(line)
    st.plotly_chart(band_strip_figure(out), key="mw_fig_u", width="stretch")
    st.dataframe(spread_table(out), hide_index=True, width="stretch")
    with st.expander("Every window"):
        st.dataframe(pd.DataFrame(out["rows"]), hide_index=True, width="stretch")
