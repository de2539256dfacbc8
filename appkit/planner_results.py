"""The Planner's result screen (Streamlit): the capacity answer, the headline numbers, the six charts,
every headline number as a table, and the run's limits (its cost-free twins, the clairvoyant bound).

`show(last, sc)` is what the page draws for its last run (`workspace.load_run`); `sc` is the page's
current scenario (a different one: a note that the settings changed). `parts` draws only some of the
parts, in the page's order: benchmarks/bench_planner_figures.py measures each part's cost in the
browser with it (issue 25, item 6).
"""

from __future__ import annotations

from collections.abc import Mapping

import streamlit as st

from appkit import charts, data, headline, report, session, state, windows_view, zoom
from planner.report import glossary
from planner.report.headline import answered_note, headline_styler, headline_table
from planner.times import parse_time

PARTS = ("capacity", "headline", "figures", "table", "limits")


def _fmt(v):
    """Short enough for a metric tile: 47.8 M, 4,496, 1.17."""
    if v is None:
        return "-"
    return f"{v / 1e9:.3g} G" if abs(v) >= 1e9 else f"{v / 1e6:.3g} M" if abs(v) >= 1e6 else charts.fmt_num(v)


def capacity(last: Mapping, unit: str) -> None:
    """The capacity answer of the first run: six tiles and what they are measured over."""
    from planner.report import capacity as cap_mod

    runs = last["runs"]
    labels = list(runs)
    first = runs[labels[0]]
    cap = cap_mod.answer(first.summary, getattr(first, "trainers", None))
    lsc = last["scenario"]
    st.subheader(glossary.in_units(
        f"Capacity answer: a pool of {int(lsc['pool_size']):,} nodes on {lsc['log']}, {labels[0]}", unit))
    tiles = [("harvestable node-hours / week", cap["harvestable_node_hours_per_week"],
              "The pool's idle node-hours in the window (outages and warm-up excluded unless included), per 168 h"),
             ("delivered node-hours / week", cap["delivered_node_hours_per_week"],
              "Node-hours the Trainers held, per 168 h"),
             ("samples / week", cap["samples_per_week"], "Training samples processed, per 168 h"),
             ("jobs completed / week", cap["jobs_completed_per_week"],
              "Trainers that finished in the window, per 168 h"),
             ("queueing median (min)", None if cap["queue_median_s"] is None else cap["queue_median_s"] / 60,
              "Submit to first nodes, over the Trainers that started"),
             ("queueing p95 (min)", None if cap["queue_p95_s"] is None else cap["queue_p95_s"] / 60,
              "95th percentile of the same")]
    for i in range(0, 6, 3):
        for col, (lab, v, hlp) in zip(st.columns(3), tiles[i:i + 3]):
            col.metric(glossary.in_units(lab, unit), _fmt(v), help=glossary.in_units(hlp, unit))
    st.caption((f"Measured over {cap['window_hours']:g} h and scaled to a week. " if cap["scaled_from_hours"] else "")
               + f"{cap['trainers_arrived'] or 0:,} Trainers arrived; {cap['trainers_waiting_at_end'] or 0:,} "
               "still waited at the window's end (their wait is not in the queueing figures)."
               + (f" Demand-limited: all {cap['trainers_arrived']:,} Trainers had completed "
                  f"{cap['demand_done_h']:.3g} h into the {cap['window_hours']:g} h window and no more came, so "
                  "the pool then sat idle: the delivered figures are this workload's, not the pool's limit."
                  if cap["demand_done_h"] is not None else "")
               + " The idle split behind this capacity: the Idle capacity page.")


def headline_numbers(last: Mapping, unit: str) -> None:
    """The headline metrics and the Trainer flow against the baseline, and what the replays took."""
    runs = last["runs"]
    labels = list(runs)
    summaries = {k: r.summary for k, r in runs.items()}
    st.subheader("Headline numbers")
    headline.show(headline.cells(summaries, headline.headline_rows()), unit=unit)
    headline.show(headline.cells(summaries, headline.FLOW), unit=unit)
    st.caption(f"Replays: {last['wall_s']:.2f} s wall time for {len(runs)} replay(s) (their inputs read and both "
               "replayed; the page's drawing comes on top). "
               f"Metrics show {labels[0]}; the change is against {labels[1] if len(labels) > 1 else 'nothing'}."
               + "".join(f" {note}" for note in map(answered_note, summaries.values()) if note))


def figures(last: Mapping, unit: str) -> None:
    """The six charts, one colour and line style per allocator (the HTML report uses the same); the two
    time charts share one zoom (drag across either); the others are distributions."""
    runs = last["runs"]
    lsc = last["scenario"]
    window_h = float(lsc["hours"])
    figs = {n: charts.in_units(report.style_runs(f, list(runs)), unit) for n, f in
            charts.planner_figures(runs, window_h=window_h).items()}
    tz = zoom.TimeZoom("planner", 0.0, window_h, "hours", window=f"{lsc['log']}@{lsc['start']}",
                       origin_s=parse_time(lsc["start"]))  # the URL's from/to are UTC
    tz.control()
    names = list(figs)
    for i in range(0, len(names), 2):
        cols = st.columns(2)
        for col, name in zip(cols, names[i:i + 2]):
            if name in charts.PLANNER_TIME_CHARTS:
                tz.show(col, figs[name], key=f"pl_fig_{i}_{name}")
            else:
                col.plotly_chart(figs[name], key=f"pl_fig_{i}_{name}", width="stretch")


def all_numbers(last: Mapping, unit: str) -> None:
    """Every headline number of every run, as the glossary prints it (numbers underneath), and the link
    to the downloads."""
    summaries = {k: r.summary for k, r in last["runs"].items()}
    st.subheader("All headline numbers")
    table = headline_table(summaries)
    table = table.assign(**{c: table[c].map(lambda t: glossary.in_units(t, unit)) for c in ("metric", "unit")})
    st.dataframe(headline_styler(table), hide_index=True, width="stretch")  # no long floats; numbers underneath
    st.page_link("app_pages/downloads.py", label="Download these results (CSV, Parquet, HTML report)",
                 icon=":material/download:")


def limits(last: Mapping) -> None:
    """The run's limits: its job's cost-free twins (followed here while they run), the clairvoyant bound."""
    runs = last["runs"]
    job = session.active_job("replay")
    if job is not None and st.session_state.get("_ready_replay") == str(job.job_dir):
        done = session.follow_job("replay", "cost-free twins")  # the job of the run shown: its limits
        if done is not None and done.get("status") != "ok":
            session.show_failure(done, "cost-free twins")
    done = session.last_outcome("replay")  # the limits of the run shown, when its job has ended
    if done and done.get("status") == "ok" and (done.get("result") or {}).get("rid") == last.get("rid"):
        for lab, extra in (done["result"].get("limits") or {}).items():
            if lab in runs:
                runs[lab].summary.update(extra)
    windows_view.render_limits(last, {k: r.summary for k, r in runs.items()})


def show(last: Mapping, sc: Mapping, parts: tuple[str, ...] = PARTS) -> None:
    """The result screen of `last`; a note when the page's scenario `sc` differs from the run's (the
    link then names the scenario, not the result)."""
    if not state.same_scenario(last["scenario"], sc):
        st.info("The settings changed since this run; press Run to update. Showing the last run ("
                + ", ".join(f"{k}={v}" for k, v in state.scenario_to_params(last["scenario"]).items()
                            if str(v) != state.scenario_to_params(sc).get(k)) + ").")
        if "result" in st.query_params:
            del st.query_params["result"]  # the link names the scenario, not this older result
    elif st.query_params.get("result") != last.get("rid") and last.get("rid"):
        st.query_params["result"] = last["rid"]  # the link now names this result
    unit = data.log_unit(last["scenario"]["log"])  # a GPU trace: every label below reads GPUs, GPU-hours
    if "capacity" in parts:
        capacity(last, unit)
    if "headline" in parts:
        headline_numbers(last, unit)
    limits_box = st.container()  # filled after the charts: the cost-free twins may still run
    if "figures" in parts:
        figures(last, unit)
    if "table" in parts:
        all_numbers(last, unit)
    if "limits" in parts:
        with limits_box:
            limits(last)
