"""Page tests with Streamlit's AppTest: every page renders on defaults, widgets change results,
bad uploads show one red line and the app goes on, uploads stay in their session.

The app runs against a temporary database ($PLANNER_DB, a copy of the session's Summit DB)
and a temporary per-session upload directory ($PLANNER_SESSIONS_DIR).
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest
from streamlit.proto.Metric_pb2 import Metric
from streamlit.testing.v1 import AppTest

from appkit import nav, server
from planner.idle import fragments
from planner.replay import estimate

PAGES = [Path(p.path).stem for p in nav.PAGES]  # every page of the app's navigation


@pytest.fixture(scope="module")
def app_db(summit_db, tmp_path_factory):
    d = tmp_path_factory.mktemp("appdb")
    dst = d / "planner.duckdb"
    shutil.copy(summit_db, dst)
    return dst


@pytest.fixture
def app(app_db, open_app):
    def make(page: str | None = None, query: dict | None = None) -> AppTest:
        return open_app(app_db, page, query, timeout_s=120)
    return make


def ok(at: AppTest):
    assert not at.exception, [e.value for e in at.exception]
    return at


def small_swf(n_jobs: int = 200) -> bytes:
    """The header and first n_jobs jobs of the shipped KTH SP2 log."""
    return server.small_swf(n_jobs).encode()


def headline(at: AppTest):
    df = at.dataframe[0].value
    return df.set_index("metric")


@pytest.mark.smoke
@pytest.mark.parametrize("page", PAGES)
def test_every_page_renders_on_defaults(app, page):
    at = ok(app(page))
    assert at.title and at.title[0].value, page
    assert not at.error, [e.value for e in at.error]


def test_home_lists_the_shipped_summit_log(app):
    from appkit.tables import md_table_rows

    at = ok(app())
    table = next(t for m in at.markdown if (t := md_table_rows(m.value)))  # a Markdown table (appkit.tables)
    assert "summit-2021" in [r["name"] for r in table]


def test_home_links_every_other_page_with_its_purpose(app):
    """Home's links come from the one page list (appkit.nav) that app.py navigates: none missing (Live
    and Papers were), each with its page's title, purpose and icon."""
    at = ok(app())
    links = [(e.proto.page, e.proto.label, e.proto.icon) for e in at.get("page_link")]
    assert links == [(Path(p.path).stem, f"{p.title}: {p.purpose}", p.icon) for p in nav.PAGES if p.title != "Home"]


def test_planner_default_run_shows_numbers_and_charts(app):
    at = app("planner")
    assert at.query_params["log"] == "summit-2021"  # the scenario is in the URL
    ok(at.button(key="pl_run").click().run())
    assert not at.error, [e.value for e in at.error]
    h = headline(at)
    assert set(h.columns) >= {"dp", "equal-share"}
    u_dp, u_eq = h.loc["U (A_e/A_s)", "dp"], h.loc["U (A_e/A_s)", "equal-share"]
    assert 0 < u_eq < u_dp <= 1.05  # the exact allocator beats BFTrainer's baseline on this window
    assert h.loc["Trainers completed", "dp"] > 0
    charts = at.get("plotly_chart")
    assert len(charts) == 6
    assert len(at.metric) >= 4
    # the limits, computed after the charts were shown, filled in by the end of the script run
    assert sum("when they cost nothing" in m.value for m in at.markdown) == 2
    # issue 25: the time charts' zoom (hours since the window start) is in the URL as UTC from/to
    zoom = next(s for s in at.slider if s.label.startswith("Zoom"))
    zoom.set_value((2.0, 6.0)).run()
    assert (at.query_params["from"], at.query_params["to"]) == ("2021-02-10T22:21:15", "2021-02-11T02:21:15")
    at.button(key=zoom.key + ":reset").click().run()
    assert "from" not in at.query_params and "result" in at.query_params  # the run's link stays


def test_planner_widget_change_changes_the_result(app):
    at = app("planner")
    at.number_input(key="pl_hours").set_value(6.0).run()
    ok(at.button(key="pl_run").click().run())
    first = headline(at).loc["idle pool (resource integral)", "dp"]
    assert at.query_params["hours"] == "6"
    at.number_input(key="pl_pool_size").set_value(256).run()
    ok(at.button(key="pl_run").click().run())
    second = headline(at).loc["idle pool (resource integral)", "dp"]
    assert second < first  # 256 harvested nodes have fewer idle node-hours than 1024
    assert at.query_params["pool_size"] == "256"


def test_planner_scenario_comes_from_the_url(app):
    at = app(query={"allocator": "greedy", "hours": "3", "tfwd": "300", "pool_size": "512", "bogus": "x"})
    at.switch_page("app_pages/planner.py").run()
    ok(at)
    assert at.selectbox(key="pl_allocator").value == "greedy"
    assert at.number_input(key="pl_hours").value == 3.0
    assert at.number_input(key="pl_tfwd").value == 300.0
    assert at.number_input(key="pl_pool_size").value == 512


def test_planner_bad_url_value_warns_and_keeps_default(app):
    at = app("planner", query={"hours": "lots", "pj_max": "-3"})
    ok(at)
    warnings = [w.value for w in at.warning]
    assert any("hours" in w for w in warnings) and any("pj_max" in w for w in warnings)
    assert at.number_input(key="pl_hours").value == 24.0


def test_planner_bad_start_shows_error_and_app_lives(app):
    at = app("planner")
    at.text_input(key="pl_start").input("not a date").run()
    ok(at)
    assert at.error and "start" in at.error[0].value
    at.text_input(key="pl_start").input("2021-02-11T00:00:00").run()
    ok(at)
    assert not at.error


def test_bad_upload_shows_one_line_error_and_app_stays_alive(app):
    at = app("logs")
    at.file_uploader(key="up_file").upload("broken.swf", b"; MaxNodes: 10\n1 2 three 4\n", "text/plain")
    ok(at.run())
    ok(at.button(key="up_load").click().run())
    assert len(at.error) == 1
    msg = at.error[0].value
    assert "broken.swf" in msg and "\n" not in msg
    # nothing half-loaded: still no upload listed; the other pages still work
    assert all("broken" not in m.value for m in at.markdown)
    assert not [o for o in at.selectbox(key="logs_pick").options if "broken" in o]
    at.switch_page("app_pages/idle.py").run()
    ok(at)


def test_good_upload_is_listed_and_stays_in_its_session(app):
    at = app("logs")
    at.file_uploader(key="up_file").upload("kth-small.swf", small_swf(), "text/plain")
    ok(at.run())
    ok(at.button(key="up_load").click().run())
    assert not at.error, [e.value for e in at.error]
    assert any("kth-small" in s.value for s in at.success)
    assert any("kth-small" in m.value for m in at.markdown)
    assert "kth-small" in at.selectbox(key="logs_pick").options
    # the uploaded log works on the Idle capacity page of the same session
    at.selectbox(key="logs_pick").select("kth-small").run()
    at.switch_page("app_pages/idle.py").run()
    ok(at)
    assert not at.error, [e.value for e in at.error]
    # a second session does not see it
    other = app("logs")
    assert "kth-small" not in other.selectbox(key="logs_pick").options


def test_downloads_after_a_run(app):
    at = app("planner")
    at.number_input(key="pl_hours").set_value(2.0).run()
    ok(at.button(key="pl_run").click().run())
    at.switch_page("app_pages/downloads.py").run()
    ok(at)
    buttons = at.get("download_button")
    assert len(buttons) >= 1 + 2 * 5  # HTML + (summary + 4 tables per run) x (CSV, Parquet)


def test_compare_runs_a_small_grid_and_opens_a_cell(app):
    at = app("compare")
    at.number_input(key="cmp_hours_summit-2021").set_value(1.0).run()
    at.multiselect(key="cmp_allocs").set_value(["dp", "equal-share"]).run()
    at.multiselect(key="cmp_tfwd").set_value([60, 600]).run()
    at.multiselect(key="cmp_sizes_summit-2021").set_value([256]).run()
    at.slider(key="cmp_workers").set_value(1).run()
    ok(at.button(key="cmp_run").click().run(timeout=240))
    assert not at.error, [e.value for e in at.error]
    assert len(at.get("plotly_chart")) >= 3
    # issue 25: one heatmap per allocator (never averaged across them), all on one colour scale
    heat = {c.proto.id.split("cmp_heat_", 1)[-1]: json.loads(c.proto.spec)["data"][0] for c in at.get("plotly_chart")
            if "cmp_heat_" in c.proto.id}
    assert set(heat) == {"dp", "equal-share"}
    assert len({(h["zmin"], h["zmax"]) for h in heat.values()}) == 1
    pick = at.selectbox(key="cmp_pick")
    pick.set_value(next(i for i, o in enumerate(pick.options) if o.startswith("allocator=dp, tfwd=600"))).run()
    ok(at.button(key="cmp_open").click().run())
    assert at.query_params["tfwd"] == "600" and at.query_params["pool_size"] == "256"
    assert at.number_input(key="pl_tfwd").value == 600.0
    at.switch_page("app_pages/downloads.py").run()
    ok(at)
    assert any("compare-grid" in m.value for m in at.markdown)
    # the grid is kept in the workspace: a fresh session on the link shows its results again
    again = app("compare", query={"ws": at.query_params["ws"]})
    assert any(h.value.startswith("Results on summit-2021, 1 h from") for h in again.subheader)
    assert len(again.get("plotly_chart")) >= 2
    assert not any(h.value.startswith("Results on") for h in app("compare").subheader)  # another workspace


def test_solver_runs_a_small_grid_and_reacts_to_the_grid(app):
    at = app("solver")
    at.multiselect(key="sv_jobs").set_value([5]).run()
    at.multiselect(key="sv_pools").set_value([50, 100]).run()
    at.multiselect(key="sv_algs").set_value(["dp", "milp", "equal-share"]).run()
    at.number_input(key="sv_reps").set_value(2).run()
    ok(at.button(key="sv_run").click().run())
    table = at.dataframe[0].value
    assert len(table) == 2 * 3
    assert (table.loc[table["allocator"] == "milp", "reached dp's optimum (%)"] == 100.0).all()  # exact MILP = dp
    assert not [c for c in table.columns if "_" in c]  # headers in words, each with its unit
    assert len(at.get("plotly_chart")) == 5
    at.multiselect(key="sv_pools").set_value([100]).run()
    ok(at.button(key="sv_run").click().run())
    assert len(at.dataframe[0].value) == 3
    # run in a worker, kept in the workspace: a fresh session on the same link shows it, and
    # Downloads offers it
    again = app("solver", query={"ws": at.query_params["ws"]})
    assert len(again.dataframe[0].value) == 3 and "6 decisions" in " ".join(c.value for c in again.caption)
    again.switch_page("app_pages/downloads.py").run()
    assert any("solver-benchmark" in m.value for m in ok(again).markdown)
    assert app("solver").dataframe.len == 0  # another workspace has none


def test_a_link_with_run_1_runs_the_scenario_on_arrival(app):
    at = app(query={"hours": "2", "allocator": "greedy", "baseline": "none", "run": "1"})
    at.switch_page("app_pages/planner.py").run()
    ok(at)
    h = headline(at)
    assert list(h.columns) == ["unit", "greedy"]
    assert "run" not in at.query_params  # rewritten without it: a reload does not run again


def test_an_auto_run_says_which_exact_allocator_answered(app):
    at = app(query={"hours": "3", "allocator": "auto", "baseline": "dp", "pool_size": "900",
                    "start": "2021-02-10T20:00:00", "run": "1"})
    at.switch_page("app_pages/planner.py").run()
    ok(at)
    notes = [c.value for c in at.caption if "answered with" in c.value]
    assert len(notes) == 1 and notes[0].count("auto answered with dp") == 1 and "dp-reduced in" in notes[0], notes


def test_csv_upload_with_a_column_mapping_from_the_page(app):
    at = app("logs")
    body = (b"begin,finish,n,extra\n2021-01-01 00:00:00,2021-01-01 01:00:00,3,x\n"
            b"2021-01-01 00:30:00,2021-01-01 02:00:00,2,y\n")
    at.file_uploader(key="up_file").upload("jobs.csv", body, "text/csv")
    ok(at.run())
    # the column choices are the file's own header, with a first guess from the names
    assert list(at.selectbox(key="up_map_start").options) == ["(none)", "begin", "finish", "n", "extra"]
    assert at.selectbox(key="up_map_start").value == "begin" and at.selectbox(key="up_map_end").value == "finish"
    at.selectbox(key="up_map_nodes").select("n").run()
    ok(at.button(key="up_load").click().run())
    assert not at.error, [e.value for e in at.error]
    assert "jobs" in at.selectbox(key="logs_pick").options
    # the same file with no nodes column names the missing choice in one line
    at2 = app("logs")
    at2.file_uploader(key="up_file").upload("jobs2.csv", body, "text/csv")
    ok(at2.run())
    at2.selectbox(key="up_map_nodes").set_value("").run()
    ok(at2.button(key="up_load").click().run())
    assert len(at2.error) == 1 and "jobs2.csv" in at2.error[0].value, [e.value for e in at2.error]


def test_compare_with_an_empty_choice_has_no_cells_and_no_run(app):
    at = app("compare")
    assert not at.button(key="cmp_run").disabled
    at.multiselect(key="cmp_allocs").set_value([]).run()
    ok(at)
    assert at.button(key="cmp_run").disabled
    assert not at.error


def test_compare_prices_a_milp_cell_at_its_share_of_the_idle_nodes(app, app_db):
    """The grid's estimate reads the window's summary (planner.replay.estimate.sweep_estimate's
    window_summary): a milp-node cell on Summit is priced at the idle nodes it sees, as the function
    gives for that summary, below its price at the whole pool size."""
    from planner.idle.window import Window
    from planner.store import db

    at = app("compare")
    at.multiselect(key="cmp_allocs").set_value(["milp-node"]).run()
    at.multiselect(key="cmp_tfwd").set_value([120]).run()
    size = at.multiselect(key="cmp_sizes_summit-2021").value[0]
    at.multiselect(key="cmp_sizes_summit-2021").set_value([size]).run()
    ok(at)
    (line,) = [m.value for m in at.markdown if "cells. Estimate: about" in m.value]
    hours = float(at.number_input(key="cmp_hours_summit-2021").value)
    con = db.connect(app_db, read_only=True)
    try:
        summary = fragments.summary(con, Window("summit-2021", start=at.text_input(key="cmp_start_summit-2021").value,
                                                hours=hours))
    finally:
        con.close()
    args = ([{"allocator": "milp-node", "pool_size": size}], hours, summary["events"],
            int(at.slider(key="cmp_workers").value), int(at.session_state["scenario"]["pj_max"]))
    seen, whole = estimate.sweep_estimate(*args, window_summary=summary), estimate.sweep_estimate(*args)
    assert seen.text in line and seen.seconds < whole.seconds


@pytest.mark.parametrize("start", ["9999-12-31", "2262-06-01", "1677-01-01", "0001-01-01"])
def test_a_start_out_of_range_in_the_url_or_a_widget_is_one_line_never_an_exception(app, start):
    at = ok(app("planner", query={"start": start}))
    assert any("start" in w.value and "out of range" in w.value for w in at.warning)
    assert at.text_input(key="pl_start").value == "2021-02-10T20:21:15"  # the default kept
    at.text_input(key="pl_start").input(start).run()
    ok(at)
    assert at.error and "start" in at.error[0].value and "\n" not in at.error[0].value
    idle = ok(app("idle", query={"start": start}))
    idle.toggle(key="idle_whole").set_value(False).run()  # the Idle page starts on the whole log
    idle.text_input(key="idle_start_summit-2021").input(start).run()
    ok(idle)
    assert idle.error and "start" in idle.error[0].value


def test_planner_runtime_preset_fills_rup_rdw_and_papers_options_reach_the_url(app):
    at = app("planner")
    at.selectbox(key="pl_runtime").set_value("stop-restart").run()
    ok(at)
    assert at.number_input(key="pl_rup").value == 28.0 and at.number_input(key="pl_rdw").value == 28.0
    assert at.query_params["runtime"] == "stop-restart" and at.query_params["rup"] == "28"
    at.number_input(key="pl_rdw").set_value(5.0).run()        # the user may still override a preset's cost
    assert at.number_input(key="pl_rdw").value == 5.0 and at.number_input(key="pl_rup").value == 28.0
    at.selectbox(key="pl_admission").set_value("min-fits").run()
    at.checkbox(key="pl_allow_migration").check().run()
    ok(at)
    assert at.query_params["admission"] == "min-fits" and at.query_params["allow_migration"] in ("true", "1", "True")
    at.selectbox(key="pl_runtime").set_value("none").run()
    ok(at)
    assert "runtime" not in at.query_params and at.number_input(key="pl_rdw").value == 5.0
    # IBM's baselines and drop mode (schema fields batch_choice, drop) have their widgets, both ways
    at.selectbox(key="pl_batch_choice").set_value("random").run()
    at.checkbox(key="pl_drop").check().run()
    ok(at)
    assert at.query_params["batch_choice"] == "random" and at.query_params["drop"] in ("true", "1", "True")
    link = app("planner", query={"batch_choice": "max", "drop": "true"})
    ok(link)
    assert link.selectbox(key="pl_batch_choice").value == "max" and link.checkbox(key="pl_drop").value
    bad = app("planner", query={"batch_choice": "huge"})
    assert not bad.exception and any("batch_choice" in w.value for w in bad.warning)
    assert bad.selectbox(key="pl_batch_choice").value == "elastic"


def test_planner_page_shows_fallback_decisions_when_highs_fails(monkeypatch, app, tmp_path):
    # (tests/unit/test_allocators_solver_faults.py: the allocators' fallback itself)
    at = app(query={"allocator": "milp", "baseline": "dp", "hours": "2", "pool_size": "128"})
    at.switch_page("app_pages/planner.py").run()
    assert not at.exception
    from pyomo.contrib.appsi.solvers.highs import Highs as AppsiHighs
    from pyomo.contrib.solver.solvers.highs import Highs

    def boom(self, *a, **k):
        raise RuntimeError("simulated HiGHS crash")
    monkeypatch.setattr(Highs, "solve", boom)
    monkeypatch.setattr(AppsiHighs, "solve", boom)
    # the app replays in a worker process (appkit.worker): the same fault goes into that process
    # through a sitecustomize module on its PYTHONPATH
    inject = tmp_path / "inject"
    inject.mkdir()
    (inject / "sitecustomize.py").write_text(
        "from pyomo.contrib.appsi.solvers.highs import Highs as A\n"
        "from pyomo.contrib.solver.solvers.highs import Highs as B\n"
        "def boom(self, *a, **k):\n    raise RuntimeError('simulated HiGHS crash')\n"
        "A.solve = boom\nB.solve = boom\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(inject), os.environ.get("PYTHONPATH", "")]))
    at.button(key="pl_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    h = at.dataframe[0].value.set_index("metric")
    decisions = h.loc["allocator decisions", "milp"]
    assert decisions > 0
    # every decision that needed HiGHS fell back (the rest had an empty choice: pool empty or
    # nobody fits, decided without a solver), and the page shows the count
    assert 0.5 * decisions < h.loc["fallback decisions", "milp"] <= decisions
    assert h.loc["allocated", "milp"] == 0  # the fallback keeps what Trainers hold: nothing
    assert h.loc["fallback decisions", "dp"] == 0  # the baseline (no solver) did not


def test_planner_metrics_explain_themselves(app):
    at = app("planner")
    at.number_input(key="pl_hours").set_value(2.0).run()
    at.button(key="pl_run").click().run()
    assert not at.exception and not at.error, [e.value for e in at.exception] + [e.value for e in at.error]
    by_label = {m.label: m for m in at.metric}
    u = by_label["U (A_e/A_s) (ratio)"]
    assert "A_e" in u.proto.help and "exceed 1" in u.proto.help
    assert u.proto.delta.endswith("vs equal-share")
    green, red, gray = (Metric.MetricColor.Value(c) for c in ("GREEN", "RED", "GRAY"))
    # higher U is better: green when up, red when down
    assert u.proto.color == (green if u.proto.delta.startswith("+") else red)
    assert {"Trainers arrived (count)", "Trainers started (count)"} <= set(by_label)
    q = by_label["mean queueing time (min)"]
    assert "still waiting" in q.proto.help
    if q.proto.delta.startswith("no change"):
        assert q.proto.color == gray
    else:  # longer queueing is worse: red when up
        assert q.proto.color == (red if q.proto.delta.startswith("+") else green)
    for m in at.metric:
        assert m.proto.help, m.label
        assert not re.match(r"^[+-]0(\.0*)?( |$)", m.proto.delta or ""), (m.label, m.proto.delta)


def test_planner_model_mix_and_log_arrivals(app):
    at = app("planner", query={"hours": "2", "baseline": "none", "count": "12"})
    at.text_input(key="pl_models").input("resnet99").run()
    ok(at)
    assert at.button(key="pl_run").disabled and any("unknown model 'resnet99'" in e.value for e in at.error)
    at.text_input(key="pl_models").input("vgg16:1:2-8").run()
    ok(at)
    assert not at.button(key="pl_run").disabled and at.query_params["models"] == "vgg16:1:2-8"
    ok(at.button(key="pl_run").click().run())
    tr = at.session_state["last_run"]["runs"]["dp"].trainers
    assert set(tr["model"]) == {"vgg16"} and tr["max_nodes"].max() <= 8
    at.selectbox(key="pl_arrival").set_value("log").run()  # Summit is a node log: no submissions
    ok(at)
    assert at.button(key="pl_run").disabled and any("node log" in e.value for e in at.error)
