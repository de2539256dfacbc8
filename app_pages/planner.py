"""Planner: replay a window of a log with an allocator and a baseline; the URL holds the scenario."""

import pandas as pd
import streamlit as st

from appkit import charts, data, planner_results, preload, session, state, windows_view, workspace, zoom
from appkit.data import unit_word
from appkit.uploads import md, show_upload_limit
from planner.errors import InputError
from planner.idle import fragments
from planner.idle.window import Window
from planner.replay import estimate
from planner.report import glossary

st.title("Planner")
# Plotly's and the table's chunks load once the page is drawn (its preview below is SVG; its first table
# comes with a Run's results): a Run's charts and tables then do not wait for them
preload.start_plotly(when_drawn=True, tables=True)

sc, notes = state.current_scenario()  # app.py showed the URL's notes already
# `run=1` in a link runs the scenario once on arrival (the page then rewrites the URL without it)
if st.query_params.get("run") == "1":
    st.session_state["_autorun"] = True
for n in notes:
    st.warning(n)

from appkit import trainer_csv  # noqa: E402
from planner import allocators  # noqa: E402
from planner.allocators.base import OBJECTIVES  # noqa: E402
from planner.scenario import schema  # noqa: E402
from planner.workload import generators, mix, runtimes
from planner.workload.trainers import imagenet_curves as _curves


def mix_models() -> list[str]:
    return list(_curves())

logs = data.list_all_logs()
log_names = list(logs["name"]) if not logs.empty else [sc["log"]]
alloc_names = allocators.names()
work_names = generators.names() + trainer_csv.listed(session.ws_dir())


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
    unit = data.unit_of(row)  # a GPU trace: the form reads GPUs

    def U(text):  # noqa: N802  (a label in the log's unit)
        return glossary.in_units(text, unit)

    if row is not None and log != sc["log"]:  # another log: move the window and pool size into it
        state.store_scenario(state.fit_to_log(sc, log, prev_log=sc["log"]))
        st.session_state["_pl_seeded"] = None
        zoom.clear("planner")  # no range sticks across logs
        st.rerun()
    start = c[1].text_input("Window start (UTC, ISO)", key=_seed("start", sc["start"]))
    hours = c[2].number_input("Horizon (window length, h)", step=1.0, **state.widget_bounds("hours"),
                              key=_seed("hours", float(sc["hours"])))
    pool_kind = c[3].radio("Pool", state.POOLS, horizontal=True, key=_seed("pool", sc["pool"], list(state.POOLS)),
                           help=U("log: the idle nodes of the log; fixed: P nodes always there"))
    c = st.columns(4)
    pool_size = c[0].number_input(U("Pool size (nodes)"), step=64, **state.widget_bounds("pool_size"),
                                  key=_seed("pool_size", int(sc["pool_size"])),
                                  help=U("log pool: the first K nodes of the log; fixed pool: P"))
    workload = c[1].selectbox("Workload", work_names, key=_seed("workload", sc["workload"], work_names),
                              help="hpo: BFTrainer's HPO trials; diverse: the 7 ImageNet models; philly: "
                                   "Microsoft Philly arrivals and sizes; upload:...: your Trainer CSV (below)")
    rules = "\n".join(f"- **{n}**: {allocators.DESCRIPTIONS.get(n, '')}" for n in alloc_names)
    allocator = c[2].selectbox("Allocator", alloc_names, key=_seed("allocator", sc["allocator"], alloc_names),
                               help="Each allocator's rule (docs/papers.md):\n" + rules)
    c[2].caption(allocators.DESCRIPTIONS.get(allocator, ""))  # the whole rule: a select box cuts long values
    base_opts = ["none"] + alloc_names
    baseline = c[3].selectbox("Baseline allocator", base_opts, key=_seed("baseline", sc["baseline"], base_opts),
                              help="The allocator the run is compared with (the same workload and pool); "
                                   "none: no comparison")
    if baseline != "none":
        c[3].caption(allocators.DESCRIPTIONS.get(baseline, ""))
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
                  help=U(schema.FIELD["allow_migration"].help))
    c[3].checkbox("Learn speed curves", key=_seed("learn_curves", bool(sc["learn_curves"])),
                  help=U(schema.FIELD["learn_curves"].help))
    c = st.columns([1, 1, 1])  # IBM's baselines and mode (the Papers page's IBM rows); whole labels at 1,280 px
    batch_opts = list(schema.FIELD["batch_choice"].allowed())
    c[0].selectbox("Batch size (Trainers with choices)", batch_opts,
                   key=_seed("batch_choice", sc["batch_choice"], batch_opts),
                   format_func=lambda b: {"elastic": "elastic: chosen with the node count",
                                          "random": "random (Random-BS)", "max": "max (Max-BS)",
                                          "min": "min (Min-BS)"}.get(b, b),
                   help=U(schema.FIELD["batch_choice"].help))
    c[1].checkbox("Drop mode (reject, not queue)", key=_seed("drop", bool(sc["drop"])),
                  help=schema.FIELD["drop"].help)
    c[2].checkbox("Include outages and warm-up", key=_seed("include_outages", bool(sc.get("include_outages"))),
                  help=schema.FIELD["include_outages"].help)
    c = st.columns([1, 1, 1])  # when decisions are made (ModelArts every 5 min, IBM every 10-15) and ModelArts' (15)
    cadences = list(schema.FIELD["cadence"].allowed())
    c[0].selectbox("Decisions", cadences, key=_seed("cadence", sc["cadence"], cadences),
                   format_func=lambda x: {"events": "at every event (BFTrainer)",
                                          "interval": "every interval f (ModelArts, IBM)"}.get(x, x),
                   help=schema.FIELD["cadence"].help)
    c[1].number_input("Decision interval f (min)", step=1.0, **state.widget_bounds("step_min"),
                      key=_seed("step_min", float(sc["step_min"])), help=schema.FIELD["step_min"].help)
    c[2].checkbox("Constraint (15): minima at every step",
                  key=_seed("min_every_step", bool(sc["min_every_step"])), help=schema.FIELD["min_every_step"].help)
    c = st.columns(3)  # the workload in the operator's hands
    c[0].number_input("Trainers (count; empty: the workload's)", min_value=0, max_value=100_000, step=10,
                      key=_seed("count", None if sc.get("count") is None else int(sc["count"])),
                      help=schema.FIELD["count"].help)
    arrivals = list(schema.FIELD["arrival"].allowed())
    c[1].selectbox("Arrivals", arrivals, key=_seed("arrival", sc.get("arrival") or "workload", arrivals),
                   format_func=lambda a: {"workload": "as the workload's (hpo, diverse)",
                                          "start": "all at the window start",
                                          "poisson": "Poisson, mean gap below",
                                          "log": "from the log (its jobs' submissions)"}.get(a, a),
                   help=schema.FIELD["arrival"].help)
    c[2].number_input("Mean gap between arrivals (s; empty: the workload's)", min_value=0.0, step=10.0,
                      key=_seed("interarrival_s", None if sc.get("interarrival_s") is None
                                else float(sc["interarrival_s"])), help=schema.FIELD["interarrival_s"].help)
    c = st.columns([3, 1])
    c[0].text_input("Model mix (model[:weight][:Nmin-Nmax], comma-separated; empty: the workload's)",
                    key=_seed("models", sc.get("models") or ""), placeholder="resnet18:3:4-32,shufflenet",
                    help=schema.FIELD["models"].help)
    c[1].caption(U("Models: " + ", ".join(mix_models()) + ". Default Nmin/Nmax: "
                   f"{generators.DEFAULTS['hpo']['nmin']}-{generators.DEFAULTS['hpo']['nmax']} nodes."))
    with st.expander("Upload a Trainer CSV (the CLI's format: id,model,submit_s,work_samples[,nmin,nmax,rup_s,"
                     "rdw_s,priority,eta_node_h])"):
        up = st.file_uploader("Trainer CSV", type=["csv"], key="pl_trainer_csv")
        show_upload_limit("pl_trainer_csv", f"{trainer_csv.MAX_BYTES / 2**20:,.0f} MiB per file, CSV")
        if up is not None and st.session_state.get("_pl_csv_seen") != up.file_id:
            try:
                wname, prev = trainer_csv.save(session.ws_dir(), up.name,
                                               data.upload_bytes(up, session.ws_dir(), trainer_csv.MAX_BYTES))
                st.session_state["_pl_csv_seen"] = up.file_id
                data.release_upload(up, "pl_trainer_csv")  # kept on disk: no copy stays in server memory
                st.session_state["_pl_csv_preview"] = (wname, prev)
                st.session_state["_pl_csv_error"] = None
                state.store_scenario({**sc, "workload": wname})  # the widgets reseed from it
                st.session_state["_pl_seeded"] = None
                st.rerun()
            except InputError as e:
                st.session_state["_pl_csv_error"] = str(e)
                st.session_state["_pl_csv_seen"] = up.file_id
                data.release_upload(up, "pl_trainer_csv")
        if st.session_state.get("_pl_csv_error"):
            st.error(md(st.session_state["_pl_csv_error"]))
        pv = st.session_state.get("_pl_csv_preview")
        if pv is not None:
            wname, prev = pv
            st.caption(f"{wname}: {len(prev)} Trainers; models " + ", ".join(
                f"{m} ({n})" for m, n in prev["model"].value_counts().items()) + ". The first rows:")
            st.dataframe(prev.head(8), hide_index=True, width="stretch")
    if row is not None:
        st.caption(f"Log {log}: {pd.to_datetime(row['start_s'], unit='s')} to "
                   f"{pd.to_datetime(row['end_s'], unit='s')} UTC, "
                   f"{int(row['nodes']):,} {unit_word(row)}." if "start_s" in row else "")

from appkit import idle_views  # noqa: E402

idle_views.show_log_warnings(log)
new = state.scenario_from_widgets(st.session_state, "pl_")  # every URL field has its widget pl_<name>
if not str(new.get("models") or "").strip():
    new["models"] = None  # an empty mix: the workload's own
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
why = "; ".join(n.split(": ", 1)[-1] for n in bad)  # the reason Run is disabled (empty: the form is valid)
if not why and sc.get("models"):
    try:
        mix.parse(sc["models"])
    except InputError as e:
        why = f"Model mix: {e}"
if not why and sc.get("arrival") == "log" and row is not None and row["kind"] != "jobs":
    why = f"Arrivals 'from the log' replays a job log's submissions, and {log} is a node log (choose another)"
if not bad:
    try:
        summ = None
        if sc["pool"] == "log":
            win = Window(sc["log"], start=sc["start"], hours=float(sc["hours"]), pool_size=int(sc["pool_size"]))
            summ = data.cached_call(fragments.summary, win)
        est = estimate.replay_estimate(sc, summ)
    except InputError as e:
        why = str(e)
c = st.columns([1, 5])
busy = session.active_job("replay") is not None
run_clicked = c[0].button("Run", type="primary", key="pl_run", disabled=bool(why) or busy,
                          help=f"Disabled: {md(why)}" if why else None)
if why:
    c[1].error(f"Run is disabled: {md(why)}")
elif est is not None:
    c[1].caption(U(est.text))
if st.session_state.pop("_autorun", False) and not why:
    run_clicked = True

if run_clicked and session.active_job("replay") is None:
    try:
        session.start_job("replay", "replay", {"scenario": dict(sc), "db": data.db_path_for_log(sc["log"]),
                                               "rid": rid, "ws_dir": str(session.ws_dir())},
                          procs=2)  # the allocator's replay and the baseline's at once, when the caps allow
    except InputError as e:
        st.error(md(str(e)))
# the replays' charts as soon as they are saved; their limits (cost-free twins) follow below
outcome = session.follow_job("replay", "replay", until_ready=True)
if outcome is not None and not session.show_failure(outcome, "replay"):
    st.session_state["last_run"] = workspace.load_run(session.ws_dir(), outcome["result"]["rid"])
    st.session_state["_result_seen"] = outcome["result"]["rid"]
    st.query_params["result"] = outcome["result"]["rid"]
    st.caption(f"Done in {outcome['wall_s']:.1f} s (the replay itself {outcome['result']['wall_s']:.1f} s).")

last = st.session_state.get("last_run")
if last:
    planner_results.show(last, sc)
else:
    kind = f"{row['kind']} log, {int(row['nodes']):,} {unit_word(row)}" if row is not None else "log"
    pool_txt = (f"the idle nodes among its first {int(sc['pool_size']):,}" if sc["pool"] == "log"
                else f"a fixed pool of {int(sc['pool_size']):,} nodes")
    st.info(U(f"Set the scenario and press Run. This replays {float(sc['hours']):g} h of {sc['log']} ({kind}) from "
              f"{sc['start']} UTC on {pool_txt}, with the {sc['workload']} workload, {sc['allocator']}"
              + (f" against {sc['baseline']}." if sc.get("baseline") not in (None, "none") else ".")
              + " Harvestable capacity only: the log's outages and warm-up give no idle nodes (Idle capacity "
              "page)."))
    # the pool this run will get: N(t) of the window, a static SVG (no Plotly before a Run: issue 25, speed;
    # the Idle capacity page has the interactive N(t))
    if sc["pool"] == "log" and not bad:
        try:
            win = Window(sc["log"], start=sc["start"], hours=float(sc["hours"]), pool_size=int(sc["pool_size"]))
            series = data.cached_call(fragments.idle_series, win, max_points=1500)
            h = (series["t_s"] - series["t_s"].iloc[0]).to_numpy() / 3600.0
            n = series["idle_nodes"].to_numpy(dtype=float)
            st.image(charts.svg_steps(h, n, U("The pool of this window: idle nodes N(t)"),
                                      "time since window start (h)", U("idle nodes")), width="stretch")
            if (ns := fragments.series_stats(series, series["t_s"].iloc[0] + 3600.0 * float(sc["hours"]))):
                st.caption(U(f"Idle nodes in the pool: mean {charts.fmt_num(ns['mean'])}, min "
                             f"{charts.fmt_num(ns['min'])}, max {charts.fmt_num(ns['max'])} over "
                             f"{float(sc['hours']):g} h. Hover, zoom and export: the Idle capacity page."))
        except InputError as e:
            st.error(md(str(e)))

windows_view.render(sc)  # the scenario over many windows (its own form and saved result; Compare shares it)
session.keep_spare_worker()  # the next Run's worker, started ahead (its imports while nobody waits)
