"""The app's pure helpers: scenario <-> URL, exports (CSV injection, Parquet, offline HTML),
chart builders, the upload handler (server-chosen names, one-line errors, nothing left behind)."""

from __future__ import annotations

import io
import re

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from appkit import charts, data, report, runs, state
from planner.errors import InputError
from planner.sweep import compare
from tests.helpers import app_load, examples

# ---------------------------------------------------------------- scenario <-> URL


def test_defaults_round_trip_through_the_url():
    params = state.scenario_to_params(state.DEFAULTS)
    back, notes = state.scenario_from_params(params)
    assert notes == [] and back == state.DEFAULTS
    assert params["hours"] == "24" and params["tfwd"] == "120" and params["start"] == "2021-02-10T20:21:15"


@pytest.mark.parametrize("budget", examples(60))
def test_any_valid_scenario_round_trips(budget):
    @settings(max_examples=budget, deadline=None)
    @given(hours=hs.floats(0.05, 1000), pool_size=hs.integers(1, 100000), tfwd=hs.floats(1, 86400),
           pj_max=hs.integers(1, 1000), alloc=hs.sampled_from(["dp", "milp", "greedy"]))
    def example(hours, pool_size, tfwd, pj_max, alloc):
        sc = dict(state.DEFAULTS, hours=hours, pool_size=pool_size, tfwd=tfwd, pj_max=pj_max, allocator=alloc)
        back, notes = state.scenario_from_params(state.scenario_to_params(sc))
        assert notes == []
        assert back["pool_size"] == pool_size and back["pj_max"] == pj_max and back["allocator"] == alloc
        assert back["hours"] == pytest.approx(hours, rel=1e-5) and back["tfwd"] == pytest.approx(tfwd, rel=1e-5)

    example()


@pytest.mark.parametrize("key,value", [("hours", "lots"), ("hours", "-1"), ("hours", "nan"), ("pj_max", "2.5"),
                                       ("pool_size", "0"), ("start", "yesterday"), ("pool", "cloud"),
                                       ("tfwd", "inf"), ("log", "")])
def test_bad_url_values_keep_the_default_and_say_why(key, value):
    sc, notes = state.scenario_from_params({key: value, "allocator": "greedy"})
    assert sc[key] == state.DEFAULTS[key]
    assert sc["allocator"] == "greedy"
    assert len(notes) == 1 and key in notes[0] and "\n" not in notes[0]


def test_unknown_url_keys_are_ignored_and_lists_take_the_last_value():
    sc, notes = state.scenario_from_params({"evil": "1", "hours": ["3", "5"]})
    assert notes == [] and sc["hours"] == 5.0 and "evil" not in sc


_LO, _HI = 1609718400.0, 1609729200.0  # 2021-01-04 00:00 .. 03:00 UTC


def test_a_links_view_is_one_of_the_idle_views():
    """Issue 25: the Idle page's view in a link (appkit.state, beside the zoom's from/to)."""
    assert state.view_from_params({}) == (None, [])
    assert state.view_from_params({"view": "Where"}) == ("where", [])
    assert state.view_from_params({"view": ["fragments", "all"]}) == ("all", [])
    view, notes = state.view_from_params({"view": "x" * 300})
    assert view is None and len(notes) == 1 and notes[0].startswith("URL parameter view=") and "\n" not in notes[0]
    assert "view" in state.KEEP_PARAMS  # kept when the scenario rewrites the URL


@pytest.mark.parametrize("params, want, why", [
    ({}, None, None),
    ({"from": "2021-01-04T01:00:00", "to": "2021-01-04T02:00:00"}, (_LO + 3600, _LO + 7200), None),
    ({"from": "1609722000", "to": "1609729200000"}, (_LO + 3600, _HI), None),  # epoch s; Grafana's epoch ms
    ({"from": "2021-01-04T02:59:59.6", "to": "2021-01-04T03:00:00.9"}, (_HI - 0.4, _HI), None),  # 1 s slack
    ({"from": "2021-01-04T01:00:00"}, None, "needs both from and to"),
    ({"from": "2021-01-04T02:00:00", "to": "2021-01-04T01:00:00"}, None, "from must be before to"),
    ({"from": "2020-01-01", "to": "2021-01-04T01:00:00"}, None, "outside the window shown (2021-01-04T00:00:00"),
    ({"from": "yesterday", "to": "2021-01-04T01:00:00"}, None, "from='yesterday' ignored: not a time"),
])
def test_a_links_zoom_is_checked_against_the_window(params, want, why):
    """Issue 25: the zoom's from/to in a link (appkit.state, beside the scenario's URL fields)."""
    rng, notes = state.zoom_from_params(params, _LO, _HI)
    assert rng == want
    assert (notes == []) if why is None else (len(notes) == 1 and why in notes[0] and "\n" not in notes[0]), notes
    if want:  # and back: whole seconds, UTC, the form of the scenario's start
        assert state.zoom_to_params(*want) == {k: state.iso_utc(round(v)) for k, v in zip(state.ZOOM_PARAMS, want)}


def test_adapt_to_log_moves_the_window_into_the_log():
    t0, t1 = 843_480_000.0, 843_480_000.0 + 48 * 3600
    out = state.adapt_to_log(state.DEFAULTS, "kth", t0, t1, nodes=100)
    assert out["log"] == "kth" and out["start"] == state.iso_utc(t0)
    assert out["pool_size"] == 100 and out["hours"] == 24.0
    inside = dict(state.DEFAULTS, start=state.iso_utc(t0 + 40 * 3600))
    out = state.adapt_to_log(inside, "kth", t0, t1, nodes=100)
    assert out["start"] == inside["start"] and out["hours"] == pytest.approx(8.0)


def test_page_scenario_makes_a_valid_planner_scenario():
    sc = runs.make_scenario(state.DEFAULTS, "greedy", db_path="/tmp/x.duckdb")
    assert sc.allocator == "greedy" and sc.hours == 24.0 and sc.pool_size == 1024 and sc.db == "/tmp/x.duckdb"
    with pytest.raises(InputError, match="start"):
        runs.make_scenario(dict(state.DEFAULTS, start="garbage"), "dp")


def test_headline_table_scales_and_aligns_runs():
    t = runs.headline_table({"a": {"mean_queue_s": 120.0, "solve_s": {"mean": 0.002}},
                             "b": {"mean_queue_s": 60.0}})
    row = t.set_index("metric")
    assert row.loc["mean queueing time", "a"] == 2.0 and row.loc["mean queueing time", "b"] == 1.0
    assert row.loc["mean time per decision", "a"] == pytest.approx(2.0)
    assert pd.isna(row.loc["mean time per decision", "b"])


@pytest.mark.slow  # 0.5 s (pandas' Styler imports jinja2)
def test_headline_table_for_people_has_no_long_floats():
    """Issue 25: the Planner's "All headline numbers" as the glossary prints each metric; '-' when missing."""
    t = runs.headline_table({"a": {"mean_queue_s": 26101.123456, "samples": 7114412345.0}, "b": {}})
    html = runs.headline_styler(t).to_html()
    assert ">435.0<" in html and ">7.114<" in html and ">-<" in html and "435.01" not in html
    assert t.set_index("metric").loc["samples trained", "unit"] == "billion samples"


def test_compare_grid_from_choices():
    g = compare.grid_from_choices({"log": "x", "tfwd": 5}, allocator=["dp", "dp", "greedy"], tfwd=[600, 60],
                                  pool_size=[512], objective=["throughput"])
    assert g["grid"] == {"allocator": ["dp", "greedy"], "tfwd": [60, 600], "pool_size": [512],
                         "objective": ["throughput"]}
    assert g["base"] == {"log": "x"}

# ---------------------------------------------------------------- exports


@pytest.mark.parametrize("cell", ["=1+1", "+SUM(A1)", "-2+3", "@cmd", "\tx", "\r=1"])
def test_formula_cells_are_neutralized_in_csv(cell):
    import csv

    df = pd.DataFrame({"name": [cell, "ok"], "value": [-5, 3]})
    text = report.to_csv_bytes(df).decode()
    rows = list(csv.reader(io.StringIO(text, newline="")))
    assert rows[1][0] == "'" + cell and rows[2][0] == "ok"
    assert [r[1] for r in rows[1:]] == ["-5", "3"]  # numbers are data, left alone
    for r in rows[1:]:
        assert not re.match(r"^[=+\-@\t\r]", r[0])


def test_column_names_are_neutralized_too():
    text = report.to_csv_bytes(pd.DataFrame({"=evil": [1]})).decode()
    assert text.splitlines()[0] == '"\'=evil"'


def test_parquet_keeps_values_and_mixed_columns_become_text():
    df = pd.DataFrame({"metric": ["a", "b"], "v": [1, "x"], "n": [1.5, -2.0], "s": ["=1", "y"]})
    back = pd.read_parquet(io.BytesIO(report.to_parquet_bytes(df)))
    assert list(back["v"]) == ["1", "x"] and list(back["n"]) == [1.5, -2.0] and list(back["s"]) == ["=1", "y"]


def test_html_report_is_self_contained_and_escaped():
    fig = go.Figure(go.Scatter(x=[0, 1], y=[2, 3]))
    html = report.html_report("<b>t</b>", {"log": "<script>alert(1)</script>"}, {"dp": {"U": 0.9, "n": {"x": 1}}},
                              {"one": fig, "two": fig}, tables={"tbl": pd.DataFrame({"a": ["<i>"]})})
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;" in html
    assert re.search(r"<script[^>]+src=", html) is None  # nothing loaded from the network
    assert html.count("plotly.js v") <= 2 and len(html) > 1_000_000  # plotly.js inlined (once)
    assert html.count('class="plotly-graph-div"') == 2
    assert "n.x" in html  # nested summary flattened

# ---------------------------------------------------------------- charts


def test_step_lines_have_units_and_reach_the_window_end():
    fig = charts.step_lines({"N": ([0.0, 2.0], [5, 7])}, "t", "idle nodes", "nodes", end=10.0, time_axis=False,
                            x_title="time since window start (h)", x_unit="h")
    tr = fig.data[0]
    assert list(tr.x) == [0.0, 2.0, 10.0] and list(tr.y) == [5, 7, 7]
    assert tr.line.shape == "hv" and "nodes" in tr.hovertemplate
    assert fig.layout.xaxis.title.text == "time since window start (h)"
    assert fig.layout.yaxis.title.text == "idle nodes"


def test_long_step_series_are_thinned_but_keep_extremes():
    t = np.arange(100_000, dtype=float)
    v = np.zeros_like(t)
    v[54_321] = 99.0
    fig = charts.step_lines({"N": (t, v)}, "t", "n", "nodes", time_axis=False)
    assert len(fig.data[0].x) <= charts.MAX_POINTS + 10 and max(fig.data[0].y) == 99.0


def test_cdf_is_monotone_and_weighted():
    x, y = charts.cdf([3, 1, 2], weights=[1, 1, 2])
    assert list(x) == [1, 2, 3] and list(y) == [0.25, 0.75, 1.0]


def test_empty_inputs_give_a_figure_with_a_note():
    fig = charts.histograms({"a": []}, "t", "x (s)", "s")
    assert isinstance(fig, go.Figure) and fig.layout.annotations[0].text == "no values"
    assert charts.heatmap(pd.DataFrame(), "a", "b", "c", "t", "a", "b", "c").layout.annotations


def test_heatmap_means_over_the_grid():
    df = pd.DataFrame({"tfwd": [60, 60, 600], "pool": [1, 1, 2], "u": [0.5, 0.7, 0.9]})
    fig = charts.heatmap(df, "tfwd", "pool", "u", "t", "T_fwd (s)", "pool", "U")
    z = np.asarray(fig.data[0].z, dtype=float)
    assert z[0, 0] == pytest.approx(0.6) and z[1, 1] == pytest.approx(0.9) and np.isnan(z[0, 1])

# ---------------------------------------------------------------- uploads


def test_server_names_are_uuids_with_whitelisted_extensions():
    assert re.fullmatch(r"[0-9a-f]{32}\.swf\.gz", data.server_filename("../../etc/KTH.SWF.gz"))
    assert re.fullmatch(r"[0-9a-f]{32}", data.server_filename("run.sh"))
    assert data.log_name_for("../My Log (1).swf.gz") == "My-Log-1"
    assert data.log_name_for("x.csv", taken={"x"}) == "x-2"


def test_upload_load_rejects_a_bad_file_in_one_line_and_leaves_no_log(tmp_path):
    with pytest.raises(InputError) as e:
        app_load(b"; MaxNodes: 10\n1 2 three 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18\n", "broken.swf", tmp_path)
    msg = str(e.value)
    assert "broken.swf" in msg and "\n" not in msg and str(tmp_path) not in msg
    assert not list((tmp_path / "logs").iterdir())  # no log file, no partial .loading file
    with pytest.raises(InputError, match="empty"):
        app_load(b"", "nothing.swf", tmp_path)


def test_upload_load_stores_a_good_file_under_a_server_name(tmp_path):
    import gzip

    from planner import paths

    with gzip.open(paths.DATASETS / "KTH-SP2-1996-2.1-cln.swf.gz", "rt") as fh:
        lines = [next(fh) for _ in range(80)]
    rep, path = app_load("".join(lines).encode(), "kth head.swf", tmp_path)
    assert rep["log"] == "kth-head" and rep["kind"] == "jobs"
    assert list((tmp_path / "uploads").iterdir()) == [path] and re.fullmatch(r"[0-9a-f]{32}\.swf", path.name)
    assert (tmp_path / "logs" / "log.duckdb").exists()


def test_idle_numbers_table_reads_as_words_not_json():
    """Issue 25: the Idle page's numbers: periods in words, times in UTC, shares in %, yes/no; no JSON,
    no long floats, no snake_case; the CLI's key beside each."""
    from appkit import idle_views

    s = {"idle_ratio": 0.5252, "inc_per_h": 2.5801234, "fragments": {"frac_lt_600s": 0.770412, "derived": True},
         "split": {"outages": [{"start": "2022-01-09T20:32:05Z", "end": "2022-01-10T07:00:55Z", "hours": 10.480555,
                                "start_s": 1641760325.0, "end_s": 1641798055.0, "reason": "jobs waiting"}] * 4,
                   "partition_outages": [], "log_longest_gaps_h": [33.6125, 32.37638888888889],
                   "warmup": {"start_s": 1641061236.0, "idle_share_after": 0.05452}, "node_hours": {"idle": 7.5},
                   "notes": ["the log records busy or idle only"]}}
    t = idle_views.numbers_table(s, "GPU").set_index("JSON key")
    assert t.loc["idle_ratio", "value"] == "52.5" and t.loc["inc_per_h", "figure"] == "join events per hour (1/h)"
    assert t.loc["fragments.frac_lt_600s", ["figure", "value"]].tolist() == ["fragments: share under 600 s (%)", "77"]
    assert t.loc["fragments.derived", "value"] == "yes"
    assert t.loc["split.outages", "value"] == ("4 period(s): " + "; ".join(
        ["2022-01-09 20:32 UTC to 2022-01-10 07:00 UTC (10.5 h)"] * 3) + "; 1 more (Outages CSV, above)")
    assert t.loc["split.partition_outages", "value"] == "none"
    assert t.loc["split.log_longest_gaps_h", "value"] == "33.6, 32.4"
    assert t.loc["split.warmup.start_s", ["figure", "value"]].tolist() == [
        "split: warm-up: start (UTC)", "2022-01-01 18:20:36 UTC"]
    assert t.loc["split.warmup.idle_share_after", "value"] == "5.45"
    assert t.loc["split.node_hours.idle", "figure"] == "split: GPU-hours: idle"
    assert t.loc["split.notes", "value"] == "the log records busy or idle only"
    assert not [v for v in t["value"] if "{" in v or "[" in v]
    assert not [f for f in t["figure"] if "_" in f]


def test_the_idle_pages_clock_starts_at_the_chosen_time_zone():
    """Issue 25: one time zone on the Idle page: the hour x weekday clock starts at the offset of the
    period views' time zone, at the window's start (daylight saving as it was then)."""
    from appkit.idle_views import tz_offset_h

    assert tz_offset_h("UTC", 1.6e9) == 0.0
    assert tz_offset_h("Europe/Stockholm", 1612915200) == 1.0  # 2021-02-10: CET
    assert tz_offset_h("Europe/Stockholm", 1625875200) == 2.0  # 2021-07-10: CEST
    assert tz_offset_h("America/New_York", 1612915200) == -5.0
    assert tz_offset_h("Not/AZone", 1.6e9) == 0.0
