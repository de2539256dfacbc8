"""Issue 23, finding 6: every OSError on an input or output path is a one-line error (exit 2),
never a traceback or a hang; every numeric field bounded."""

from __future__ import annotations

import json
import os

import pytest

from planner import cli

SWF = "; MaxNodes: 8\n" + "".join(f"{j} {10 * j} 0 100 2 -1 -1 2 100 -1 1 1 1 -1 1 1 -1 -1\n" for j in range(1, 6))


def _run(capsys, *argv):
    rc = cli.main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def _one_line_error(rc, err, *words):
    assert rc == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    for w in words:
        assert w in lines[0], lines[0]


def test_ingest_a_non_utf8_file_name(tmp_path, capsys):
    name = os.fsdecode(b"log-\xff\xfe.swf")
    (tmp_path / name).write_text(SWF)
    rc, out, err = _run(capsys, "ingest", str(tmp_path / name), "--db", str(tmp_path / "x.duckdb"), "--json")
    assert rc == 0, err
    assert json.loads(out)["rows"] == 5


def test_ingest_a_too_long_path(tmp_path, capsys):
    rc, out, err = _run(capsys, "ingest", str(tmp_path / ("x" * 300 + ".swf")), "--db", str(tmp_path / "x.duckdb"))
    _one_line_error(rc, err, "x" * 20)


@pytest.mark.parametrize("where", ["file", "db-dir"])
def test_ingest_permission_denied(tmp_path, capsys, monkeypatch, where):
    """Run as root, chmod does not deny: the denial is injected where the OS would raise it."""
    log = tmp_path / "a.swf"
    log.write_text(SWF)
    target = str(log) if where == "file" else str(tmp_path / "ro")
    real_open = os.open

    def deny(path, *a, **kw):
        if os.fspath(path).startswith(target):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_open(path, *a, **kw)

    import builtins
    real_bopen = builtins.open

    def deny_b(path, *a, **kw):
        if isinstance(path, (str, os.PathLike)) and os.fspath(path).startswith(target):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_bopen(path, *a, **kw)

    monkeypatch.setattr(os, "open", deny)
    monkeypatch.setattr(builtins, "open", deny_b)
    if where == "db-dir":
        (tmp_path / "ro").mkdir()
        def no_mkdir(path, *a, **k):
            raise PermissionError(13, "Permission denied", os.fspath(path))

        monkeypatch.setattr(os, "mkdir", no_mkdir)
    db = tmp_path / "x.duckdb" if where == "file" else tmp_path / "ro" / "sub" / "x.duckdb"
    rc, out, err = _run(capsys, "ingest", str(log), "--db", str(db))
    _one_line_error(rc, err, "ermission denied")


def test_ingest_a_directory(tmp_path, capsys):
    rc, out, err = _run(capsys, "ingest", str(tmp_path), "--db", str(tmp_path / "x.duckdb"))
    _one_line_error(rc, err, "directory")


@pytest.mark.timeout(60)  # it blocked forever: a hang fails, it does not stall the run
def test_allocate_on_a_fifo_does_not_block(tmp_path, capsys):
    fifo = tmp_path / "inst.json"
    os.mkfifo(fifo)
    rc, out, err = _run(capsys, "allocate", "--instance", str(fifo))
    _one_line_error(rc, err, "not a regular file")


def test_simulate_out_to_dev_full_is_refused_before_the_replay(tmp_path, capsys):
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    rc, out, err = _run(capsys, "simulate", "--pool", "fixed", "--pool-size", "4", "--hours", "1",
                        "--count", "2", "--out", "/dev/full")
    _one_line_error(rc, err, "out")


def test_simulate_out_on_an_existing_file(tmp_path, capsys):
    f = tmp_path / "taken"
    f.write_text("x")
    rc, out, err = _run(capsys, "simulate", "--pool", "fixed", "--pool-size", "4", "--hours", "1",
                        "--count", "2", "--out", str(f))
    _one_line_error(rc, err, "out", "not a directory")


def test_simulate_out_in_a_read_only_place(tmp_path, capsys):
    rc, out, err = _run(capsys, "simulate", "--pool", "fixed", "--pool-size", "4", "--hours", "1",
                        "--count", "2", "--out", "/proc/planner-out")
    _one_line_error(rc, err, "out")


def test_simulate_step_min_is_bounded_like_allocate(capsys):
    rc, out, err = _run(capsys, "simulate", "--pool", "fixed", "--pool-size", "4", "--hours", "1",
                        "--cadence", "interval", "--step-min", "1e-6")
    _one_line_error(rc, err, "step_min")


def test_a_400_digit_nmax_in_an_instance(tmp_path, capsys):
    inst = json.loads(open(os.path.join(os.path.dirname(cli.__file__), "..", "examples", "instance.json")).read())
    text = json.dumps(inst).replace('"nmax": 8', '"nmax": ' + "9" * 400, 1)
    p = tmp_path / "i.json"
    p.write_text(text)
    rc, out, err = _run(capsys, "allocate", "--instance", str(p))
    _one_line_error(rc, err, "nmax")


def test_a_400_digit_nmax_in_a_trainer_csv(tmp_path, capsys):
    p = tmp_path / "w.csv"
    p.write_text("id,model,submit_s,nmin,nmax,work_samples\nt1,resnet18,0,1," + "9" * 400 + ",1e6\n")
    rc, out, err = _run(capsys, "simulate", "--pool", "fixed", "--pool-size", "4", "--hours", "1",
                        "--workload", str(p))
    _one_line_error(rc, err, "nmax", "line 2")


@pytest.mark.parametrize("url", ["tcp://", "not a url", "tcp://host:99999", "http://[::1"])
def test_sweep_scheduler_with_a_malformed_url(tmp_path, capsys, url):
    grid = tmp_path / "g.json"
    grid.write_text(json.dumps({"base": {"pool": "fixed", "pool_size": 4, "hours": 1, "count": 2},
                                "grid": {"allocator": ["greedy"]}}))
    rc, out, err = _run(capsys, "sweep", "--grid", str(grid), "--out", str(tmp_path / "r.duckdb"),
                        "--executor", "dask", "--scheduler", url, "--no-progress")
    _one_line_error(rc, err, "scheduler")


def test_sweep_workers_bounded(tmp_path, capsys):
    grid = tmp_path / "g.json"
    grid.write_text(json.dumps({"base": {"pool": "fixed", "pool_size": 4, "hours": 1, "count": 2},
                                "grid": {"allocator": ["greedy"]}}))
    rc, out, err = _run(capsys, "sweep", "--grid", str(grid), "--out", str(tmp_path / "r.duckdb"),
                        "--workers", "10000", "--no-progress")
    _one_line_error(rc, err, "workers")


def test_sweep_out_hard_linked_to_the_log_database_is_refused(tmp_path, capsys, loaded_db):
    link = tmp_path / "results.duckdb"
    os.link(loaded_db, link)
    grid = tmp_path / "g.json"
    grid.write_text(json.dumps({"base": {"db": str(loaded_db), "log": "tiny.csv", "hours": 0.1, "count": 2},
                                "grid": {"allocator": ["greedy"]}}))
    before = open(loaded_db, "rb").read()
    rc, out, err = _run(capsys, "sweep", "--grid", str(grid), "--out", str(link), "--no-progress")
    _one_line_error(rc, err, "log database")
    assert open(loaded_db, "rb").read() == before


def test_simulate_out_to_the_input_database_is_refused(tmp_path, capsys, loaded_db):
    rc, out, err = _run(capsys, "simulate", "--db", str(loaded_db), "--log", "tiny.csv", "--hours", "0.1",
                        "--out", str(loaded_db))
    _one_line_error(rc, err, "out")




def test_every_numeric_scenario_field_is_bounded():
    """Issue 23: every numeric field has both bounds in the one schema (allocate and simulate read it)."""
    from planner.scenario import schema

    loose = [f.name for f in schema.FIELD.values() if f.kind in (int, float) and (f.lo is None or f.hi is None)]
    assert loose == []
