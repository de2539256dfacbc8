"""The Idle page's section on calibrated idle-time probabilities: P(node stays idle >= T) for
T = 5, 15, 30, 60 min, its reliability diagram, ECE (and its over-prediction part), Brier score
against Kaplan-Meier and the naive rule, and the pool guarantee (planner.predict.calibration).

`calibration(con, log, pool_size)` is the cached computation; figure and table builders are pure;
`render(log, pool_size)` is the one call the Idle page makes.
"""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from appkit.charts import _layout
from appkit.uploads import md
from planner.idle.window import Window


def calibration(con, win: Window) -> dict:
    """planner calibrate's figures for a log (fit on the first 70 %, tested on the rest)."""
    from planner.idle import fragments as F
    from planner.predict.calibration import calibrate
    from planner.predict.survival import Fragments

    fr = Fragments.of(F.characterize(con, win))
    out = calibrate(fr, fr.t0 + 0.7 * (fr.t1 - fr.t0), max_rows=30_000, test_rows_max=10_000)
    out["derived_identity"] = fr.derived
    return out


def moment(con, win: Window, at: str) -> dict:
    """planner calibrate --at: the model fit on the log before `at` answers at `at`, per node and
    for the pool (planner.predict.calibration.at_moment); `at` as the user typed it."""
    from planner.idle import fragments as F
    from planner.predict.calibration import at_moment
    from planner.predict.survival import Fragments
    from planner.times import parse_time

    fr = Fragments.of(F.characterize(con, win))
    return at_moment(fr, parse_time(at, field="at"), max_rows=30_000)


def moment_tables(out: dict) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(the pool: per T the k guaranteed at each probability, expected and observed; the nodes:
    one row per node idle at the moment with P(stays idle >= T) per T)."""
    pool = pd.DataFrame([{"T (min)": r["t_min"], **{f"at least k with p {lv}": k for lv, k in r["at_least"].items()},
                          "expected to stay": r["expected"], "stayed (if the log goes on)": r["stayed"]}
                         for r in out["pool"]])
    nodes = pd.DataFrame(out["nodes"]).rename(columns=lambda c: {"node": "node", "idle_for_s": "idle for (s)"}.get(
        c, c.replace("p_", "P(stays >= ").replace("min", " min)")))
    return pool, nodes


def reliability_figure(out: dict) -> go.Figure:
    """Predicted P(stays idle >= T) vs the observed share, per bin and T; the diagonal is perfect."""
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", name="perfectly calibrated",
                             line=dict(dash="dot", color="#888")))
    for r in out["per_t"]:
        rel = r.get("reliability") or []
        if not rel:
            continue
        name = f"T = {r['t_min']:g} min (ECE {100 * r['cox']['ece']:.1f} %)"
        fig.add_trace(go.Scatter(x=[b["predicted"] for b in rel], y=[b["observed"] for b in rel],
                                 mode="lines+markers", name=name, text=[f"{b['rows']:,} rows" for b in rel],
                                 hovertemplate="predicted %{x:.2f}, observed %{y:.2f} (%{text})<extra>" + name
                                 + "</extra>"))
    fig.update_xaxes(range=[0, 1])
    fig.update_yaxes(range=[0, 1])
    return _layout(fig, "Reliability of P(node stays idle >= T) on the test span", "predicted probability",
                   "observed share that stayed", hovermode="closest")


def table(out: dict) -> pd.DataFrame:
    rows = []
    for r in out["per_t"]:
        if not r.get("rows"):
            continue
        c = r["cox"]
        pool = r.get("pool") or {}
        rows.append({"T (min)": r["t_min"], "test rows": r["rows"], "stayed (share)": r["observed_stay_share"],
                     "ECE (%)": 100 * c["ece"], "over-prediction part of ECE (%)": 100 * c["over_ece"],
                     "false 'stays' (share)": c["false_stay_rate"], "Brier model": c["brier"],
                     "Brier Kaplan-Meier": r["km"]["brier"], "Brier naive": r["naive"]["brier"],
                     "Azure target (%)": 100 * r["azure_target"], "below Azure's": r["meets_azure"],
                     "pool: k for p = 0.9 (mean)": pool.get("mean_k"),
                     "pool: guarantee held (share)": pool.get("coverage")})
    return pd.DataFrame(rows)


def render(log: str, pool_size=None, unit: str = "node") -> None:
    """The section (Streamlit); labels in the log's unit (a GPU trace: GPUs)."""
    import streamlit as st

    from appkit import charts, data
    from planner.errors import InputError
    from planner.report.glossary import in_units

    st.subheader("Idle-time predictions as probabilities")
    st.caption(in_units("P(a node idle now stays idle at least T), from the survival model fit on the first 70 % of "
               "the log, measured on the rest: a reliability diagram per T (binned prediction vs observed share), "
               "the expected calibration error (ECE) and its over-prediction part (saying a node stays when it "
               "does not: the harmful direction), Brier scores against the Kaplan-Meier and naive rules, and "
               "the pool guarantee 'at least k nodes stay idle for T with probability 0.9'. Azure's Harvest VMs "
               "report < 2 % error short term, < 6 % longer. CLI: `planner calibrate --log L --json`.", unit))
    if not st.toggle("Measure the calibration on this log (a minute on the Summit log)", value=False,
                     key=f"calib_{log}"):
        return
    try:
        with st.spinner("fitting and measuring ..."):
            out = data.cached_call(calibration, Window(log, pool_size=pool_size))
    except InputError as e:
        st.error(md(str(e)))
        return
    if out.get("derived_identity"):
        st.warning("This log has no node identity: fragments follow the stack rule, not real nodes.")
    st.plotly_chart(charts.in_units(reliability_figure(out), unit), key="calib_fig", width="stretch")
    st.dataframe(table(out).rename(columns=lambda c: in_units(c, unit)), hide_index=True, width="stretch")
    render_moment(log, pool_size, out, unit)


def render_moment(log: str, pool_size, cal: dict, unit: str = "node") -> None:
    """At one moment: per node P(stays idle >= T), and for the pool 'at least k nodes stay idle for
    T with probability p' (the model fit on the log before that moment). Labels in the log's unit."""
    import streamlit as st

    from appkit import data
    from planner.errors import InputError
    from planner.predict.calibration import POOL_P, pool_sentence
    from planner.report.glossary import in_units
    from planner.times import format_iso

    st.markdown(in_units("**At one moment: per node and for the pool**", unit))
    at = st.text_input("Moment (UTC, ISO time or epoch seconds)", value=format_iso(cal["test_start_s"]),
                       key=f"calib_at_{log}", help="the model is fit on the log before this moment and answers for "
                       "the nodes idle at it; where the log goes on, what happened is shown beside it")
    try:
        with st.spinner("fitting and predicting ..."):
            out = data.cached_call(moment, Window(log, pool_size=pool_size), at=at)
    except InputError as e:
        st.error(md(str(e)))
        return
    st.caption(in_units(f"{out['idle_nodes']:,} nodes idle at {format_iso(out['at_s'])}. Pool figures assume the "
                        "nodes leave independently; the guarantee's coverage above says how often that held.", unit))
    for r in out["pool"]:
        st.markdown(in_units(f"- {pool_sentence(r, POOL_P)}", unit))
    pool, nodes = moment_tables(out)
    st.dataframe(pool.rename(columns=lambda c: in_units(c, unit)), hide_index=True, width="stretch")
    with st.expander(in_units(f"Every idle node ({len(nodes):,})", unit)):
        st.dataframe(nodes.rename(columns=lambda c: in_units(c, unit)), hide_index=True, width="stretch")
