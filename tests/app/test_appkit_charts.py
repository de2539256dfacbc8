"""Metrics that explain themselves and honest charts: glossary, coloured deltas, number formats,
axes (planner.report.glossary, appkit.headline, appkit.charts, appkit.profile_charts)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from appkit import charts, headline, profile_charts, runs
from planner.report import glossary
from planner.report.headline import HEADLINE
from planner.sweep import compare
from planner.sweep.compare import METRICS


def test_every_headline_metric_has_a_definition_and_unit():
    """Planner table, headline cells and Compare read label, unit, scale and format from the
    glossary alone: every key they list has a term, and each page shows its numbers the same way."""
    for key in (*HEADLINE, *METRICS, *headline.FLOW):
        t = glossary.term(key)
        assert t is not None, key
        assert t.unit and t.scale > 0 and len(t.definition) > 20 and glossary.help_for(key).endswith(".")
        assert t.show(None) == "-" and t.show(float("nan")) == "-"
    # scale and format, as each page prints them
    shown = {k: glossary.term(k).show(v) for k, v in (("mean_queue_s", 1234.5), ("samples", 2.5e9),
                                                      ("solve_s.max", 0.01234), ("trainers_completed", 1234),
                                                      ("utilization_efficiency", 0.98765))}
    assert shown == {"mean_queue_s": "20.6", "samples": "2.500", "solve_s.max": "12.3",
                     "trainers_completed": "1,234", "utilization_efficiency": "0.988"}
    summary = {"mean_queue_s": 90.0, "solve_s": {"mean": 0.00125}, "allocated_share": 0.5}
    table = runs.headline_table({"dp": summary}).set_index("metric")
    assert table.loc["mean queueing time", "dp"] == pytest.approx(1.5)  # seconds shown in minutes
    assert table.loc["mean time per decision", "dp"] == pytest.approx(1.25)  # seconds shown in ms
    assert table.loc["allocated share", "unit"] == "ratio"
    swept = compare.result_frame(pd.DataFrame({"mean_queue_s": [90.0], "solve_s_mean": [0.00125]}))
    assert swept["mean_queue_s"].iloc[0] == pytest.approx(1.5) and swept["solve_s_mean"].iloc[0] == pytest.approx(1.25)


def test_u_definition_says_what_a_e_and_a_s_are_and_why_it_can_exceed_1():
    h = glossary.help_for("utilization_efficiency")
    assert "A_e" in h and "A_s" in h and "exceed 1" in h and "n-bar" in h


@pytest.mark.parametrize("key,value,base,fmt,text,color", [
    ("mean_queue_s", 12.0, 10.0, ",.1f", "+2.0 vs eq", "inverse"),  # higher queueing: red
    ("mean_queue_s", 8.0, 10.0, ",.1f", "-2.0 vs eq", "inverse"),  # lower: green (inverse of normal)
    ("utilization_efficiency", 0.9, 0.8, ".3f", "+0.100 vs eq", "normal"),
    ("utilization_efficiency", 0.80001, 0.8, ".3f", "no change vs eq", "off"),  # never "-0.000"
    ("utilization_efficiency", 0.7999996, 0.8, ".3f", "no change vs eq", "off"),
    ("events", 10.0, 7.0, ",.0f", "+3 vs eq", "off"),  # neither way is better
])
def test_delta_colour_follows_better_or_worse(key, value, base, fmt, text, color):
    d, c, arrow = glossary.delta(key, value, base, fmt, "eq")
    assert (d, c) == (text, color)
    assert arrow == ("off" if text.startswith("no change") else "auto")


def test_delta_without_baseline_or_value():
    assert glossary.delta("mean_queue_s", None, 3.0, ".1f", "eq") == (None, "off", "off")
    assert glossary.delta("mean_queue_s", float("nan"), 3.0, ".1f", "eq") == (None, "off", "off")


def test_headline_cells_flow_and_lower_bound():
    a = {"trainers_arrived": 1000, "trainers_started": 60, "trainers_completed": 50, "trainers_waiting_at_end": 940,
         "mean_queue_s": 600.0, "mean_queue_incl_waiting_s": 36000.0, "utilization_efficiency": 1.029,
         "allocated_share": 0.9}
    b = dict(a, trainers_started=55, mean_queue_incl_waiting_s=36000.0, utilization_efficiency=0.8)
    cells = {c["key"]: c for c in headline.cells({"dp": a, "equal-share": b}, headline.FLOW)}
    assert list(cells) == ["trainers_arrived", "trainers_started", "trainers_waiting_at_end",
                           "mean_queue_incl_waiting_s"]
    assert cells["trainers_arrived"]["value"] == "1,000"
    assert cells["trainers_started"]["delta"] == "+5 vs equal-share"
    assert cells["trainers_started"]["delta_color"] == "normal"
    q = cells["mean_queue_incl_waiting_s"]
    assert "lower bound" in q["label"] and q["value"] == "600.0" and q["delta"] == "no change vs equal-share"
    # an older summary without the new keys: those cells are left out, not shown as "-"
    old = {k: v for k, v in a.items() if k not in ("trainers_waiting_at_end", "mean_queue_incl_waiting_s")}
    assert [c["key"] for c in headline.cells({"dp": old}, headline.FLOW)] == ["trainers_arrived", "trainers_started"]
    top = {c["key"]: c for c in headline.cells({"dp": a, "equal-share": b}, headline.headline_rows())}
    assert top["utilization_efficiency"]["value"] == "1.029" and top["utilization_efficiency"]["help"]


@pytest.mark.parametrize("v,unit,text", [
    (0.03397168194806134, "", "0.034"), (1234567.89, "node-h", "1,234,568 node-h"), (12.3456, "s", "12.3 s"),
    (-0.0, "", "0"), (None, "s", "-"), (float("nan"), "", "-"), (2.5, "h", "2.5 h"), (100, "", "100"),
])
def test_fmt_num(v, unit, text):
    assert charts.fmt_num(v, unit) == text


def test_utilization_axis_is_not_exaggerated():
    fig = charts.step_lines({"u": (np.array([0.0, 1.0, 2.0]), np.array([99.2, 99.9, 99.5]))}, "u", "%", "%",
                            time_axis=False)
    charts.zero_based(fig, upper=100.0)
    lo, hi = fig.layout.yaxis.range
    assert lo == 0 and 100 <= hi <= 103


def test_count_histogram_has_whole_ticks_and_legend_below_title():
    fig = charts.histograms({"a": [1, 2, 2, 3], "b": [2, 3]}, "t", "x", "s")
    assert fig.layout.yaxis.dtick >= 1 and float(fig.layout.yaxis.dtick).is_integer()
    assert fig.layout.legend.y < 0  # under the plot, never over the title
    assert all(t.type == "bar" for t in fig.data)
    assert sum(sum(t.y) for t in fig.data) == 6


def test_log_ticks_are_readable():
    _, text = charts.log_ticks(0.5, 4000, "ms")
    assert text[0] == "1 ms" and "1,000 ms" in text and not any("e" in t for t in text)
    _, text = charts.duration_ticks(30, 40 * 86400)
    assert text[:3] == ["1 min", "10 min", "1 h"] and "1 wk" in text


def test_weekhour_heatmap_blank_where_not_covered():
    df = pd.DataFrame({"weekday": np.repeat(np.arange(7), 24), "hour": np.tile(np.arange(24), 7)})
    df["weekday_name"] = [("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")[w] for w in df["weekday"]]
    df["covered_h"] = np.where(df["weekday"] == 0, 1.0, 0.0)
    df["idle_node_hours"] = np.where(df["weekday"] == 0, 5.0, 0.0)
    df["mean_idle_nodes"] = np.where(df["weekday"] == 0, 5.0, np.nan)
    fig = profile_charts.weekhour_heatmap(df)
    z = np.array(fig.data[0].z, dtype=float)
    assert z.shape == (7, 24) and np.all(z[0] == 5.0) and np.all(np.isnan(z[1:]))
    assert fig.data[0].zmin == 0


def test_holes_heatmap_shows_no_empty_categories():
    df = pd.DataFrame({"nodes_min": [1, 4], "nodes_max": [1, 7], "size": ["1", "4-7"],
                       "length_min_s": [3600.0, 60.0], "length_max_s": [10800.0, 600.0],
                       "length": ["1-3 h", "1-10 min"], "holes": [2, 3], "node_hours": [2.0, 0.25]})
    fig = profile_charts.holes_heatmap(df)
    assert list(fig.data[0].x) == ["1-10 min", "1-3 h"]  # sorted by length; no "2-3" row, no other lengths
    assert list(fig.data[0].y) == ["1 node", "4-7 nodes"]
    text = fig.data[0].text
    assert text[0][1] == "2" and text[1][0] == "0.25" and text[0][0] == text[1][1] == ""


def test_grouped_bars_leave_out_empty_categories():
    fig = charts.grouped_metric_bars({"rescaling": {"dp": 1.0, "eq": 2.0}, "idle during solve": {"dp": 0.0, "eq": 0.0},
                                      "preemption": {"dp": float("nan"), "eq": 3.0}}, "t", "cost", "M")
    assert list(fig.data[0].x) == ["rescaling", "preemption"]


def test_svg_steps_a_preview_without_plotly():
    """Issue 25 (speed): the Planner's pre-run N(t) as a static SVG: a step path filled to 0, y ticks
    from 0 above the maximum, the x range's ends labelled, titles escaped, points thinned."""
    import re

    from appkit import charts

    svg = charts.svg_steps([0.0, 1.0, 2.5, 24.0], [100, 300, 50, 50], "N <pool>", "time (h)", "idle nodes")
    assert svg.startswith("<svg") and svg.endswith("</svg>") and "N &lt;pool&gt;" in svg and "<pool>" not in svg
    path = re.search(r'<path d="([^"]+)"', svg).group(1)
    assert path.startswith("M56.0,200.0") and path.endswith("Z")  # from (x0, 0), closed back to 0
    ticks = re.findall(r'x="50" y="[^"]+" text-anchor="end">([^<]+)<', svg)  # the y ticks (x = 56 - 6)
    assert ticks == ["0", "100", "200", "300"]  # whole steps from 0 to the maximum (300)
    assert ">0<" in svg and ">24<" in svg and ">12<" in svg  # the x range's ends and middle
    many = charts.svg_steps(np.arange(10_000.0), np.arange(10_000.0) % 7, "t", "x", "y", max_points=900)
    assert re.search(r'<path d="([^"]+)"', many).group(1).count("L") <= 2 * 900 + 2  # two corners a step
    assert "no data" in charts.svg_steps([], [], "t", "x", "y")
