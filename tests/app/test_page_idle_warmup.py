"""The Idle page's "Whole log" view leaves out a warm-up the user excluded (it used to include it)."""

from __future__ import annotations

import shutil

from appkit import server, workspace


def _table(at) -> dict:
    df = next(d.value for d in at.dataframe if list(d.value.columns) == ["figure", "value"])
    return dict(zip(df["figure"], df["value"]))


def test_whole_log_leaves_out_an_excluded_warmup(summit_db, tmp_path, open_app):
    import appkit.data

    dbf = tmp_path / "planner.duckdb"
    shutil.copy(summit_db, dbf)
    at = open_app(dbf, "logs")
    at.file_uploader(key="up_file").upload("kth-small.swf", server.small_swf(300).encode(), "text/plain")
    at.run()
    at.button(key="up_load").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    token = at.query_params["ws"]
    at.switch_page("app_pages/idle.py").run()
    at.selectbox(key="idle_log").set_value("kth-small").run()
    assert at.toggle(key="idle_whole").value
    whole = _table(at)
    # exclude the first 10 hours, as the Logs page's toggle does
    wsd = workspace.path(appkit.data.SESSIONS_ROOT, token)
    logs = appkit.data.logs.list_logs(appkit.data.db.connect(workspace.log_files(wsd)["kth-small"], read_only=True))
    start_s = float(logs.iloc[0]["start_s"])
    workspace.update_meta(wsd, exclude_warmup={"kth-small": start_s + 10 * 3600.0})
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    cut = _table(at)
    span_whole, span_cut = float(whole["span_h"].replace(",", "")), float(cut["span_h"].replace(",", ""))
    assert span_cut == span_whole - 10.0
    assert float(cut["idle_node_hours"].replace(",", "")) < float(whole["idle_node_hours"].replace(",", ""))
