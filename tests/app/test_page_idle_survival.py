"""The Idle page's survival section (appkit.survival_view.render) in AppTest."""

from __future__ import annotations

import shutil


def test_idle_page_shows_survival_curves_and_calibration_on_demand(summit_db, tmp_path, open_app):
    db = tmp_path / "planner.duckdb"
    shutil.copy(summit_db, db)
    at = open_app(db, "idle")
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
