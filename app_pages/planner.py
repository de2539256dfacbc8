"""Planner: replay a window of a log with an allocator and a baseline; the URL holds the scenario."""

import pandas as pd
import streamlit as st

from appkit import charts, data, headline, report, session, state, workspace
from appkit.uploads import md
from planner.errors import InputError
from planner.idle import fragments
from planner.replay import estimate
from planner.report.headline import answered_note, headline_table

st.title("Planner")

sc, notes = state.current_scenario()  # app.py showed the URL's notes already
# `run=1` in a link runs the scenario once on arrival (the page then rewrites the URL without it)
if st.query_params.get("run") == "1":
    st.session_state["_autorun"] = True
for n in notes:
    st.warning(n)

from planner import allocators  # noqa: E402
from planner.allocators.base import OBJECTIVES  # noqa: E402
from planner.scenario import schema  # noqa: E402
from planner.workload import generators, runtimes

logs = data.list_all_logs()
log_names = list(logs["name"]) if not logs.empty else [sc["log"]]
alloc_names = allocators.names()
work_names = generators.names()


def _seed(key: str, value, options=None):
    """Widget state from the scenario unless the widget already holds one (kept across reruns)."""
    if options is not None and value not in options:
        value = options[0]
    wkey = f"pl_{key}"
    if reseed or wkey not in st.session_state:
        st.session_state[wkey] = value
    return wkey


# reseed every widget when the scenario changed from outside (a pasted link, the Compare page)
reseed = st.session_state.get("_pl_seeded") != state.scenario_to_params(sc)
with st.container(border=True):
    c = st.columns(4)
    log = c[0].selectbox("Log", log_names, key=_seed("log", sc["log"], log_names))
    row = logs[logs["name"] == log].iloc[0] if not logs.empty and (logs["name"] == log).any() else None
    if row is not None and log != sc["log"]:  # another log: move the window and pool size into it
        state.store_scenario(state.adapt_to_log(sc, log, row["start_s"], row["end_s"], int(row["nodes"])))
        st.session_state["_pl_seeded"] = None
        st.rerun()
    start = c[1].text_input("Window start (UTC, ISO)", key=_seed("start", sc["start"]))
    hours = c[2].number_input("Horizon (window length, h)", step=1.0, **state.widget_bounds("hours"),
                              key=_seed("hours", float(sc["hours"])))
    pool_kind = c[3].radio("Pool", state.POOLS, horizontal=True, key=_seed("pool", sc["pool"], list(state.POOLS)),
                           help="log: the idle nodes of the log; fixed: P nodes always there")
    c = st.columns(4)
    pool_size = c[0].number_input("Pool size (nodes)", step=64, **state.widget_bounds("pool_size"),
                                  key=_seed("pool_size", int(sc["pool_size"])),
                                  help="log pool: the first K nodes of the log; fixed pool: P")
    workload = c[1].selectbox("Workload", work_names, key=_seed("workload", sc["workload"], work_names))
    allocator = c[2].selectbox("Allocator", alloc_names, key=_seed("allocator", sc["allocator"], alloc_names),
                               format_func=lambda n: f"{n}: {allocators.DESCRIPTIONS.get(n, '')}"[:60])
    base_opts = ["none"] + alloc_names
    baseline = c[3].selectbox("Baseline allocator", base_opts, key=_seed("baseline", sc["baseline"], base_opts))
    c = st.columns(6)
    tfwd = c[0].number_input("T_fwd (s)", step=30.0, **state.widget_bounds("tfwd"),
                             key=_seed("tfwd", float(sc["tfwd"])))
    objective = c[1].selectbox("Objective", list(OBJECTIVES), key=_seed("objective", sc["objective"], list(OBJECTIVES)))
    pj_max = c[2].number_input("Pj_max (Trainers at once)", step=1, **state.widget_bounds("pj_max"),
                               key=_seed("pj_max", int(sc["pj_max"])))
    rup = c[3].number_input("Rup (s)", step=1.0, **state.widget_bounds("rup"), key=_seed("rup", float(sc["rup"])))
    rdw = c[4].number_input("Rdw (s)", step=1.0, **state.widget_bounds("rdw"), key=_seed("rdw", float(sc["rdw"])))
    seed = c[5].number_input("Seed", step=1, **state.widget_bounds("seed"), key=_seed("seed", int(sc["seed"])))
    c = st.columns(4)  # the other papers' ideas (docs/papers.md)
    runtime_opts = ["none", *runtimes.RUNTIMES]  # "none" (not None: Streamlit shows None as no choice)
    c[0].selectbox("Elastic runtime (sets Rup/Rdw)", runtime_opts,
                   key=_seed("runtime", sc.get("runtime") or "none", runtime_opts),
                   format_func=lambda r: "none: Rup/Rdw as set" if r == "none" else r,
                   help=schema.FIELD["runtime"].help + ". " + "; ".join(
                       f"{r.name}: Rup {r.rup_s:g} s, Rdw {r.rdw_s:g} s, migration {r.migrate_s:g} s ({r.source})"
                       for r in runtimes.RUNTIMES.values()))
    c[1].selectbox("Admission", list(schema.FIELD["admission"].allowed()),
                   key=_seed("admission", sc["admission"], list(schema.FIELD["admission"].allowed())),
                   help=schema.FIELD["admission"].help)
    c[2].checkbox("Allow migration", key=_seed("allow_migration", bool(sc["allow_migration"])),
                  help=schema.FIELD["allow_migration"].help)
    c[3].checkbox("Learn speed curves", key=_seed("learn_curves", bool(sc["learn_curves"])),
                  help=schema.FIELD["learn_curves"].help)
    if row is not None:
        st.caption(f"Log {log}: {pd.to_datetime(row['start_s'], unit='s')} to "
                   f"{pd.to_datetime(row['end_s'], unit='s')} UTC, "
                   f"{int(row['nodes'])} nodes." if "start_s" in row else "")

new = state.scenario_from_widgets(st.session_state, "pl_")  # every URL field has its widget pl_<name>
if new.get("runtime") == "none":
    new["runtime"] = None
preset = new.get("runtime") if new.get("runtime") != sc.get("runtime") else None
if preset:  # a runtime picked: its measured costs into Rup/Rdw (which the user may then change)
    new["rup"], new["rdw"] = runtimes.get(preset).rup_s, runtimes.get(preset).rdw_s
checked, bad = state.scenario_from_params(state.scenario_to_params(new), base=sc)
checked.update({k: None for k, v in new.items() if v is None})  # an optional field set back to none
for n in bad:
    st.error(n.replace("URL parameter", "Setting"))
state.store_scenario(checked)
st.session_state["_pl_seeded"] = None if preset else state.scenario_to_params(checked)
if preset:
    st.rerun()  # reseed the Rup/Rdw widgets from the preset
sc = checked

rid = workspace.result_id(state.scenario_to_params(sc))
est = None
if not bad:
    try:
        est = estimate.replay_estimate(
            sc, data.cached_call(fragments.summary, sc["log"], start=sc["start"], hours=float(sc["hours"]),
                                 pool_size=int(sc["pool_size"])) if sc["pool"] == "log" else None)
    except InputError:
        est = None
c = st.columns([1, 5])
run_clicked = c[0].button("Run", type="primary", key="pl_run",
                          disabled=bool(bad) or session.active_job("replay") is not None)
if est is not None:
    c[1].caption(est.text)
if st.session_state.pop("_autorun", False):
    run_clicked = True

if run_clicked and session.active_job("replay") is None:
    try:
        session.start_job("replay", "replay", {"scenario": dict(sc), "db": data.db_path_for_log(sc["log"]),
                                               "rid": rid, "ws_dir": str(session.ws_dir())})
    except InputError as e:
        st.error(md(str(e)))
outcome = session.follow_job("replay", "replay")
if outcome is not None and not session.show_failure(outcome, "replay"):
    st.session_state["last_run"] = workspace.load_run(session.ws_dir(), outcome["result"]["rid"])
    st.session_state["_result_seen"] = outcome["result"]["rid"]
    st.query_params["result"] = outcome["result"]["rid"]
    st.caption(f"Done in {outcome['wall_s']:.1f} s (the replay itself {outcome['result']['wall_s']:.1f} s).")

last = st.session_state.get("last_run")
if last:
    runs = last["runs"]
    if not state.same_scenario(last["scenario"], sc):
        st.info("The settings changed since this run; press Run to update. Showing the last run ("
                + ", ".join(f"{k}={v}" for k, v in state.scenario_to_params(last["scenario"]).items()
                            if str(v) != state.scenario_to_params(sc).get(k)) + ").")
        if "result" in st.query_params:
            del st.query_params["result"]  # the link names the scenario, not this older result
    elif st.query_params.get("result") != last.get("rid") and last.get("rid"):
        st.query_params["result"] = last["rid"]  # the link now names this result
    st.subheader("Headline numbers")
    labels = list(runs)
    summaries = {k: r.summary for k, r in runs.items()}
    table = headline_table(summaries)
    headline.show(headline.cells(summaries, headline.headline_rows()))
    headline.show(headline.cells(summaries, headline.FLOW))
    st.caption(f"Run to charts: {last['wall_s']:.2f} s wall time for {len(runs)} replay(s). "
               f"Metrics show {labels[0]}; the change is against {labels[1] if len(labels) > 1 else 'nothing'}."
               + "".join(f" {note}" for note in map(answered_note, summaries.values()) if note))
    # one colour and line style per allocator in every chart (the HTML report uses the same)
    figs = {n: report.style_runs(f, labels) for n, f in
            charts.planner_figures(runs, window_h=float(last["scenario"]["hours"])).items()}
    names = list(figs)
    for i in range(0, len(names), 2):
        cols = st.columns(2)
        for col, name in zip(cols, names[i:i + 2]):
            col.plotly_chart(figs[name], key=f"pl_fig_{i}_{name}", width="stretch")
    st.subheader("All headline numbers")
    st.dataframe(table, hide_index=True, width="stretch")
    st.page_link("app_pages/downloads.py", label="Download these results (CSV, Parquet, HTML report)",
                 icon=":material/download:")
else:
    st.info("Set the scenario and press Run. The default replays one day of the Summit log "
            "with 1024 nodes and BFTrainer's HPO workload, dp against equal share.")
    # the pool this run will get: N(t) of the window (also loads the chart library early)
    if sc["pool"] == "log" and not bad:
        try:
            series = data.cached_call(fragments.idle_series, sc["log"], start=sc["start"], hours=float(sc["hours"]),
                                      pool_size=int(sc["pool_size"]), max_points=1500)
            h = (series["t_s"] - series["t_s"].iloc[0]) / 3600.0
            st.plotly_chart(charts.step_lines({"N(t) idle pool": (h, series["idle_nodes"])},
                                              "The pool of this window: idle nodes N(t)", "nodes", "nodes",
                                              time_axis=False, x_title="time since window start (h)", x_unit="h",
                                              fill=("N(t) idle pool",)), key="pl_preview", width="stretch")
        except InputError as e:
            st.error(md(str(e)))

from appkit import windows_view  # noqa: E402

windows_view.render(sc)  # the scenario over many windows (its own form and saved result)
