"""Workspaces, worker budgets, warm-up and the upload form (issue 12, issue 16's app part).

Units first (pure modules: appkit.workspace, appkit.worker, appkit.uploads; planner.idle.warmup is in
tests/unit/test_idle_warmup.py), then
AppTest sessions: a second session opening the first one's link sees its log and its run; links
naming a missing workspace, log or result warn; a budget hit shows the message and the app goes on;
the CSV time options from the page.
"""

from __future__ import annotations

import gzip
import os
import shutil
import stat
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from appkit import data, report, server, uploads, worker, workspace
from planner.errors import InputError


def _mode(p: Path) -> int:
    return stat.S_IMODE(p.stat().st_mode)


# ---------------------------------------------------------------- workspace (pure)

def test_tokens_are_unguessable_and_workspaces_private(tmp_path):
    from appkit import data

    toks = {workspace.create(tmp_path) for _ in range(20)}
    assert len(toks) == 20 and all(workspace.valid_token(t) for t in toks)
    d = workspace.path(tmp_path, next(iter(toks)))
    assert _mode(d) == 0o700 and _mode(d / "uploads") == 0o700 and _mode(d / "meta.json") == 0o600
    up = data.save_upload(b"x" * 10, "a.swf", d / "uploads")
    assert _mode(up) == 0o600 and _mode(up.parent) == 0o700
    for bad in ("../etc", "a" * 31, "a" * 32 + "/", "", None):
        assert not workspace.exists(tmp_path, bad)
    with pytest.raises(InputError):
        workspace.path(tmp_path, "../../etc/passwd-is-32-chars-long")


def test_idle_workspaces_expire_and_used_ones_stay(tmp_path):
    old, new = workspace.create(tmp_path), workspace.create(tmp_path)
    t = time.time() - 15 * 86400
    os.utime(workspace.path(tmp_path, old) / "meta.json", (t, t))
    assert workspace.expire(tmp_path, max_idle_days=14) == [old]
    assert not workspace.exists(tmp_path, old) and workspace.exists(tmp_path, new)


def test_quota_refuses_in_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv("PLANNER_WORKSPACE_QUOTA_MB", "1")
    d = workspace.path(tmp_path, workspace.create(tmp_path))
    workspace.check_quota(d, 1000)
    workspace.write_private(d / "uploads" / "big", b"0" * 900_000)
    with pytest.raises(InputError) as e:
        workspace.check_quota(d, 200_000, what="big.swf")
    assert "quota" in str(e.value) and "\n" not in str(e.value) and "field 'workspace'" in str(e.value)


@pytest.mark.slow  # 0.4 s CPU measured in the default run: the slow tier
def test_a_run_round_trips_through_the_workspace(tmp_path, summit_con):
    from appkit.runs import run_pair

    d = workspace.path(tmp_path, workspace.create(tmp_path))
    sc = {"log": "summit-2021", "start": "2021-02-10T20:21:15", "hours": 1.0, "pool": "log", "pool_size": 256,
          "workload": "hpo", "allocator": "dp", "baseline": "equal-share", "tfwd": 120.0, "objective": "throughput",
          "pj_max": 10, "rup": 18.0, "rdw": 12.0, "seed": 0}
    runs = run_pair(sc, con=summit_con)
    rid = workspace.result_id({k: str(v) for k, v in sc.items()})
    assert not workspace.has_run(d, rid)
    workspace.save_run(d, rid, sc, runs, 1.5)
    back = workspace.load_run(d, rid)
    assert list(back["runs"]) == ["dp", "equal-share"] and back["scenario"] == sc
    for label, r in runs.items():
        assert back["runs"][label].summary["utilization_efficiency"] == pytest.approx(
            r.summary["utilization_efficiency"])
        assert len(back["runs"][label].timeline) == len(r.timeline)


# ---------------------------------------------------------------- worker budgets (real processes)

def _ingest_job(d: Path, text: str, name="kth", **kw) -> worker.Job:
    up = workspace.write_private(d / "uploads" / "u.swf", text.encode())
    return worker.start(d, "ingest", {"upload": str(up), "user_filename": "mine.swf", "log_name": name,
                                      "out": str(workspace.log_file(d, name))}, **kw)


@pytest.mark.slow  # 1.3 s CPU measured in the default run: the slow tier
def test_worker_loads_a_log_into_the_workspace(tmp_path):
    d = workspace.path(tmp_path, workspace.create(tmp_path))
    out = worker.run_to_end(_ingest_job(d, server.small_swf(200)))
    assert out["status"] == "ok", out
    assert out["result"]["rows"] > 0 and list(workspace.log_files(d)) == ["kth"]


def test_memory_budget_hit_is_a_clear_message_and_leaves_no_log(tmp_path):
    d = workspace.path(tmp_path, workspace.create(tmp_path))
    out = worker.run_to_end(_ingest_job(d, server.small_swf(200), mem_mb=80))
    assert out["status"] == "memory", out
    assert "memory budget of 80 MiB" in out["message"]
    assert workspace.log_files(d) == {}


def test_time_budget_hit_stops_the_worker(tmp_path):
    d = workspace.path(tmp_path, workspace.create(tmp_path))
    job = _ingest_job(d, server.small_swf(200), time_s=0.01)
    out = worker.run_to_end(job)
    assert out["status"] == "time" and "time budget" in out["message"]
    with pytest.raises(ProcessLookupError):
        os.kill(job.pid, 0)


def test_cancel_kills_the_worker(tmp_path):
    d = workspace.path(tmp_path, workspace.create(tmp_path))
    job = _ingest_job(d, server.small_swf(200))
    out = worker.cancel(job)
    assert out["status"] == "cancelled"
    with pytest.raises(ProcessLookupError):
        os.kill(job.pid, 0)


@pytest.mark.slow  # 1.1 s CPU measured in the default run: the slow tier
def test_a_bad_file_is_an_error_naming_the_users_file_not_the_server_path(tmp_path):
    d = workspace.path(tmp_path, workspace.create(tmp_path))
    out = worker.run_to_end(_ingest_job(d, "; MaxNodes: 10\n1 2 three 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18\n"))
    assert out["status"] == "error" and "mine.swf" in out["message"]
    assert str(d) not in out["message"] and "u.swf" not in out["message"]


# ---------------------------------------------------------------- upload form and exports (pure)

def test_preview_reads_gzip_and_csv_header_gives_the_choices(tmp_path):
    p = tmp_path / "x.csv.gz"
    p.write_bytes(gzip.compress(b"job_name,start_time,end_time,plan_gpu\na,0,10,1\n"))
    lines = uploads.preview_lines(p)
    assert lines[0].startswith("job_name")
    cols = uploads.csv_columns(lines)
    g = uploads.guess_mapping(cols)
    assert (g["start"], g["end"], g["nodes"]) == ("start_time", "end_time", "plan_gpu")


def test_form_errors_use_the_forms_words_and_reports_no_paths():
    msg = uploads.form_error("trace.csv, field 'time-origin': time origin is not an ISO date-time")
    assert "field 'Time origin'" in msg and "time-origin" not in msg
    view = uploads.report_view({"log": "x", "rows": 5, "nodes": 10, "kind": "jobs", "source": "/srv/data/ab12.swf",
                                "skipped": 3, "skipped_why": {"empty start": 2, "zero run time": 1},
                                "oversubscription": {"oversub_intervals": 2, "oversub_s": 2000.0,
                                                     "oversub_max_nodes": 48}})
    assert view["skipped"] == ["2 rows skipped: empty start", "1 rows skipped: zero run time"]
    assert any("by up to 48 for 2,000 s" in w for w in view["warnings"])
    assert "source" not in view["details"]
    assert report.scrub_paths("db=/tmp/x/ws/abc/logs/k.duckdb") == "db=k.duckdb"
    import pandas as pd

    df = pd.DataFrame({"params_json": ['{"db": "/srv/ws/TOKEN/logs/k.duckdb", "log": "k"}'], "db": ["/a/b"],
                       "x": [1.0]})
    out = report.export_frame(df)
    assert list(out.columns) == ["params_json", "x"]
    assert out["params_json"][0] == '{"db": "k.duckdb", "log": "k"}'


# ---------------------------------------------------------------- AppTest sessions

@pytest.fixture
def app(summit_db, tmp_path, open_app):
    dbf = tmp_path / "planner.duckdb"
    shutil.copy(summit_db, dbf)

    def make(page: str | None = None, query: dict | None = None) -> AppTest:
        at = open_app(dbf, page, query)
        assert not at.exception, [e.value for e in at.exception]
        return at
    return make


def _load(at: AppTest, name: str, body: bytes) -> AppTest:
    at.file_uploader(key="up_file").upload(name, body, "text/plain")
    at.run()
    at.button(key="up_load").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_a_second_session_with_the_link_sees_the_same_log_and_run(app):
    at = _load(app("logs"), "kth-small.swf", server.small_swf(300).encode())
    assert not at.error, [e.value for e in at.error]
    token = at.query_params["ws"]
    at.switch_page("app_pages/planner.py").run()
    assert at.selectbox(key="pl_log").value == "kth-small"
    at.number_input(key="pl_hours").set_value(6.0).run()
    at.button(key="pl_run").click().run()
    assert not at.error, [e.value for e in at.error]
    mine = at.dataframe[0].value
    link = {k: at.query_params[k] for k in at.query_params}
    assert link["ws"] == token and link["log"] == "kth-small" and "result" in link
    # a colleague (a new session) opens the link: same log, same numbers, no run needed
    other = app("planner", query=link)
    assert not other.warning, [w.value for w in other.warning]
    assert other.selectbox(key="pl_log").value == "kth-small"
    assert other.dataframe[0].value.equals(mine)
    # a refresh without the scenario in the URL (only the workspace) finds the last scenario and run
    again = app("planner", query={"ws": token})
    assert again.selectbox(key="pl_log").value == "kth-small" and again.dataframe[0].value.equals(mine)


def test_links_naming_what_is_not_there_warn(app):
    at = app("planner", query={"log": "no-such-log", "hours": "2"})
    assert any("no-such-log" in w.value and "not loaded" in w.value for w in at.warning)
    assert at.selectbox(key="pl_log").value == "summit-2021"
    at = app(query={"ws": "A" * 32})  # the page the link opens (Home) says so
    assert any("workspace that is not on this server" in w.value for w in at.warning)
    assert at.query_params["ws"] != "A" * 32
    at = app("planner", query={"result": "0123456789abcdef"})
    assert any("Planner result" in w.value for w in at.warning)


def test_a_memory_budget_hit_shows_the_message_and_the_app_goes_on(app, monkeypatch):
    at = app("planner", query={"hours": "1", "pool_size": "128"})
    monkeypatch.setenv("PLANNER_APP_MEM_MB", "80")
    at.button(key="pl_run").click().run()
    assert not at.exception
    assert any("memory budget of 80 MiB" in e.value for e in at.error), [e.value for e in at.error]
    monkeypatch.setenv("PLANNER_APP_MEM_MB", "2048")
    at.button(key="pl_run").click().run()
    assert not at.error and len(at.get("plotly_chart")) == 6


RELATIVE = ("job,start_time,end_time,gpus\nj1,0,3600,4\nj2,600,7200,2\nj3,,,8\nj4,86400,90000,2\n"
            "j5,90000,93600,1\n")


def test_csv_time_origin_and_skip_incomplete_from_the_page(app):
    at = app("logs")
    at.file_uploader(key="up_file").upload("trace.csv", RELATIVE.encode(), "text/csv")
    at.run()
    assert at.selectbox(key="up_map_nodes").value == "gpus"
    at.radio(key="up_time_mode").set_value("seconds from an origin").run()
    at.button(key="up_load").click().run()
    # without an origin: the form's field is named, not the CLI flag
    assert any("Time origin" in e.value for e in at.error), [e.value for e in at.error]
    at.text_input(key="up_origin").input("2020-07-01T00:00:00").run()
    at.button(key="up_load").click().run()
    assert any("line 4" in e.value and "start_time" in e.value for e in at.error), [e.value for e in at.error]
    at.checkbox(key="up_skip").check().run()
    at.button(key="up_load").click().run()
    assert not at.error, [e.value for e in at.error]
    assert any("Loaded **trace**: 4 jobs" in s.value for s in at.success)
    assert any("1 rows skipped: empty start_time" in i.value for i in at.info)
    from appkit.tables import md_table_rows

    table = next(t for m in at.markdown if (t := md_table_rows(m.value)))  # the logs (appkit.tables)
    row = next(r for r in table if r["name"] == "trace")
    assert row[data.LOG_COLUMN_LABELS["start"]].startswith("2020-07-01")


def test_compare_runs_on_an_uploaded_log_with_defaults_that_fit_it(app):
    at = _load(app("logs"), "kth-small.swf", server.small_swf(300).encode())
    at.switch_page("app_pages/compare.py").run()
    assert at.selectbox(key="cmp_log").value == "kth-small"
    # the KTH SP2 has 100 nodes: pool sizes a quarter and a half of it, not Summit's 512/1024
    assert at.multiselect(key="cmp_sizes_kth-small").value == [25, 50]
    at.number_input(key="cmp_hours_kth-small").set_value(2.0).run()
    at.multiselect(key="cmp_allocs").set_value(["dp"]).run()
    at.multiselect(key="cmp_tfwd").set_value([120]).run()
    at.slider(key="cmp_workers").set_value(1).run()
    at.button(key="cmp_run").click().run(timeout=240)
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any("Results on kth-small" in s.value for s in at.subheader)
    assert len(at.get("plotly_chart")) >= 2
    table = at.dataframe[-1].value
    assert sorted(table["pool size (nodes)"]) == [25, 50] and "U (A_e/A_s) (ratio)" in table.columns


def test_report_tells_runs_apart_and_the_archive_holds_every_file():
    import io
    import zipfile

    import plotly.graph_objects as go

    fig = go.Figure([go.Scatter(name="N(t) idle pool", y=[1]), go.Scatter(name="allocated: dp", y=[1]),
                     go.Scatter(name="allocated: equal-share", y=[1]), go.Bar(name="equal-share", y=[1])])
    report.style_runs(fig, ["dp", "equal-share"])
    pool, dp, es, bar = fig.data
    assert dp.line.color != es.line.color and es.line.dash == "dash" and dp.line.dash is None
    assert bar.marker.color == es.line.color and pool.line.color not in (dp.line.color, es.line.color)
    z = zipfile.ZipFile(io.BytesIO(report.archive_bytes({"a.csv": b"x", "r/b.html": b"<p>"})))
    assert sorted(z.namelist()) == ["a.csv", "r/b.html"] and z.read("r/b.html") == b"<p>"
    import pandas as pd

    df = pd.DataFrame({"x": [1, 2], "cmd": ["=1+1", "ok"]})
    z = zipfile.ZipFile(io.BytesIO(report.export_archive({"t": df}, {"scenario.json": b"{}"})))
    assert sorted(z.namelist()) == ["csv/t.csv", "parquet/t.parquet", "scenario.json"]
    assert z.read("csv/t.csv") == report.to_csv_bytes(df) and b"'=1+1" in z.read("csv/t.csv")
    assert pd.read_parquet(io.BytesIO(z.read("parquet/t.parquet"))).equals(df)


def test_upload_limit_is_the_readers_limit_or_the_apps_smaller_cap():
    from appkit import data
    from planner.logs import limits

    assert data.MAX_UPLOAD_BYTES == min(limits.MAX_INPUT_BYTES, data.APP_UPLOAD_CAP_BYTES) == 500 * 2**20
    # Streamlit's server.maxUploadSize (10^6-byte MB in its browser code) lets the documented 500 MiB through
    assert data.streamlit_upload_cap() >= data.MAX_UPLOAD_BYTES


def test_guess_takes_a_partition_or_queue_column_before_loose_matches():
    g = uploads.guess_mapping(["job", "submit_time", "start", "end", "nodes", "queue"])
    assert (g["partition"], g["submit"], g["job_id"]) == ("queue", "submit_time", "job")
    g = uploads.guess_mapping(["start", "end", "gpus", "vc"])
    assert g["partition"] == "vc" and g["submit"] == ""


def test_csv_partition_column_from_the_page(app):
    at = app("logs")
    at.file_uploader(key="up_file").upload("parts.csv", b"start,end,nodes,queue\n"
                                           b"1600000000,1600003600,4,gpu\n1600000600,1600007200,2,cpu\n", "text/csv")
    at.run()
    assert at.selectbox(key="up_map_partition").value == "queue"
    at.button(key="up_load").click().run()
    assert not at.error, [e.value for e in at.error]
    assert any("Loaded **parts**: 2 jobs" in s.value for s in at.success), [s.value for s in at.success]


def test_a_loaded_upload_leaves_no_copy_behind(app, tmp_path):
    """Once a log is in its DuckDB file, the uploaded copy is deleted: it would hold the
    workspace quota for nothing (removing the log frees the space)."""
    import appkit.data
    from appkit import workspace

    at = _load(app("logs"), "kth-small.swf", server.small_swf(300).encode())
    assert not at.error, [e.value for e in at.error]
    d = workspace.path(appkit.data.SESSIONS_ROOT, at.query_params["ws"])
    assert "kth-small" in workspace.log_files(d)
    assert not [p for p in (d / "uploads").glob("*") if p.is_file()]
