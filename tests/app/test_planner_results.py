"""appkit.planner_results: the Planner's result screen drawn whole, and each part alone (what
benchmarks/bench_planner_figures.py measures part by part in Chromium)."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from appkit import planner_results, workspace

ROOT = Path(__file__).resolve().parents[2]
# the screen in an app of its own, beside the app's pages (its link to the Downloads page is checked)
SCREEN = """import sys
from pathlib import Path

import streamlit as st

from appkit import planner_results, workspace


def screen():
    last = workspace.load_run(Path({ws!r}), {rid!r})
    planner_results.show(last, last["scenario"], parts=tuple(st.query_params.get("parts", "").split(",")))


st.navigation([st.Page(screen, title="screen", default=True), st.Page("app_pages/downloads.py")],
              position="hidden").run()
"""


@pytest.mark.slow  # one small pair replayed (0.4 s CPU)
def test_the_result_screen_whole_and_by_part(tmp_path, summit_db, monkeypatch):
    import appkit.data
    from appkit.runs import run_pair
    from planner.store import db

    monkeypatch.setenv("PLANNER_DB", str(summit_db))
    monkeypatch.setattr(appkit.data, "SESSIONS_ROOT", tmp_path / "sessions")
    sc = {"log": "summit-2021", "start": "2021-02-10T20:21:15", "hours": 1.0, "pool": "log", "pool_size": 256,
          "workload": "hpo", "allocator": "dp", "baseline": "equal-share", "tfwd": 120.0, "objective": "throughput",
          "pj_max": 10, "rup": 18.0, "rdw": 12.0, "seed": 0}
    con = db.connect(summit_db, read_only=True)
    try:
        runs = run_pair(sc, con=con)
    finally:
        con.close()
    ws = tmp_path / "ws"
    ws.mkdir()
    workspace.save_run(ws, "0123456789abcdef", sc, runs, 1.5)

    app = tmp_path / "screen.py"
    app.write_text(SCREEN.format(ws=str(ws), rid="0123456789abcdef"))
    (tmp_path / "app_pages").symlink_to(ROOT / "app_pages")

    def draw(parts):
        at = AppTest.from_file(str(app), default_timeout=60)
        at.query_params["parts"] = ",".join(parts)
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        return at

    whole = draw(planner_results.PARTS)
    heads = [h.value for h in whole.subheader]
    # the limits' box comes before the charts on screen (it is filled last: the cost-free twins may still run)
    assert [h.split(":")[0] for h in heads] == ["Capacity answer", "Headline numbers", "Limits of this run",
                                               "All headline numbers"]
    assert len(whole.get("plotly_chart")) == 6 and len(whole.dataframe) == 1
    assert len(whole.metric) == 6 + 8  # the capacity tiles; the headline metrics and the Trainer flow
    assert whole.query_params["result"] == "0123456789abcdef"  # the link names this result

    cap = draw(("capacity",))
    assert [h.value.split(":")[0] for h in cap.subheader] == ["Capacity answer"]
    assert len(cap.metric) == 6 and not cap.get("plotly_chart") and not cap.dataframe
    figs = draw(("figures",))
    assert len(figs.get("plotly_chart")) == 6 and not figs.metric and not figs.subheader
    none = draw(("none",))
    assert not none.subheader and not none.metric and not none.get("plotly_chart")
