"""The Idle page (app_pages/idle.py) in AppTest: whole log and whole machine by default, every metric
with a tooltip, each operator view drawn with the figures of planner.idle.views on the small logs of
tests/helpers.py, the pool-size slider, the survival section (appkit.survival_view) on demand. (Every
page's render on defaults, and the Planner's metrics: tests/app/test_pages.py.)"""

from __future__ import annotations

import base64
import json
import re
import shutil

import numpy as np
import pytest

from planner import logs
from planner.store import db
from tests.helpers import SACCT, SMALL, pictures, swf


@pytest.fixture(scope="module")
def profile_db(summit_db, tmp_path_factory):
    d = tmp_path_factory.mktemp("profdb")
    dst = d / "planner.duckdb"
    shutil.copy(summit_db, dst)
    con = db.connect(dst)
    (d / "small.swf").write_text(swf(SMALL))
    (d / "p.sacct").write_text(SACCT)
    logs.ingest(con, d / "small.swf", name="small")
    logs.ingest(con, d / "p.sacct", name="parts")
    (d / "gpus.swf").write_text("; Note: the same jobs, read as a GPU trace\n" + swf(SMALL))
    logs.ingest(con, d / "gpus.swf", name="gpus")
    logs.set_unit(con, "gpus", "GPU")
    con.close()
    return dst


@pytest.fixture(scope="module")
def summit_app_db(summit_db, tmp_path_factory):
    """A database holding only the shipped Summit log (the Idle page opens on it)."""
    dst = tmp_path_factory.mktemp("summitdb") / "planner.duckdb"
    shutil.copy(summit_db, dst)
    return dst


@pytest.fixture
def idle(profile_db, open_app):
    """The Idle page with every section drawn (view=all; the default view is the overview)."""
    at = open_app(profile_db, "idle", query={"view": "all"})
    ok(at)
    return at


def ok(at):
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


def _decode(obj):
    """Plotly's JSON with typed arrays ({"dtype", "bdata", "shape"}) back to lists."""
    if isinstance(obj, dict):
        if "bdata" in obj and "dtype" in obj:
            a = np.frombuffer(base64.b64decode(obj["bdata"]), dtype=np.dtype(obj["dtype"]))
            if "shape" in obj:
                a = a.reshape([int(x) for x in str(obj["shape"]).split(",")])
            return a.tolist()
        return {k: _decode(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_decode(v) for v in obj]
    return obj


def figures(at) -> dict:
    """key -> plotly figure dict of every chart on the page (a zoomed time chart's key without the
    zoom's generation suffix, appkit.zoom)."""
    out = {}
    for c in at.get("plotly_chart"):
        out[re.sub(r"_z\d+$", "", c.proto.id.rsplit("-", 1)[-1])] = _decode(json.loads(c.proto.spec))
    return out


def test_idle_page_starts_on_the_whole_log_and_machine(idle):
    assert idle.toggle(key="idle_whole").value is True
    slider = idle.slider(key="idle_k_summit-2021")
    assert slider.value == slider.max == 4734  # the whole machine, not the first 1024 nodes
    labels = [m.label for m in idle.metric]
    assert labels[:3] == ["idle node-hours (node-h)", "equivalent nodes (nodes)", "idle ratio (%)"]
    assert all(m.proto.help for m in idle.metric)
    assert idle.metric[0].value == "140,182"  # thousands separators; the unit is in the label
    figs = figures(idle)
    assert {"idle_n", "idle_cdf", "idle_ev", "idle_tfwd", "idle_heat", "idle_days", "idle_holes",
            "idle_cmp_cdf"} <= set(figs)
    # the whole-log N(t) is a min/mean/max band, y from 0
    n = figs["idle_n"]
    assert [t["name"] for t in n["data"]] == ["max in bin", "min-max in bin", "mean N(t)"]
    assert n["layout"]["yaxis"]["rangemode"] == "tozero"
    # node log: no partition or waiting view, a one-line note instead
    infos = " ".join(i.value for i in idle.info)
    assert "partition" in infos and "submit times" in infos
    checked = 0
    for name, f in figs.items():  # legends never over titles: below the plot, or none shown
        leg = f["layout"].get("legend", {})
        shown = [t for t in f["data"] if t.get("showlegend", True) is not False]
        if f["layout"].get("showlegend") is False or len(shown) < 2:
            continue  # plotly draws no legend for a single trace
        assert "y" in leg and leg["y"] < 0, (name, leg)
        checked += 1
    assert checked >= 3  # N(t) band, fragment CDFs, events: each has a legend
    # issue 25: the page's figures exportable: CSV buttons (every chart saves as PNG from its modebar)
    labels = {b.proto.label for b in idle.get("download_button")}
    assert {"N(t) idle nodes (CSV)", "Idle split (CSV)"} <= labels, labels
    assert any(lab.startswith("Download per week") for lab in labels), labels


def test_idle_page_views_on_a_job_log(idle):
    idle.selectbox(key="idle_log").set_value("small").run()
    ok(idle)
    figs = figures(idle)
    assert {"idle_heat", "idle_days", "idle_holes", "idle_part", "idle_wait"} <= set(figs)
    z = np.array(figs["idle_heat"]["data"][0]["z"], dtype=float)
    assert z.shape == (7, 24) and z[0, 0] == pytest.approx(5.0) and z[0, 2] == pytest.approx(4.0)
    assert np.isnan(z[1, 0])  # Tuesday is not in the log: blank, not 0
    assert figs["idle_days"]["data"][0]["y"] == pytest.approx([9.0])
    holes = figs["idle_holes"]["data"][0]
    assert holes["y"] == ["1 node", "2-3 nodes", "4-7 nodes"] and holes["x"] == ["30-60 min", "1-3 h"]
    part = figs["idle_part"]["data"][0]
    assert dict(zip(part["y"], part["x"])) == pytest.approx({"2": 4.25, "1": 3.0, "(no job waiting)": 1.0, "3": 0.75})
    wait = figs["idle_wait"]["data"][0]
    assert wait["x"] == pytest.approx([1.0, 5.0, 3.0])
    m = {x.label: x.value for x in idle.metric}
    assert m["idle while jobs waited (node-h)"] == "8" and m["idle with no job waiting (node-h)"] == "1"
    # the page's time zone moves the heatmap: one hour west (POSIX sign), Sunday 23:00 holds the first hour
    assert idle.selectbox(key="idle_tz").value == "UTC"  # no browser here: UTC
    idle.selectbox(key="idle_tz").set_value("Etc/GMT+1").run()
    z = np.array(figures(ok(idle))["idle_heat"]["data"][0]["z"], dtype=float)
    assert z[6, 23] == pytest.approx(5.0)
    assert idle.query_params["tz"] in ("Etc/GMT+1", ["Etc/GMT+1"])  # kept in the URL: a reload keeps it
    idle.query_params.update({"tz": "Etc/GMT-1"})  # a link or a reload names another zone: one hour east
    z = np.array(figures(ok(idle.run()))["idle_heat"]["data"][0]["z"], dtype=float)
    assert idle.selectbox(key="idle_tz").value == "Etc/GMT-1" and z[0, 1] == pytest.approx(5.0)
    idle.query_params.update({"tz": "Mars/Olympus"})
    ok(idle.run())
    assert any("tz='Mars/Olympus' ignored" in w.value for w in idle.warning)
    assert idle.selectbox(key="idle_tz").value == "Etc/GMT-1"
    assert idle.query_params["tz"] in ("Etc/GMT-1", ["Etc/GMT-1"])


def test_idle_page_partitions_of_an_exact_log(idle):
    idle.selectbox(key="idle_log").set_value("parts").run()
    part = figures(ok(idle))["idle_part"]
    assert dict(zip(part["data"][0]["y"], part["data"][0]["x"])) == pytest.approx({"gpu": 1.5, "debug": 0.5})
    assert "node home partition" in part["layout"]["title"]["text"]


def test_idle_page_compares_logs(idle):
    idle.multiselect(key="idle_cmp_summit-2021").set_value(["summit-2021", "small"]).run()
    ok(idle)
    cdf = figures(idle)["idle_cmp_cdf"]
    assert [t["name"] for t in cdf["data"]] == ["summit-2021", "small"]
    assert cdf["layout"]["xaxis"]["type"] == "log" and "1 min" in cdf["layout"]["xaxis"]["ticktext"]
    table = next(d.value for d in idle.dataframe if "log" in d.value.columns)  # (the split's table is first)
    assert list(table["log"]) == ["summit-2021", "small"]
    assert table.set_index("log").loc["small", "idle ratio"] == "30.0 %"


def test_idle_page_window_changes_the_views(idle):
    idle.selectbox(key="idle_log").set_value("small").run()
    idle.toggle(key="idle_whole").set_value(False).run()
    idle.text_input(key="idle_start_small").set_value("2021-01-04T01:00:00").run()
    idle.number_input(key="idle_hours").set_value(1.5).run()
    figs = figures(ok(idle))
    assert figs["idle_days"]["data"][0]["y"] == pytest.approx([3.0])
    assert sum(figs["idle_part"]["data"][0]["x"]) == pytest.approx(3.0)


def test_numbers_table_has_no_raw_floats(idle):
    table = idle.dataframe[-1].value
    numbers = [v for v in table["value"] if v.replace(",", "").replace(".", "").replace("-", "").isdigit()]
    assert len(numbers) > 10
    for v in numbers:  # at most 4 significant digits after a point: never 0.03397168194806134
        if "." in v:
            assert len(v.replace(",", "").replace("-", "").replace(".", "").lstrip("0")) <= 4, v
    # labels people read (no snake_case), the CLI's key beside each; a ratio shown in its unit (%)
    assert not [f for f in table["figure"] if "_" in f.replace("T_fwd", "")]
    row = table.set_index("JSON key").loc["idle_ratio"]
    assert row["figure"] == "idle ratio (%)" and 0 < float(row["value"]) <= 100
    assert table.set_index("JSON key").loc["fragments.median_s", "figure"] == "fragments: median (s)"




# ---------------------------------------------------------------- on the Summit log

def test_idle_pool_size_changes_the_figures(summit_app_db, open_app):
    at = open_app(summit_app_db, "idle", query={"view": "all"})
    before = at.metric[0].value
    slider = at.slider[0]
    slider.set_value(128).run()
    ok(at)
    assert at.metric[0].value != before
    # the idle split + 4 pool figures + per week + hour x weekday, days, holes, logs side by side
    assert len(at.get("plotly_chart")) == 10


def test_idle_page_shows_survival_curves_and_calibration_on_demand(summit_app_db, open_app):
    at = open_app(summit_app_db, "idle", query={"view": "survival"})
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


def test_one_zoom_is_shared_by_the_time_charts_and_reset(idle):
    """Issue 25: one zoom across N(t), the events and the calendar days; the slider sets it, "Whole
    window" clears it, another log starts unzoomed; the range is in the URL (from/to), read back from a
    link and checked against the window."""
    idle.selectbox(key="idle_log").set_value("small").run()
    assert idle.query_params["log"] == "small"  # the page's log is in the URL: a reload opens it again
    zoom = next(s for s in ok(idle).slider if s.label.startswith("Zoom"))
    lo, hi = zoom.value  # the whole window: the small log's three hours
    assert (lo.isoformat(), hi.isoformat()) == ("2021-01-04T00:00:00", "2021-01-04T03:00:00")
    assert all(figures(idle)[k]["layout"]["xaxis"].get("range") is None for k in ("idle_n", "idle_ev", "idle_days"))
    a, b = lo + (hi - lo) / 4, lo + (hi - lo) / 2
    zoom.set_value((a, b)).run()
    figs = figures(ok(idle))
    want = [a.isoformat(sep=" "), b.isoformat(sep=" ")]
    assert [figs[k]["layout"]["xaxis"]["range"] for k in ("idle_n", "idle_ev", "idle_days")] == [want] * 3
    assert figs["idle_cdf"]["layout"]["xaxis"].get("autorange") is not False  # not a time chart: not zoomed
    assert figs["idle_n"]["layout"]["dragmode"] == "select"  # a drag picks the range for every chart
    idle.button(key=zoom.key + ":reset").click().run()
    assert next(s for s in ok(idle).slider if s.label.startswith("Zoom")).value == (lo, hi)
    assert figures(idle)["idle_n"]["layout"]["xaxis"].get("range") is None
    assert "from" not in idle.query_params and "to" not in idle.query_params  # the whole window: none
    zoom = next(s for s in idle.slider if s.label.startswith("Zoom"))
    zoom.set_value((a, b)).run()
    # the range is in the URL as Grafana keeps it (from/to, UTC): a reload or a shared link shows it
    assert (idle.query_params["from"], idle.query_params["to"]) == (a.isoformat(), b.isoformat())
    c, d = lo + (hi - lo) / 3, hi  # a link with another range (a pasted link, a reload)
    idle.query_params.update({"from": c.isoformat(), "to": "1609729200000"})  # Grafana's epoch ms also read
    idle.run()
    assert next(s for s in ok(idle).slider if s.label.startswith("Zoom")).value == (c, d)
    assert figures(idle)["idle_n"]["layout"]["xaxis"]["range"] == [c.isoformat(sep=" "), d.isoformat(sep=" ")]
    # a range outside the log's window: ignored, with one line naming the fields; the zoom stays
    idle.query_params.update({"from": "2019-01-01T00:00:00", "to": "2019-01-02T00:00:00"})
    idle.run()
    warns = [w.value for w in ok(idle).warning if "from=" in w.value]
    assert len(warns) == 1 and "outside the window" in warns[0] and "\n" not in warns[0], warns
    assert next(s for s in idle.slider if s.label.startswith("Zoom")).value == (c, d)
    assert (idle.query_params["from"], idle.query_params["to"]) == (c.isoformat(), d.isoformat())
    idle.selectbox(key="idle_log").set_value("summit-2021").run()
    assert figures(ok(idle))["idle_n"]["layout"]["xaxis"].get("range") is None  # no range sticks across logs
    assert "from" not in idle.query_params and "to" not in idle.query_params  # nor in the URL
    idle.selectbox(key="idle_log").set_value("small").run()
    assert figures(ok(idle))["idle_n"]["layout"]["xaxis"].get("range") is None  # cleared, not kept per log


def test_a_gpu_trace_reads_gpus_on_every_label(idle):
    """Issue 25: a GPU trace's metrics, charts and tables say GPUs and GPU-hours, never nodes."""
    idle.selectbox(key="idle_log").set_value("gpus").run()
    ok(idle)
    labels = [m.label for m in idle.metric]
    assert labels[:2] == ["idle GPU-hours (GPU-h)", "equivalent GPUs (GPUs)"]
    word = re.compile(r"\bnode(s|-hours|-h|-time)?\b", re.I)
    for key, f in figures(idle).items():
        if key == "idle_cmp_cdf":
            continue  # logs side by side may mix node and GPU logs
        texts = [f["layout"].get("title", {}).get("text", "")]
        texts += [f["layout"].get(ax, {}).get("title", {}).get("text", "") for ax in ("xaxis", "yaxis")]
        texts += [t.get("name") or "" for t in f["data"]] + [t.get("hovertemplate") or "" for t in f["data"]]
        assert not any(word.search(t) for t in texts), (key, [t for t in texts if word.search(t)])
    assert figures(idle)["idle_holes"]["data"][0]["y"][:2] == ["1 GPU", "2-3 GPUs"]
    assert not any(word.search(m.label) for m in idle.metric)
    cols = [c for d in idle.dataframe if "log" not in d.value.columns  # (logs side by side: any units)
            for c in map(str, d.value.columns)]
    assert cols and not [c for c in cols if word.search(c)]


def test_the_idle_page_draws_one_view_at_a_time_kept_in_the_url(summit_app_db, open_app):
    """Issue 25 (speed): the overview by default (the split, N(t), the events; the headline numbers on
    every view); each other view draws its own figures; the view is in the URL (a link opens it, an
    unknown one is ignored with a note); Everything draws all ten."""
    at = ok(open_app(summit_app_db, "idle"))
    # the overview's first draw: the split, N(t) and the events as pictures (no Plotly); the same three
    # as Plotly figures one toggle away (hover, the shared drag zoom, PNG)
    assert figures(at) == {} and [p.count("<svg") for p in pictures(at)] == [1, 1, 1]
    assert at.query_params["view"] == "overview" and len(at.metric) == 5
    at.toggle(key="idle_interactive").set_value(True).run()
    assert set(figures(ok(at))) == {"idle_split_bar", "idle_n", "idle_ev"} and pictures(at) == []
    at.button_group(key="idle_view").set_value("numbers").run()  # the choice outlives another view
    at.button_group(key="idle_view").set_value("overview").run()
    assert set(figures(ok(at))) == {"idle_split_bar", "idle_n", "idle_ev"} and at.toggle(key="idle_interactive").value
    assert at.query_params["charts"] in ("interactive", ["interactive"])  # kept in the URL: a reload keeps it
    at.toggle(key="idle_interactive").set_value(False).run()
    assert figures(ok(at)) == {} and len(pictures(at)) == 3 and "charts" not in at.query_params
    want = {"fragments": {"idle_cdf", "idle_tfwd"}, "periods": {"idle_period_bars"},
            "where": {"idle_heat", "idle_days", "idle_holes"}, "logs": {"idle_cmp_cdf"}, "numbers": set()}
    for view, keys in want.items():
        at.button_group(key="idle_view").set_value(view).run()
        assert set(figures(ok(at))) == keys, view
        assert at.query_params["view"] == view and len(at.metric) == 5
    assert at.dataframe[-1].value.columns[-1] == "JSON key"  # the numbers
    at.query_params.update({"view": "fragments"})  # a link or a reload names another view
    assert set(figures(ok(at.run()))) == {"idle_cdf", "idle_tfwd"}
    at.query_params.update({"view": "nonsense"})
    ok(at.run())
    assert any("view='nonsense' ignored" in w.value for w in at.warning)
    assert set(figures(at)) == {"idle_cdf", "idle_tfwd"} and at.query_params["view"] == "fragments"
    at.button_group(key="idle_view").set_value("all").run()
    assert len(figures(ok(at))) == 10


def test_a_link_or_a_reload_keeps_the_interactive_charts(summit_app_db, open_app):
    """The overview's "Interactive charts" choice is in the URL (`charts=interactive`): a fresh session
    opened on it (a reload, a shared link) draws the Plotly figures at once; another value is ignored
    with a note and the pictures stay."""
    at = ok(open_app(summit_app_db, "idle"))
    at.query_params.update({"charts": "interactive"})
    at = ok(open_app(summit_app_db, query=dict(at.query_params)))  # a new session on that URL
    at.switch_page("app_pages/idle.py").run()
    assert set(figures(ok(at))) == {"idle_split_bar", "idle_n", "idle_ev"} and at.toggle(key="idle_interactive").value
    bad = ok(open_app(summit_app_db, query={"view": "overview", "charts": "sparkly"}))
    bad.switch_page("app_pages/idle.py").run()
    assert any("charts='sparkly' ignored" in w.value for w in ok(bad).warning)
    assert figures(bad) == {} and len(pictures(bad)) == 3 and "charts" not in bad.query_params


def test_the_overview_pictures_follow_the_shared_zoom_and_the_unit(idle):
    """Issue 25 (speed and item 4): the overview's static N(t) and events show the log's data on UTC
    dates, follow the page's one zoom (its slider; the URL's from/to) and read GPUs on a GPU trace."""
    import datetime as dt

    at = idle
    at.query_params.update({"view": "overview"})
    at.button_group(key="idle_view").set_value("overview").run()
    n_t, ev = pictures(ok(at))[1:]
    assert "Idle nodes N(t)" in n_t and "Events per" in ev and "join events" in ev and "leave events" in ev
    whole = re.findall(r'text-anchor="middle">(\w\w\w \d\d(?: \d\d:\d\d)?)<', n_t)
    assert whole, n_t[:400]
    zoom = next(s for s in at.slider if s.label.startswith("Zoom"))
    lo, hi = zoom.value
    mid = lo + (hi - lo) / 2
    zoom.set_value((mid, mid + dt.timedelta(hours=1))).run()
    n_z, ev_z = pictures(ok(at))[1:]
    ticks = re.findall(r'text-anchor="middle">(\w\w\w \d\d \d\d:\d\d)<', n_z)
    assert ticks and ticks != whole  # one hour: ticks with the time of day, within it
    end = mid + dt.timedelta(hours=1)
    assert all(mid.strftime("%b %d %H") <= t <= end.strftime("%b %d %H:%M") for t in ticks), (mid, ticks)
    assert "from" in at.query_params and ev_z != ev  # the URL keeps the range; the events follow it
    at.button(key=zoom.key + ":reset").click().run()
    assert pictures(ok(at))[1] == n_t  # the whole window again
    at.selectbox(key="idle_log").set_value("gpus").run()
    assert any("idle GPUs" in p for p in pictures(ok(at)))
