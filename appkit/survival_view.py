"""The Idle page's section on predicted idle time: survival curves and calibration of the
survival model of idle fragments (planner.predict.survival, planner.predict.evaluate).

Figure builders are pure (DataFrames -> go.Figure, no Streamlit; scripts/survival_study.py
uses them too); `render(log, pool_size)` is the one call the Idle page makes.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from appkit.charts import _layout
from appkit.uploads import md
from planner.errors import InputError
from planner.idle.window import Window
from planner.predict import evaluate

MODEL_NAMES = {"cox": "Cox (all covariates)", "km": "Kaplan-Meier (time idle only)",
               "naive": "naive: remaining = time idle"}


def curves_figure(curves_by_log: Mapping[str, pd.DataFrame], title: str = "Remaining idle time") -> go.Figure:
    """Survival of the remaining idle time by time already idle, KM (dashed) and Cox (solid)."""
    fig = go.Figure()
    for log, df in curves_by_log.items():
        for (model, age), g in df.groupby(["model", "age_s"], sort=False):
            name = f"{log + ': ' if len(curves_by_log) > 1 else ''}{model}, idle {age / 60:g} min"
            fig.add_trace(go.Scatter(x=g.time_s[g.time_s > 0], y=g.survival[g.time_s > 0], mode="lines", name=name,
                                     line=dict(dash="dash" if model == "km" else "solid"),
                                     hovertemplate="%{x:,.0f} s: %{y:.2f}<extra>" + name + "</extra>"))
    fig.update_xaxes(type="log")
    return _layout(fig, title, "remaining idle time (s, log scale)", "P(still idle)", hovermode="closest")


def calibration_figure(cal_by_log: Mapping[str, pd.DataFrame],
                       title: str = "Calibration on the test span") -> go.Figure:
    """Predicted vs observed (Kaplan-Meier) median remaining idle time per decile of prediction."""
    fig = go.Figure()
    lo, hi = np.inf, 0.0
    for log, cal in cal_by_log.items():
        ok = cal[np.isfinite(cal.predicted_median_s) & np.isfinite(cal.observed_median_s)
                 & (cal.predicted_median_s > 0)]
        for model, g in ok.groupby("model", sort=False):
            name = f"{log + ': ' if len(cal_by_log) > 1 else ''}{MODEL_NAMES.get(model, model)}"
            fig.add_trace(go.Scatter(x=g.predicted_median_s, y=g.observed_median_s, mode="lines+markers", name=name,
                                     hovertemplate="predicted %{x:,.0f} s, observed %{y:,.0f} s<extra>"
                                     + name + "</extra>"))
        if len(ok):
            lo = min(lo, ok.predicted_median_s.min(), ok.observed_median_s.min())
            hi = max(hi, ok.predicted_median_s.max(), ok.observed_median_s.max())
    if hi > 0:
        fig.add_trace(go.Scatter(x=[lo, hi], y=[lo, hi], mode="lines", name="perfect",
                                 line=dict(dash="dot", color="gray")))
    fig.update_xaxes(type="log")
    fig.update_yaxes(type="log")
    return _layout(fig, title, "predicted median remaining idle time (s)", "observed median (s)", hovermode="closest")


def figures_table(figs: dict) -> pd.DataFrame:
    rows = []
    for m in ("cox", "km", "naive"):
        rows.append({"predictor": MODEL_NAMES[m], "concordance": figs["concordance"].get(m),
                     "share idle at predicted median (0.5 = calibrated)": figs["share_idle_at_predicted_median"].get(m),
                     "median |log2(pred/obs)| by decile": figs["median_abs_log2_error"].get(m)})
    return pd.DataFrame(rows)


def _cached(log: str, pool_size):
    """The model's evaluation (planner.predict.evaluate.evaluate_log) cached per database file
    (appkit.data.cached_call): a fit takes seconds."""
    from appkit import data  # Streamlit: scripts/survival_study.py uses the figures without it

    return data.cached_call(evaluate.evaluate_log, Window(log, pool_size=pool_size))


def render(log: str, pool_size=None, unit: str = "node") -> None:
    """The section of the Idle page (Streamlit). Fitting takes seconds: on demand. Labels in the log's
    unit (a GPU trace: GPUs)."""
    import streamlit as st  # (see _cached)

    from appkit import charts
    from planner.report.glossary import in_units

    st.subheader("Predicted idle time (survival model)")
    st.caption(in_units("How long an idle node stays idle: a Cox model (time already idle, hour of day, weekend, "
               "share of the pool idle, the node's recent fragments) and the Kaplan-Meier baseline, fit on "
               "the first 70 % of the whole log, tested on the rest; open fragments count as censored. "
               "Used by `--tfwd adaptive` and `--node-choice predicted` (docs/survival.md).", unit))
    if not st.toggle("Fit the survival model on this log (takes a few seconds)", value=False, key=f"surv_{log}"):
        return
    try:
        with st.spinner("fitting ..."):
            figs, cal, cur = _cached(log, pool_size)
    except InputError as e:
        st.error(md(str(e)))
        return
    if figs.get("derived_identity"):
        st.warning("This log has no node identity: fragments follow the stack rule, not real nodes.")
    st.dataframe(figures_table(figs), hide_index=True, width="stretch")
    c1, c2 = st.columns(2)
    c1.plotly_chart(charts.in_units(curves_figure({log: cur}), unit), key="surv_curves", width="stretch")
    c2.plotly_chart(charts.in_units(calibration_figure({log: cal}), unit), key="surv_cal", width="stretch")
