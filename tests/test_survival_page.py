"""The Idle page's survival section (appkit.survival_view.render) in AppTest."""

from __future__ import annotations

import shutil
from pathlib import Path

from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parent.parent / "app.py")


def test_idle_page_shows_survival_curves_and_calibration_on_demand(summit_db, tmp_path, monkeypatch):
    db = tmp_path / "planner.duckdb"
    shutil.copy(summit_db, db)
    monkeypatch.setenv("PLANNER_DB", str(db))
    monkeypatch.setenv("PLANNER_SESSIONS_DIR", str(tmp_path / "sessions"))
    import appkit.data

    monkeypatch.setattr(appkit.data, "SESSIONS_ROOT", tmp_path / "sessions")
    at = AppTest.from_file(APP, default_timeout=180)
    at.run()
    at.switch_page("app_pages/idle.py").run()
    assert not at.exception, [e.value for e in at.exception]
    charts = len(at.get("plotly_chart"))
    toggle = next(t for t in at.toggle if t.key.startswith("surv_"))
    toggle.set_value(True).run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    assert len(at.get("plotly_chart")) == charts + 2  # survival curves + calibration
    table = at.dataframe[-1].value
    assert list(table.columns)[:2] == ["predictor", "concordance"]
    assert table["concordance"].between(0.5, 1.0).all()
