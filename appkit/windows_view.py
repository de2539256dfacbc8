"""The many-window part of the Planner and of Compare (one component): a scenario over many
windows of its log, each headline as median with its 10-90 % band and every window's value as a
strip, the paired comparison with the baseline, and what each allocator reaches of its cost-free
replay; and the Planner run's limits (cost-free twin, clairvoyant bound on a button).

Figure and table builders are pure (a `planner.replay.windows.run_windows` result -> figure /
DataFrame); `render(sc, allocators, baseline, name, key)` is the one call each page makes. The
last run of each page is saved in the workspace (windows/<name>.json) so that it survives a
reload of the page (the link keeps ws=).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from appkit.charts import _layout
from appkit.uploads import md
from planner.report import glossary

FILE = Path("windows") / "latest.json"
METRICS = ("utilization_efficiency", "cost_free_utilization_efficiency", "allocated_share", "trainers_completed")


def label(key: str) -> tuple[str, str]:
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


def where(out: dict) -> str:
    """', in a pool of 2 worker processes' (the local pool the run had), ', on a Dask cluster (N
    worker processes)' (those that replayed a window), or ''."""
    if out.get("executor") == "dask":
        procs = {r.get("worker") for r in out.get("rows", []) if r.get("worker")}
        return f", on a Dask cluster ({len(procs)} worker process{'es' if len(procs) != 1 else ''})"
    if out.get("executor") == "local" and int(out.get("workers") or 1) > 1:
        return f", in a pool of {int(out['workers'])} worker processes"
    return ", in 1 worker process" if out.get("executor") else ""


def save(ws_dir, out: dict, name: str = "latest") -> None:
    from appkit import workspace
    from planner.cli import _clean

    d = workspace.private_dir(Path(ws_dir) / FILE.parent)
    workspace.write_private(d / f"{name}.json", json.dumps(_clean(out)).encode())


def load(ws_dir, name: str = "latest") -> dict | None:
    try:
        return json.loads((Path(ws_dir) / FILE.parent / f"{name}.json").read_text())
    except (OSError, ValueError):
        return None


def save_bound(ws_dir, rid: str, cv: dict) -> None:
    """A Planner run's clairvoyant bound, beside the run."""
    from appkit import workspace
    from planner.cli import _clean

    workspace.write_private(workspace.run_dir(Path(ws_dir), rid) / "clairvoyant.json", json.dumps(_clean(cv)).encode())


def load_bound(ws_dir, rid: str | None) -> dict | None:
    from appkit import workspace
    from planner.errors import InputError

    try:
        return json.loads((workspace.run_dir(Path(ws_dir), rid) / "clairvoyant.json").read_text()) if rid else None
    except (OSError, ValueError, InputError):
        return None


BOUND_TIME_LIMIT_S = 60.0


def render_limits(last: dict, summaries: dict) -> None:
    """The Planner run's limits (Streamlit): each allocator's cost-free twin, and the clairvoyant
    bound of the window (computed on a button, as a background job; saved beside the run)."""
    import streamlit as st

    from appkit import data, session
    from planner.errors import InputError
    from planner.replay import bounds

    st.subheader("Limits of this run")
    cv = next((s["clairvoyant"] for s in summaries.values() if s.get("clairvoyant")), None)
    cv = cv or load_bound(session.ws_dir(), last.get("rid"))
    for line in bounds.limit_lines(summaries, cv):
        st.markdown(line)
    st.caption(glossary.LIMITS_NOTE)
    if cv is not None:
        st.caption(bounds.bound_note(cv))
        return
    row = st.container(horizontal=True, vertical_alignment="bottom")  # the button's label whole at any width
    sc = last["scenario"]
    clicked = row.button("Compute the clairvoyant bound", key="pl_bound",
                         disabled=session.active_job("bound") is not None or not last.get("rid"))
    limit = row.number_input("Solver time limit (s)", min_value=1.0, max_value=3600.0, value=BOUND_TIME_LIMIT_S,
                             step=10.0, key="pl_bound_limit", width=220,
                             help="HiGHS stops here; its dual bound is then the bound (valid, maybe loose)")
    st.caption("A time-expanded MILP (Pyomo + HiGHS) that knows the window's whole future: an upper bound on "
               "any online allocator here. Small windows only (a few hundred pool events, tens of Trainers); "
               "a larger one is refused with the reason. Stopped at the time limit, HiGHS' dual bound is reported "
               "with its gap.")
    if clicked and session.active_job("bound") is None:
        first = next(iter(summaries.values()))
        try:
            session.start_job("bound", "bound", {
                "scenario": dict(sc), "db": data.db_path_for_log(sc["log"]), "rid": last["rid"],
                "static_samples": first.get("static_samples"), "time_limit_s": float(limit),
                "ws_dir": str(session.ws_dir())})
        except InputError as e:
            st.error(md(str(e)))
    outcome = session.follow_job("bound", "clairvoyant bound")
    if outcome is not None and not session.show_failure(outcome, "clairvoyant bound"):
        st.rerun()


def render(sc: dict, allocators=None, baseline: str | None = None, name: str = "latest", key: str = "mw",
           where: str = "the Planner's allocator and baseline") -> None:
    """The section (Streamlit): its form, the run as a background job, the saved result.
    allocators/baseline: those of the run (default: the Planner's pair); name: the saved file;
    key: the widgets' prefix (one per page)."""
    import streamlit as st

    from appkit import data, session
    from planner.errors import InputError
    from planner.replay.windows import default_baseline

    if allocators is None:
        base = sc.get("baseline") if sc.get("baseline") not in (None, "none", sc["allocator"]) else None
        allocators = [sc["allocator"], *([base] if base else [])]
    allocators = list(dict.fromkeys(allocators))
    baseline = baseline or (default_baseline(allocators) if len(allocators) > 1 else None)
    slot = f"windows_{name}"
    st.subheader("Many windows")
    with st.expander("Run this scenario over many windows of the log (spread, paired comparison)",
                     expanded=load(session.ws_dir(), name) is not None):
        c = st.columns(5)
        hours = c[0].number_input("Window length (h)", min_value=0.25, max_value=24.0 * 30, value=6.0, step=1.0,
                                  key=f"{key}_hours")
        which = c[1].text_input("Windows: all, or a number of random ones", value="8", key=f"{key}_windows")
        stride = c[2].number_input("Stride with all (h, 0 = window length)", min_value=0.0, value=0.0, step=1.0,
                                   key=f"{key}_stride")
        from appkit import worker

        scheduler = worker.dask_scheduler()
        cap = min(worker.user_procs(), worker.max_jobs())
        procs = c[3].number_input("Worker processes", min_value=1, max_value=cap, value=min(2, cap), step=1,
                                  key=f"{key}_procs", disabled=scheduler is not None,
                                  help=(f"the windows run on the Dask cluster at {scheduler}" if scheduler else
                                        f"local processes replaying windows in parallel; at most {cap} per user "
                                        f"(PLANNER_APP_USER_PROCS) and {worker.max_jobs()} on the server over all "
                                        "users (PLANNER_APP_MAX_JOBS): fewer when others are running"))
        others = [a for a in allocators if a != baseline]
        c[4].caption(f"Allocators: {', '.join(others or allocators)}" + (f" vs {baseline}" if baseline else "") +
                     f" ({where}); the other settings as above.")
        go_clicked = st.button("Run over many windows", key=f"{key}_run",
                               disabled=sc["pool"] != "log" or not allocators or session.active_job(slot) is not None)
        if sc["pool"] != "log":
            st.caption("Many windows need a log pool.")
        if go_clicked and session.active_job(slot) is None:
            try:
                from planner.replay import windows as W

                k = W.parse_windows(which)
                session.start_job(slot, "windows", {
                    "scenario": dict(sc), "db": data.db_path_for_log(sc["log"]), "hours": float(hours),
                    "count": k, "stride": float(stride) or None, "ws_dir": str(session.ws_dir()),
                    "allocators": allocators, "baseline": baseline, "name": name, "scheduler": scheduler},
                    procs=1 if scheduler else int(procs))
            except InputError as e:
                st.error(md(str(e)))
        outcome = session.follow_job(slot, "many-window run")
        if outcome is not None:
            session.show_failure(outcome, "many-window run")
    out = load(session.ws_dir(), name)
    if out is None:
        return
    show(out, key)


def show(out: dict, key: str = "mw") -> None:
    """A saved many-window run (Streamlit): the paired sentences, the limits, the band and strip
    plot, the spread table and every window."""
    import streamlit as st

    st.caption(f"{out['windows']} windows of {out['window_hours']:g} h of {out.get('log')}, "
               f"{', '.join(out['allocators'])}; {out['wall_s']:.1f} s wall time{where(out)}.")
    for p in out["summary"]["paired"].values():
        st.markdown(f"**{p['sentence']}.** Sign test p = {p['utilization_efficiency']['sign_test_p']:.3g}"
                    if p["utilization_efficiency"]["sign_test_p"] is not None else f"**{p['sentence']}.**")
    for line in headroom_lines(out):
        st.caption(line)
    st.caption(glossary.LIMITS_NOTE)
    st.plotly_chart(band_strip_figure(out), key=f"{key}_fig_u", width="stretch")
    st.dataframe(spread_table(out), hide_index=True, width="stretch")
    with st.expander("Every window"):
        st.dataframe(pd.DataFrame(out["rows"]), hide_index=True, width="stretch")
