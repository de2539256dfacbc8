"""Every shipped log is offered (planner.store.catalog.SHIPPED), and a GPU trace says GPUs."""

from __future__ import annotations

import json

import pytest

from planner import logs
from planner.store import catalog, db


def test_every_shipped_dataset_is_a_log():
    files = {v[0] for v in catalog.SHIPPED.values()}
    assert files == {"ANL-Theta-2022.swf.gz", "KTH-SP2-1996-2.1-cln.swf.gz", "philly_jobs.csv.gz"}
    assert catalog.SHIPPED["philly-2017"][3] == "GPU"


def test_unit_is_stored_and_listed(mem_con, write_file):
    path = write_file("gpus.csv", "start,end,nodes\n0,3600,2\n0,7200,4\n")
    rep = logs.ingest(mem_con, path, name="gpus")
    assert logs.unit_of(mem_con, "gpus") == "node"
    logs.set_unit(mem_con, rep["log"], "GPU")
    row = logs.list_logs(mem_con).set_index("name").loc["gpus"]
    assert (row["unit"], row["nodes"]) == ("GPU", 6)
    from planner.errors import InputError

    with pytest.raises(InputError, match="unit must be one of node, GPU"):
        logs.set_unit(mem_con, "gpus", "TPU")


def test_cli_ingest_unit(tmp_path, write_file, capsys):
    from planner import cli

    path = tmp_path / "g.duckdb"
    f = write_file("g.csv", "start,end,nodes\n0,3600,2\n")
    assert cli.main(["ingest", str(f), "--db", str(path), "--name", "g", "--unit", "GPU", "--json"]) in (0, None)
    assert json.loads(capsys.readouterr().out)["unit"] == "GPU"
    con = db.connect(path, read_only=True)
    try:
        assert logs.unit_of(con, "g") == "GPU"
    finally:
        con.close()


def test_philly_shipped_as_gpus(summit_con):
    row = logs.list_logs(summit_con).set_index("name").loc["philly-2017"]
    assert row["unit"] == "GPU" and row["kind"] == "jobs" and row["machine_nodes_from"] == "max concurrent"
    assert int(row["nodes"]) == 1243  # the most GPUs in use at once (the trace gives no cluster size)
