"""The sweep engine's mechanics (grid parsing, results table, resume, failures, executors),
with a small real cell function of our own so these run without the simulator."""

from __future__ import annotations

import json
import os

import duckdb
import pytest

from planner.errors import InputError
from planner.sweep import (
    cell_key,
    flatten,
    load_grid,
    load_results,
    parquet_path,
    parse_grid,
    resolve,
    run_sweep,
)
from tests.helpers import series_cell

GRID = {"base": {"rate": 0.5}, "grid": {"n": [10, 20, -1], "rate": [1.0, 2.0]}}


def test_parse_grid_accepts_dashes_and_builds_cartesian_product(tmp_path):
    g = parse_grid({"base": {"pool-size": 64}, "grid": {"t-fwd": [1, 2], "seed": [0, 1, 2]}},
                   valid=["pool_size", "t_fwd", "seed"])
    assert g.base == {"pool_size": 64}
    assert g.options == ["t_fwd", "seed"]
    combos = g.combos()
    assert len(combos) == 6 and combos[0] == {"t_fwd": 1, "seed": 0} and combos[-1] == {"t_fwd": 2, "seed": 2}


def test_unknown_option_names_file_field_and_line(tmp_path):
    p = tmp_path / "g.yaml"
    p.write_text("base:\n  hours: 2\ngrid:\n  allocator: [dp]\n  bogus-opt: [1, 2]\n")
    with pytest.raises(InputError) as ei:
        load_grid(p, valid=["hours", "allocator"])
    msg = str(ei.value)
    assert str(p) in msg and "line 5" in msg and "grid.bogus-opt" in msg and "\n" not in msg
    pj = tmp_path / "g.json"
    pj.write_text(json.dumps({"base": {"nope": 1}, "grid": {}}, indent=1))
    with pytest.raises(InputError, match=r"g\.json.*line 3.*field 'base\.nope'"):
        load_grid(pj, valid=["hours"])


@pytest.mark.parametrize("text,match", [
    ("[1, 2]", "mapping"),
    ('{"grid": {"n": 3}}', "non-empty list"),
    ('{"grid": {"n": []}}', "non-empty list"),
    ('{"grid": {"n": [1]}, "extra": 1}', "unknown top-level key 'extra'"),
    ('{"grid": {"n": [1,', "not valid JSON"),
])
def test_bad_grid_files(tmp_path, text, match):
    p = tmp_path / "g.json"
    p.write_text(text)
    with pytest.raises(InputError, match=match):
        load_grid(p, valid=[])


def test_cell_key_is_stable_and_order_independent():
    assert cell_key({"a": 1, "b": "x"}) == cell_key({"b": "x", "a": 1})
    assert cell_key({"a": 1}) != cell_key({"a": 2})
    g = parse_grid({"grid": {"n": [1, 1, 2]}}, valid=[])
    assert [c.overrides for c in resolve(g, dict)] == [{"n": 1}, {"n": 2}]  # duplicates once


def test_flatten():
    assert flatten({"solve_s": {"mean": 1.0, "p95": 2.0}, "x": [1, 2], "n": 3}) == {
        "solve_s_mean": 1.0, "solve_s_p95": 2.0, "x": "[1, 2]", "n": 3}


@pytest.mark.slow  # over 2 s in the default tier (measured): the slow tier runs it
def test_local_sweep_records_failures_and_resumes(tmp_path):
    out = tmp_path / "res.duckdb"
    calls = []
    rep = run_sweep(GRID, out=out, executor="local", workers=2, cell_fn=series_cell,
                    progress=lambda d, t, row: calls.append((d, t, row and row["status"])))
    assert rep["cells"] == 6 and rep["ran"] == 6 and rep["ok"] == 4 and rep["errors"] == 2
    assert calls[0] == (0, 6, None) and calls[-1][0] == 6 and len(calls) == 7
    df = load_results(out)
    assert len(df) == 6 and df["cell_key"].is_unique
    bad = df[df["status"] == "error"]
    assert set(bad["n"]) == {-1} and bad["error"].str.contains("ValueError: n must be >= 0").all()
    ok = df[df["status"] == "ok"].sort_values("cell_index")
    # flattened summary columns and one column per grid option
    assert {"n", "rate", "n_terms", "total", "nested_max", "label", "wall_s", "finished_at"} <= set(df.columns)
    r = ok.iloc[0]
    assert r["n"] == 10 and r["rate"] == 1.0
    assert r["total"] == pytest.approx(series_cell({"n": 10, "rate": 1.0})["total"])
    assert json.loads(r["params_json"]) == {"n": 10, "rate": 1.0}
    # two worker processes did the work, none of it in the parent
    assert os.getpid() not in set(ok["pid"])
    # Parquet copy next to the DB holds the same rows
    pq = parquet_path(out)
    assert pq.name == "res.parquet"
    import pandas as pd
    assert sorted(pd.read_parquet(pq)["cell_key"]) == sorted(df["cell_key"])

    # re-run: ok cells are skipped, error cells are retried (and fail again)
    before = dict(zip(ok["cell_key"], ok["finished_at"]))
    rep2 = run_sweep(GRID, out=out, workers=2, cell_fn=series_cell)
    assert rep2["skipped"] == 4 and rep2["ran"] == 2 and rep2["errors"] == 2
    df2 = load_results(out)
    assert len(df2) == 6 and df2["cell_key"].is_unique
    after = dict(zip(df2["cell_key"], df2["finished_at"]))
    assert all(after[k] == v for k, v in before.items())

    # a bigger grid into the same DB: only the new cells run
    grid3 = {"base": {"rate": 0.5}, "grid": {"n": [10, 20, 30], "rate": [1.0, 2.0]}}
    rep3 = run_sweep(grid3, out=out, workers=1, cell_fn=series_cell)
    assert rep3["skipped"] == 4 and rep3["ran"] == 2 and rep3["ok"] == 2
    sub = load_results(out, grid=grid3, resolver=dict)
    assert list(sub["n"]) == [10, 10, 20, 20, 30, 30] and (sub["status"] == "ok").all()


def test_results_db_must_differ_from_parquet_name(tmp_path):
    with pytest.raises(InputError, match="field 'out'"):
        run_sweep({"grid": {"n": [1]}}, out=tmp_path / "x.parquet", cell_fn=series_cell)


def test_bad_executor_and_scheduler_without_dask(tmp_path):
    with pytest.raises(InputError, match="unknown executor"):
        run_sweep({"grid": {"n": [1]}}, out=tmp_path / "x.duckdb", executor="ray",
                  cell_fn=series_cell)
    with pytest.raises(InputError, match="needs --executor dask"):
        run_sweep({"grid": {"n": [1]}}, out=tmp_path / "x.duckdb", scheduler="tcp://x:1",
                  cell_fn=series_cell)


@pytest.mark.slow  # over 2 s in the default tier (measured): the slow tier runs it
def test_column_types_widen(tmp_path):
    out = tmp_path / "w.duckdb"
    run_sweep({"grid": {"n": [3]}}, out=out, workers=1, cell_fn=series_cell)
    run_sweep({"grid": {"n": ["4"]}}, out=out, workers=1, cell_fn=series_cell)
    con = duckdb.connect(str(out), read_only=True)
    try:
        typ = con.execute("SELECT data_type FROM information_schema.columns "
                          "WHERE table_name='sweep_results' AND column_name='n'").fetchone()[0]
        vals = sorted(r[0] for r in con.execute("SELECT n FROM sweep_results").fetchall())
    finally:
        con.close()
    assert typ == "VARCHAR" and vals == ["3", "4"]


def test_load_results_missing_file_is_empty(tmp_path):
    df = load_results(tmp_path / "none.duckdb")
    assert len(df) == 0 and "cell_key" in df.columns


# Dask's LocalCluster and the local executor give the same results: tests/unit/test_sweep_run.py (real
# simulator cells); a failing cell under Dask is recorded: the scheduler-address test below.


@pytest.mark.slow  # a Dask LocalCluster: the slow tier
def test_dask_scheduler_address_submits_to_that_cluster(tmp_path):
    import logging

    from distributed import LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None,
                      silence_logs=logging.ERROR) as cluster:
        rep = run_sweep({"grid": {"n": [3, 4, -1]}}, out=tmp_path / "s.duckdb", executor="dask",
                        scheduler=cluster.scheduler_address, cell_fn=series_cell)
        assert rep["ok"] == 2 and rep["errors"] == 1 and rep["scheduler"] == cluster.scheduler_address
        # the cluster outlives the sweep (it is not ours to close)
        assert cluster.status.name == "running"
    df = load_results(tmp_path / "s.duckdb")
    assert df["worker"].nunique() == 1 and set(df["executor"]) == {"dask"}


@pytest.mark.slow  # over 2 s in the default tier (measured): the slow tier runs it
def test_unreachable_scheduler_is_input_error(tmp_path, monkeypatch):
    import planner.sweep.executors

    monkeypatch.setattr(planner.sweep.executors, "DASK_CONNECT_TIMEOUT_S", 2)
    with pytest.raises(InputError, match="cannot reach the Dask scheduler"):
        run_sweep({"grid": {"n": [1]}}, out=tmp_path / "u.duckdb", executor="dask",
                  scheduler="tcp://127.0.0.1:9", cell_fn=series_cell)
    assert not (tmp_path / "u.duckdb").exists()


@pytest.mark.slow  # worker processes killed (SIGKILL): the slow tier
@pytest.mark.parametrize("workers", [1, 2])
def test_a_cell_that_kills_its_worker_is_isolated(tmp_path, workers):
    grid = {"base": {"die_at": 3}, "grid": {"n": [1, 2, 3, 4, 5]}}
    rep = run_sweep(grid, out=tmp_path / "k.duckdb", workers=workers, cell_fn=series_cell)
    assert rep["cells"] == 5 and rep["ok"] == 4 and rep["errors"] == 1
    df = load_results(tmp_path / "k.duckdb")
    bad = df[df["status"] == "error"]
    assert list(bad["n"]) == [3] and bad["error"].iloc[0].startswith("worker lost")
    assert sorted(df[df["status"] == "ok"]["n"]) == [1, 2, 4, 5]
