"""planner.idle.views / profile_jobs / `planner profile`: each view hand-computed on small logs written
here, and a property test: every breakdown sums to the window's idle node-hours.

SMALL_SWF, a 10-node machine, t = 0 is Monday 2021-01-04 00:00 UTC (fields: job submit wait run
procs ... queue(15) partition(16)):
  J1 submit 0     wait 0     run 9000 (2.5 h)  4 nodes  partition 1   busy [0, 2.5 h)
  J2 submit 0     wait 3600  run 3600          6 nodes  partition 2   waits [0, 1 h), busy [1 h, 2 h)
  J3 submit 5400  wait 3600  run 1800          8 nodes  partition 1   waits [1.5 h, 2.5 h), busy [2.5 h, 3 h)
  J4 submit 0     wait 1800  run 1800          2 nodes  partition 3   waits [0, 0.5 h), busy [0.5 h, 1 h)
Busy 4, 6, 10, 4, 8 on [0, .5), [.5, 1), [1, 2), [2, 2.5), [2.5, 3) h, so N(t) = 6, 4, 0, 6, 2 and
the idle node-hours are 3 + 2 + 0 + 3 + 1 = 9.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

from planner import cli, logs
from planner.idle import job_views, views
from planner.idle.window import Window
from planner.store import db
from tests.helpers import SACCT, SMALL, examples, swf

T0 = 1609718400  # Monday 2021-01-04 00:00:00 UTC


@pytest.fixture
def small(mem_con, write_file):
    logs.ingest(mem_con, write_file("small.swf", swf(SMALL)), name="small")
    return mem_con


def test_partition_and_queue_are_stored_at_ingest(small):
    rows = small.execute("SELECT partition_name, queue_name FROM jobs ORDER BY CAST(job_id AS INT)").fetchall()
    assert rows == [("1", "1"), ("2", "2"), ("1", "1"), ("3", "3")]


def test_idle_node_hours_of_the_small_log(small):
    assert views.q_idle_node_hours(small, views.span(small, Window("small"))) == pytest.approx(9.0)


def test_heatmap_cells(small):
    hw = views.by_hour_weekday(small, Window("small"))
    assert hw.shape[0] == 7 * 24
    cell = hw.set_index(["weekday", "hour"])
    assert cell.loc[(0, 0), "idle_node_hours"] == pytest.approx(5.0)  # 6 * 0.5 + 4 * 0.5
    assert cell.loc[(0, 1), "idle_node_hours"] == pytest.approx(0.0)
    assert cell.loc[(0, 2), "idle_node_hours"] == pytest.approx(4.0)  # 6 * 0.5 + 2 * 0.5
    assert cell.loc[(0, 2), "covered_h"] == pytest.approx(1.0)
    assert cell.loc[(0, 0), "mean_idle_nodes"] == pytest.approx(5.0)
    assert np.isnan(cell.loc[(1, 0), "mean_idle_nodes"])  # Tuesday: not in the window
    # one hour west of UTC: Sunday 23:00 holds the first hour
    west = views.by_hour_weekday(small, Window("small"), utc_offset_h=-1).set_index(["weekday", "hour"])
    assert west.loc[(6, 23), "idle_node_hours"] == pytest.approx(5.0)
    assert west.loc[(0, 1), "idle_node_hours"] == pytest.approx(4.0)


def test_by_day(small):
    d = views.by_day(small, Window("small"))
    assert list(d["day"]) == ["2021-01-04"]
    assert d["idle_node_hours"].iloc[0] == pytest.approx(9.0)
    assert d["mean_idle_nodes"].iloc[0] == pytest.approx(3.0)  # 9 node-h over 3 h
    assert d["idle_ratio"].iloc[0] == pytest.approx(0.3)


def test_hole_histogram(small):
    # holes (N >= k maximal): k 1..4 over [0, 1 h); k 5, 6 over [0, .5 h); k 1, 2 over [2 h, 3 h);
    # k 3..6 over [2 h, 2.5 h)
    h = views.holes(small, Window("small")).set_index(["size", "length"])
    want = {("1", "1-3 h"): (2, 2.0), ("2-3", "1-3 h"): (3, 3.0), ("2-3", "30-60 min"): (1, 0.5),
            ("4-7", "1-3 h"): (1, 1.0), ("4-7", "30-60 min"): (5, 2.5)}
    assert set(h.index) == set(want)
    for k, (n, nh) in want.items():
        assert h.loc[k, "holes"] == n and h.loc[k, "node_hours"] == pytest.approx(nh), k


def test_idle_while_waiting(small):
    w = job_views.idle_while_waiting(small, Window("small"))
    # [0,.5) N 6, J2+J4 wait, J4 (2) fits: some fit 3; [.5,1) N 4, J2 (6) does not fit: 2;
    # [1.5,2) N 0; [2,2.5) N 6, J3 (8) does not fit: 3; [1,1.5) and [2.5,3) nothing waits: 0 + 1
    assert w["idle_no_wait_node_hours"] == pytest.approx(1.0)
    assert w["idle_while_waiting_node_hours"] == pytest.approx(8.0)
    assert w["idle_while_waiting_none_fit_node_hours"] == pytest.approx(5.0)
    assert w["idle_while_waiting_some_fit_node_hours"] == pytest.approx(3.0)
    assert w["hours_with_jobs_waiting_h"] == pytest.approx(2.0)


def test_partition_shares_count_level_by_waiting_jobs(small):
    # [0,.5): 3 node-h shared by J2 (6 nodes, p2) and J4 (2 nodes, p3): 2.25 / 0.75;
    # [.5,1): 2 -> p2; [2,2.5): 3 -> p1 (J3); no job waiting: 1
    p = job_views.by_partition(small, Window("small")).set_index("partition")
    assert p["basis"].iloc[0] == "waiting jobs" and p["label"].iloc[0] == "partition"
    want = {"2": 4.25, "1": 3.0, job_views.NO_WAIT: 1.0, "3": 0.75}
    assert set(p.index) == set(want)
    for k, v in want.items():
        assert p.loc[k, "idle_node_hours"] == pytest.approx(v)
        assert p.loc[k, "share"] == pytest.approx(v / 9.0)


def test_partition_shares_exact_by_node_home_partition(mem_con, write_file):
    logs.ingest(mem_con, write_file("p.sacct", SACCT), name="p")
    homes = dict(mem_con.execute("SELECT name, partition_name FROM nodes").fetchall())
    assert homes == {"n1": "batch", "n2": "batch", "n3": "debug", "n4": "gpu"}
    p = job_views.by_partition(mem_con, Window("p")).set_index("partition")
    assert p["basis"].iloc[0] == "node home partition"
    assert dict(p["idle_node_hours"]) == pytest.approx({"gpu": 1.5, "debug": 0.5})
    assert dict(p["share"]) == pytest.approx({"gpu": 0.75, "debug": 0.25})
    # submit times known: n3 idle [1.5, 2) and n4 [0.5, 2); J3 waits [0.5, 1) while n4 idles (fits)
    w = job_views.idle_while_waiting(mem_con, Window("p"))
    assert w["idle_while_waiting_some_fit_node_hours"] == pytest.approx(0.5)
    assert w["idle_no_wait_node_hours"] == pytest.approx(1.5)


def test_views_follow_the_window(small):
    # [1 h, 2.5 h): N 0 for 1 h, then 6 for 0.5 h: 3 node-h, all in Monday 02:00
    win = Window("small", start="2021-01-04T01:00:00", hours=1.5)
    assert views.q_idle_node_hours(small, views.span(small, win)) == pytest.approx(3.0)
    hw = views.by_hour_weekday(small, win).set_index(["weekday", "hour"])
    assert hw.loc[(0, 2), "idle_node_hours"] == pytest.approx(3.0) and hw.loc[(0, 2), "covered_h"] == 0.5
    assert views.holes(small, win)["node_hours"].sum() == pytest.approx(3.0)
    assert job_views.idle_while_waiting(small, win)["idle_while_waiting_none_fit_node_hours"] == pytest.approx(3.0)


def test_node_log_has_no_job_views(tiny_con):
    assert job_views.by_partition(tiny_con, Window("tiny")) is None
    assert job_views.idle_while_waiting(tiny_con, Window("tiny")) is None
    # tiny: a [0,1200)+[1800,3600), b [600,1800), c [0,1200)+[2400,3600): 3000 + 1200 + 2400 node-s
    total = views.q_idle_node_hours(tiny_con, views.span(tiny_con, Window("tiny")))
    assert views.holes(tiny_con, Window("tiny"))["node_hours"].sum() == pytest.approx(total)
    assert total == pytest.approx((3000 + 1200 + 2400) / 3600.0)


def test_compare_logs(small, tiny_log):
    logs.ingest(small, tiny_log, name="tiny")
    rows, cdfs = views.compare_logs(small, ["small", "tiny"])
    r = rows.set_index("log")
    assert r.loc["small", "idle_ratio"] == pytest.approx(9.0 / (10 * 3.0))
    assert r.loc["small", "eq_nodes"] == pytest.approx(3.0)
    assert set(cdfs["log"]) == {"small", "tiny"}
    for _, g in cdfs.groupby("log"):
        assert g["cdf_nodetime"].iloc[-1] == pytest.approx(1.0) and g["length_s"].is_monotonic_increasing


def test_cli_profile_json(tmp_path, write_file, capsys):
    dbp = str(tmp_path / "p.duckdb")
    assert cli.main(["ingest", str(write_file("small.swf", swf(SMALL))), "--db", dbp, "--name", "small"]) == 0
    capsys.readouterr()
    assert cli.main(["profile", "--log", "small", "--db", dbp, "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    grid = np.array(r["by_hour_weekday"])
    assert grid.shape == (7, 24) and grid[0, 0] == pytest.approx(5.0) and grid.sum() == pytest.approx(9.0)
    assert r["idle_node_hours"] == pytest.approx(9.0)
    assert r["idle_while_waiting_node_hours"] == pytest.approx(8.0)
    assert r["idle_no_wait_node_hours"] == pytest.approx(1.0)
    assert sum(p["idle_node_hours"] for p in r["by_partition"]) == pytest.approx(9.0)
    assert sum(h["node_hours"] for h in r["holes"]) == pytest.approx(9.0)
    assert [d["day"] for d in r["by_day"]] == ["2021-01-04"]


def test_cli_profile_unknown_log_is_one_line(tmp_path, write_file, capsys):
    dbp = str(tmp_path / "e.duckdb")
    assert cli.main(["ingest", str(write_file("small.swf", swf(SMALL))), "--db", dbp, "--name", "small"]) == 0
    capsys.readouterr()
    assert cli.main(["profile", "--log", "nope", "--db", dbp, "--json"]) == 2
    err = capsys.readouterr().err.strip()
    assert "no log named 'nope'" in err and len(err.splitlines()) == 1
    assert cli.main(["profile", "--log", "small", "--db", dbp, "--start", "2030-01-01", "--json"]) == 2
    err = capsys.readouterr().err.strip()
    assert "start" in err and len(err.splitlines()) == 1
    # the clock: a time zone or hours from UTC, not both; a bad zone named
    assert cli.main(["profile", "--log", "small", "--db", dbp, "--tz", "UTC", "--utc-offset-h", "2"]) == 2
    err = capsys.readouterr().err.strip()
    assert "not both" in err and len(err.splitlines()) == 1
    assert cli.main(["profile", "--log", "small", "--db", dbp, "--tz", "Mars/Olympus"]) == 2
    err = capsys.readouterr().err.strip()
    assert "unknown time zone 'Mars/Olympus'" in err and len(err.splitlines()) == 1
    assert cli.main(["profile", "--log", "small", "--db", dbp, "--tz", "Etc/GMT+1", "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["tz"] == "Etc/GMT+1" and np.array(r["by_hour_weekday"])[6, 23] == pytest.approx(5.0)


# ---------------------------------------------------------------- property: breakdowns sum up

job = hs.tuples(hs.integers(0, 20_000), hs.integers(0, 9_000), hs.integers(1, 30_000), hs.integers(1, 6),
                hs.integers(-1, 3))


@pytest.mark.slow  # 3.3 s CPU measured in the default run: the slow tier
@pytest.mark.parametrize("budget", examples(15, 4))
def test_every_breakdown_sums_to_the_idle_node_hours(tmp_path_factory, budget):
    @settings(max_examples=budget, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(jobs=hs.lists(job, min_size=1, max_size=12), frac=hs.floats(0.0, 0.9), length=hs.floats(0.05, 1.0))
    def example(jobs, frac, length):
        con = db.connect(":memory:")
        path = tmp_path_factory.mktemp("prop") / "p.swf"
        path.write_text(swf(jobs, machine=6 * len(jobs)))  # the machine never over-subscribed
        logs.ingest(con, path, name="p")
        row = db.log_row(con, "p")
        t0, t1 = row["start_s"], row["end_s"]
        for start, hours in ((None, None), (t0 + frac * (t1 - t0), max(length * (t1 - t0) / 3600.0, 1e-3))):
            win = Window("p", start=start, hours=hours)
            sp = views.span(con, win)
            total = views.q_idle_node_hours(con, sp)
            sums = [views.by_hour_weekday(con, win, utc_offset_h=5)["idle_node_hours"].sum(),
                    views.by_day(con, win)["idle_node_hours"].sum(),
                    views.holes(con, win)["node_hours"].sum()]
            w = job_views.idle_while_waiting(con, win)
            sums += [w["idle_no_wait_node_hours"] + w["idle_while_waiting_node_hours"],
                     w["idle_no_wait_node_hours"] + w["idle_while_waiting_none_fit_node_hours"]
                     + w["idle_while_waiting_some_fit_node_hours"]]
            part = job_views.by_partition(con, win)
            if part is not None:
                sums.append(part["idle_node_hours"].sum())
                assert part["share"].sum() == pytest.approx(1.0) or total == 0
            for s in sums:
                assert s == pytest.approx(total, rel=1e-9, abs=1e-9)
        con.close()

    example()


def _iso(t_s: int) -> str:
    return datetime.fromtimestamp(t_s, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S")


seq = hs.lists(hs.tuples(hs.integers(0, 4000), hs.integers(1, 9000), hs.sampled_from(["a", "b", ""])),
               min_size=1, max_size=4)


@pytest.mark.slow  # 1.8 s CPU measured in the default run: the slow tier
@pytest.mark.parametrize("budget", examples(10, 4))
def test_exact_log_partition_breakdown_sums_to_the_idle_node_hours(tmp_path_factory, budget):
    """sacct with node lists: jobs one after another on each node (gap, run, partition)."""
    @settings(max_examples=budget, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(per_node=hs.lists(seq, min_size=1, max_size=4))
    def example(per_node):
        lines = ["JobID|Submit|Start|End|NNodes|NodeList|Partition"]
        jid = 0
        for i, jobs in enumerate(per_node):
            t = T0
            for gap, run, part in jobs:
                jid += 1
                t += gap
                lines.append(f"{jid}|{_iso(T0)}|{_iso(t)}|{_iso(t + run)}|1|n{i}|{part}")
                t += run
        path = tmp_path_factory.mktemp("propx") / "p.sacct"
        path.write_text("\n".join(lines) + "\n")
        con = db.connect(":memory:")
        logs.ingest(con, path, name="x")
        total = views.q_idle_node_hours(con, views.span(con, Window("x")))
        part = job_views.by_partition(con, Window("x"))
        if any(p for jobs in per_node for _, _, p in jobs):  # a partition named: the breakdown must exist
            assert part is not None
        if part is not None:
            assert part["idle_node_hours"].sum() == pytest.approx(total, rel=1e-9, abs=1e-9)
        assert views.holes(con, Window("x"))["node_hours"].sum() == pytest.approx(total, rel=1e-9, abs=1e-9)
        w = job_views.idle_while_waiting(con, Window("x"))
        assert w["idle_no_wait_node_hours"] + w["idle_while_waiting_node_hours"] == pytest.approx(total, abs=1e-9)
        con.close()

    example()


def test_csv_partition_column_is_stored_and_mapped(mem_con, write_file):
    text = "start,end,nodes,submit,partition\n" \
           "2021-01-04T00:00:00,2021-01-04T01:00:00,2,2021-01-04T00:00:00,gpu\n" \
           "2021-01-04T00:30:00,2021-01-04T02:00:00,1,2021-01-04T00:00:00,cpu\n"
    logs.ingest(mem_con, write_file("j.csv", text), name="j")
    got = mem_con.execute("SELECT partition_name FROM jobs ORDER BY start_s").fetchall()
    assert got == [("gpu",), ("cpu",)]
    # busy 2, 3, 1 on [0, .5), [.5, 1), [1, 2) h: machine 3 (most at once), N = 1, 0, 2; the cpu job
    # waits [0, .5 h) while 1 node idles (0.5 node-h), nothing waits after (2 node-h)
    p = job_views.by_partition(mem_con, Window("j")).set_index("partition")
    assert dict(p["idle_node_hours"]) == pytest.approx({job_views.NO_WAIT: 2.0, "cpu": 0.5})
    # an explicit mapping naming a missing partition column is refused, naming the column
    from planner.errors import InputError

    with pytest.raises(InputError, match="part"):
        logs.ingest(mem_con, write_file("k.csv", text.replace("partition", "queue")),
                    mapping={"start": "start", "end": "end", "nodes": "nodes", "partition": "part"})


def test_database_from_before_the_partition_columns_read_only(tmp_path, write_file):
    """A database written before jobs.partition_name existed, opened read-only: no breakdown, no crash."""
    path = tmp_path / "old.duckdb"
    con = db.connect(path)
    logs.ingest(con, write_file("small.swf", swf(SMALL)), name="small")
    con.execute("ALTER TABLE jobs DROP COLUMN partition_name")
    con.close()
    ro = db.connect(path, read_only=True)
    assert job_views.by_partition(ro, Window("small")) is None
    assert job_views.idle_while_waiting(ro, Window("small"))["idle_while_waiting_node_hours"] == pytest.approx(8.0)
    ro.close()


# Daylight saving time (Europe/Stockholm): two nodes, n1 busy all along, n2 idle after 00:30 UTC, for
# 4 h from 00:00 UTC. 2021-10-31 (a Sunday): 01:00 UTC is 03:00 CEST -> 02:00 CET, so UTC [0, 1) and
# [1, 2) are both the wall clock's 02:00 hour, [2, 3) 03:00, [3, 4) 04:00. 2021-03-28 (a Sunday): 01:00
# UTC is 02:00 CET -> 03:00 CEST, so UTC [0, 1) is 01:00 and [1, 2) is 03:00: no 02:00 hour.
DST_SACCT = """JobID|Submit|Start|End|NNodes|NodeList|Partition
1|{d}T00:00:00|{d}T00:00:00|{d}T04:00:00|1|n1|batch
2|{d}T00:00:00|{d}T00:00:00|{d}T00:30:00|1|n2|batch
"""


@pytest.mark.parametrize("day, want", [
    ("2021-10-31", {2: (1.5, 2.0), 3: (1.0, 1.0), 4: (1.0, 1.0)}),   # autumn: 02:00 twice
    ("2021-03-28", {1: (0.5, 1.0), 3: (1.0, 1.0), 4: (1.0, 1.0), 5: (1.0, 1.0)}),  # spring: no 02:00
])
def test_heatmap_on_a_time_zone_follows_daylight_saving_time(mem_con, write_file, day, want):
    logs.ingest(mem_con, write_file("dst.sacct", DST_SACCT.format(d=day)), name="dst")
    hw = views.by_hour_weekday(mem_con, Window("dst"), tz="Europe/Stockholm")
    got = {int(r.hour): (r.idle_node_hours, r.covered_h) for r in hw.itertuples() if r.covered_h > 0}
    assert set(got) == set(want) and all(r.weekday == 6 for r in hw.itertuples() if r.covered_h > 0)
    for h, (node_h, cov_h) in want.items():
        assert got[h] == (pytest.approx(node_h), pytest.approx(cov_h))
    d = views.by_day(mem_con, Window("dst"), tz="Europe/Stockholm")
    assert list(d["day"]) == [day] and d["idle_node_hours"].iloc[0] == pytest.approx(3.5)
    assert d["day_h"].iloc[0] == (25.0 if day.endswith("10-31") else 23.0)  # the day's own length
    assert views.by_day(mem_con, Window("dst"))["day_h"].iloc[0] == 24.0  # UTC: every day 24 h
    # a fixed offset (CET, +1) puts autumn's second 02:00 hour at 03:00: the hour DST moves
    fixed = views.by_hour_weekday(mem_con, Window("dst"), utc_offset_h=1).set_index(["weekday", "hour"])
    assert fixed.loc[(6, 1), "covered_h"] == pytest.approx(1.0)


def test_a_bad_time_zone_names_the_field(small):
    from planner.errors import InputError

    with pytest.raises(InputError, match="unknown time zone 'Mars/Olympus'") as e:
        views.by_hour_weekday(small, Window("small"), tz="Mars/Olympus")
    assert e.value.field == "tz"
