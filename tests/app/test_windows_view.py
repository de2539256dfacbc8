"""The Planner's many-window section: its figure and tables from a run's result (pure builders)."""

from __future__ import annotations

import pytest

from appkit import windows_view
from planner.replay.windows import summarize


def fake_out():
    rows = []
    for w, (d, e) in enumerate([(0.9, 0.8), (0.95, 0.9), (0.85, 0.86), (0.92, 0.8)]):
        for a, u in (("dp", d), ("equal-share", e)):
            rows.append({"window": w, "allocator": a, "status": "ok", "utilization_efficiency": u,
                         "cost_free_utilization_efficiency": u + 0.02, "allocated_share": 0.8,
                         "trainers_completed": 10})
    return {"windows": 4, "allocators": ["dp", "equal-share"], "rows": rows, "wall_s": 1.0, "window_hours": 6,
            "log": "summit-2021", "summary": summarize(rows, ["dp", "equal-share"])}


def test_band_and_strip_show_every_window():
    fig = windows_view.band_strip_figure(fake_out())
    strips = [t for t in fig.data if t.name == "one window"]
    assert sum(len(t.y) for t in strips) == 8  # every window's value, both allocators
    bands = [t for t in fig.data if t.name == "10-90 % band"]
    assert len(bands) == 2 and all(b.base[0] <= b.base[0] + b.y[0] for b in bands)
    medians = [t for t in fig.data if t.name == "median"]
    assert sorted(m.y[0] for m in medians) == pytest.approx([0.83, 0.91])


def test_tables_and_headroom():
    out = fake_out()
    t = windows_view.spread_table(out)
    row = t[(t.allocator == "dp") & (t.unit == "ratio")].iloc[0]
    assert row["windows"] == 4 and abs(row["median"] - 0.91) < 1e-12
    lines = windows_view.headroom_lines(out)
    assert lines[0].startswith("dp: median U 0.910") and "+0.020" in lines[0]


def test_saved_run_survives(tmp_path):
    out = fake_out()
    windows_view.save(tmp_path, out)
    assert windows_view.load(tmp_path)["rows"] == out["rows"]
    assert windows_view.load(tmp_path / "none") is None


def test_calibration_view_from_a_calibrate_result():
    import json
    from pathlib import Path

    from appkit import calibration_view

    out = json.loads((Path(__file__).parents[2] / "docs" / "studies" / "windows_calibration_summit-2021.json")
                     .read_text())
    fig = calibration_view.reliability_figure(out)
    assert len(fig.data) == 1 + len(out["per_t"])  # the diagonal and one curve per T
    t = calibration_view.table(out)
    assert t["T (min)"].tolist() == [5.0, 15.0, 30.0, 60.0]
    assert (t["ECE (%)"] >= t["over-prediction part of ECE (%)"]).all()


def test_moment_tables_per_node_and_pool():
    from appkit import calibration_view

    out = {"at_s": 0.0, "idle_nodes": 2, "levels": [0.5, 0.9],
           "nodes": [{"node": 3, "idle_for_s": 60.0, "p_30min": 0.7}, {"node": 5, "idle_for_s": 9.0, "p_30min": 0.4}],
           "pool": [{"t_min": 30.0, "expected": 1.1, "at_least": {"0.5": 1, "0.9": 0}, "stayed": 1}]}
    pool, nodes = calibration_view.moment_tables(out)
    assert pool.iloc[0]["at least k with p 0.9"] == 0 and pool.iloc[0]["stayed (if the log goes on)"] == 1
    assert nodes.columns.tolist() == ["node", "idle for (s)", "P(stays >= 30 min)"]
    assert nodes["P(stays >= 30 min)"].tolist() == [0.7, 0.4]
