"""The static SVG charts (appkit.charts.svg_plot, svg_share_bar, time_ticks): a page's first draw
without Plotly (issue 25, speed), checked on hand-made series: where each bar and step lands in
pixels, the axis labels, the legend, a zoomed range, empty input."""

from __future__ import annotations

import re

import numpy as np

from appkit import charts

DAY = 86400.0
T0 = 1612915200.0  # 2021-02-10 00:00 UTC


def _rects(svg: str) -> list[tuple[float, float, float, float]]:
    """The data bars: (x, y, width, height) of every rect inside the clipped plot group."""
    plot = svg.split('<g clip-path="url(#plot)">', 1)[1].split("</g>", 1)[0]
    return [tuple(float(v) for v in m) for m in
            re.findall(r'<rect x="([-\d.]+)" y="([-\d.]+)" width="([-\d.]+)" height="([-\d.]+)"', plot)]


def test_bars_heights_positions_and_axes():
    # two series of three 12-h windows: join 10, 40, 20; leave 5, 0, 30 (a zero draws no bar)
    t = [T0, T0 + DAY / 2, T0 + DAY]
    svg = charts.svg_plot("Events per 12 h", "window start (UTC)", "events",
                          bars=[("join events", t, [10, 40, 20]), ("leave events", t, [5, 0, 30])],
                          bar_width=DAY / 2, x_time=True, width=620, height=300)
    # margins 56 / 12 / 28 / 40 and a 22 px legend row: plot 552 x 232 px, y from 0 to 40 (ticks every 10)
    ml, mt, w, h = 56, 28, 620 - 56 - 12, 300 - 28 - 40
    assert re.findall(r'x="50" y="[^"]+" text-anchor="end">([^<]+)<', svg) == ["0", "10", "20", "30", "40"]
    bars = _rects(svg)
    assert len(bars) == 5  # the leave series' 0 is no bar
    heights = [round(b[3], 1) for b in bars]
    assert heights == [round(v / 40 * h, 1) for v in (10, 40, 20, 5, 30)]
    assert all(abs(b[1] + b[3] - (mt + h)) < 0.11 for b in bars)  # every bar stands on y = 0
    span = 1.5 * DAY  # the x axis: the first window's start to the last one's end
    first_join, first_leave = bars[0][0], bars[3][0]
    assert abs(first_join - ml) < 0.11 and abs(first_leave - (ml + 0.25 * DAY / span * w)) < 0.11
    # UTC dates on x: whole 6 h steps within the span, with the time of day; titles; the legend
    assert re.findall(r'text-anchor="middle">(\w\w\w \d\d \d\d:\d\d)<', svg) == [  # Feb 11 12:00: at the edge
        "Feb 10 00:00", "Feb 10 06:00", "Feb 10 12:00", "Feb 10 18:00", "Feb 11 00:00", "Feb 11 06:00"]
    assert ">window start (UTC)<" in svg and ">events<" in svg and ">Events per 12 h<" in svg
    assert ">join events<" in svg and ">leave events<" in svg


def test_steps_band_and_a_zoomed_range():
    t = np.array([T0, T0 + 3600, T0 + 7200, T0 + 10800])
    mean, lo, hi = np.array([5.0, 8, 2, 4]), np.array([1.0, 6, 0, 3]), np.array([9.0, 10, 4, 6])
    svg = charts.svg_plot("N(t)", "time (UTC)", "idle nodes", steps=[("mean N(t)", t, mean, False)],
                          band=(t, lo, hi), x_time=True, end=T0 + 14400)
    paths = re.findall(r'<path d="([^"]+)" fill="([^"]+)"', svg)
    assert [f for _, f in paths] == [charts.SVG_FILL, "none"]  # the band under the mean's line
    assert re.findall(r'x="50" y="[^"]+" text-anchor="end">([^<]+)<', svg) == ["0", "2", "4", "6", "8", "10"]
    zoom = charts.svg_plot("N(t)", "time (UTC)", "idle nodes", steps=[("mean N(t)", t, mean, False)],
                           band=(t, lo, hi), x_time=True, end=T0 + 14400, x_range=(T0 + 3600, T0 + 7200))
    ticks = re.findall(r'text-anchor="middle">(\w\w\w \d\d \d\d:\d\d)<', zoom)
    assert ticks == ["Feb 10 01:00"]  # the zoomed hour's start (its end's label would pass the edge)
    line = re.findall(r'<path d="([^"]+)" fill="none"', zoom)[0]
    xs = [float(v) for v in re.findall(r"[ML]([-\d.]+),", line)]
    assert xs[0] == 56.0  # the value holding at the range's start is drawn from its left edge
    # a plain (not time) axis: the range's ends and middle as numbers
    plain = charts.svg_plot("p", "h", "n", steps=[(None, [0, 2, 4], [1, 2, 3])], end=6.0)
    assert ">0<" in plain and ">3<" in plain and ">6<" in plain and ">h<" in plain


def test_empty_input_and_escaping():
    assert "no data in this window" in charts.svg_plot("t", "x", "y", steps=[(None, [], [])])
    assert "no data in this window" in charts.svg_plot("t", "x", "y", bars=[("a", [], [])], bar_width=1.0)
    svg = charts.svg_plot("a <b> & c", "x", "y", steps=[(None, [0, 1], [1, 1])])
    assert "a &lt;b&gt; &amp; c" in svg and "<b>" not in svg


def test_share_bar_widths_and_legend():
    svg = charts.svg_share_bar([("allocated", 300.0, "#111"), ("down", 0.0, "#222"), ("idle <x>", 100.0, "#333")],
                               "Split", "node-hours", width=424)
    rects = re.findall(r'<rect x="([\d.]+)" y="28" width="([\d.]+)" height="24" fill="(#\d+)"', svg)
    assert [(float(w), c) for _, w, c in rects] == [(300.0, "#111"), (100.0, "#333")]  # 400 px: 3/4 and 1/4
    assert "allocated: 300 (75.0 %)" in svg and "idle &lt;x&gt;: 100 (25.0 %)" in svg and "down" not in svg
    assert "no node-hours" in charts.svg_share_bar([("a", 0.0, "#111")], "Split")


def test_time_ticks_hours_days_weeks_months():
    assert charts.time_ticks(T0 + 1800, T0 + 5 * 3600)[1] == ["Feb 10 01:00", "Feb 10 02:00", "Feb 10 03:00",
                                                              "Feb 10 04:00", "Feb 10 05:00"]
    v, lab = charts.time_ticks(T0, T0 + 30 * DAY)
    assert lab[0] == "Feb 15" and all(np.diff(v) == 7 * DAY)  # Mondays
    v, lab = charts.time_ticks(T0, T0 + 400 * DAY)
    assert len(v) <= 7 and lab[0] == "Apr 2021" and all(np.diff(v) > 59 * DAY)  # every other month's first
    v, lab = charts.time_ticks(T0, T0 + 15 * DAY)  # 15 days: every third day at 00:00 UTC
    assert lab == ["Feb 11", "Feb 14", "Feb 17", "Feb 20", "Feb 23"] and all(np.diff(v) == 3 * DAY)


def test_the_split_table_as_markdown():
    """The overview's split table (appkit.tables.md_table: no table widget, whose 1.2 MB of code the
    first load would fetch): the header, numbers right-aligned, Markdown's characters shown as text."""
    from appkit.tables import md_table

    text = md_table([{"category": "idle, harvestable", "node-hours": "140,182", "share (%)": "8.3"},
                     {"category": "a | b_c *d*", "node-hours": "0", "share (%)": "0.0"}])
    assert text.splitlines() == ["| category | node-hours | share (%) |", "|---|---:|---:|",
                                 "| idle, harvestable | 140,182 | 8.3 |", r"| a \| b\_c \*d\* | 0 | 0.0 |"]
    assert md_table([]) == ""


def test_a_time_label_at_the_edge_is_left_out():
    # the last tick (Feb 11 00:00) at the plot's right edge: its label would pass the picture's edge
    svg = charts.svg_plot("t", "x", "y", steps=[(None, [T0 + 12 * 3600, T0 + DAY], [1, 1])], x_time=True,
                          width=300)
    labels = re.findall(r'text-anchor="middle">(\w\w\w \d\d \d\d:\d\d)<', svg)
    ticks = svg.count('y2="204" stroke="#888"')  # every tick mark stays
    assert "Feb 11 00:00" not in labels and ticks == len(labels) + 1


def test_gap_bars_by_hand():
    """svg_gap_bars: 0 % (ours) and 100 % (the paper's) at the axis' places, one bar per experiment from
    0 to its share, the explaining band shaded; a share past the widest axis (300 %) cut with an arrow,
    its value printed; a negative share to the left of ours; the legend only for the readings drawn."""
    items = [("1. far past", 8.71, "past", "far past in full"), ("2. half", 0.5, "explains", "half"),
             ("3. away", -0.2, "miss", "away")]
    svg = charts.svg_gap_bars(items, "T", {"past": "PAST", "explains": "EXPLAINS", "miss": "MISS", "fitted": "FIT"})
    ml, w = 388, 900 - 388 - 52  # the labels' column, then the plot (charts.svg_gap_bars' margins)
    lo, hi = -0.25, 3.0  # the axis: from -25 % (room left of ours) to the widest, 300 %

    def px(v):
        return ml + (v - lo) / (hi - lo) * w

    bars = [tuple(float(v) for v in m) for m in re.findall(
        r'<rect x="([\d.]+)" y="[\d.]+" width="([\d.]+)" height="14" fill', svg)]
    assert [(round(x), round(x + bw)) for x, bw in bars] == [
        (round(px(0)), round(px(3.0))), (round(px(0)), round(px(0.5))), (round(px(-0.2)), round(px(0)))]
    assert svg.count("<path") == 1  # the cut bar's arrow
    assert ">871 %</text>" in svg and ">50 %</text>" in svg and ">-20 %</text>" in svg
    band = re.search(r'<rect x="([\d.]+)" y="[\d.]+" width="([\d.]+)" height="[\d.]+" fill="rgba', svg)
    assert (round(float(band[1])), round(float(band[1]) + float(band[2]))) == (round(px(0.5)), round(px(1.5)))
    assert ">PAST</text>" in svg and ">EXPLAINS</text>" in svg and ">MISS</text>" in svg and "FIT" not in svg
    assert "<title>far past in full: closes 871 % of the gap</title>" in svg
    ticks = re.findall(r'text-anchor="middle">(-?\d+) %</text>', svg)
    assert ticks[:3] == ["0", "50", "100"] and "-0" not in ticks  # the axis from ours (never "-0 %")
