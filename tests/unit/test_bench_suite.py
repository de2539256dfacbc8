"""The benchmark suite runner (benchmarks/run_all.py) and the table generator
(scripts/bench_table.py): every benchmark recorded as ok / error / missing, never a crash."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from tests.helpers import ROOT


def _load(rel: str):
    spec = importlib.util.spec_from_file_location(Path(rel).stem + "_under_test", ROOT / rel)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.slow  # 0.7 s CPU measured in the default run: the slow tier
def test_suite_records_ok_error_missing_and_table(tmp_path, monkeypatch):
    bdir = tmp_path / "benchmarks"
    bdir.mkdir()
    (bdir / "bench_ingest.py").write_text(
        "import os\n"
        "def run():\n"
        "    return {'rows': 851590, 'pid': os.getpid(),\n"
        "            'headline': {'ingest s': 1.25, 'peak MiB': 310}}\n")
    (bdir / "bench_allocators.py").write_text("def run():\n    raise RuntimeError('solver exploded')\n")
    (bdir / "bench_replay.py").write_text("X = 1\n")  # no run()
    (bdir / "bench_app.py").write_text("def main(argv=None):\n    return {'argv': argv}\n")
    (bdir / "bench_horizon.py").write_text("def run():\n    return [1, 2]\n")  # not a dict
    monkeypatch.setenv("PLANNER_BENCH_DIR", str(bdir))
    suite_mod = _load("benchmarks/run_all.py")
    out = tmp_path / "suite.json"
    suite = suite_mod.run_suite(out=out, timeout_s=120)
    b = suite["benchmarks"]
    assert b["ingest"]["status"] == "ok" and b["ingest"]["figures"]["rows"] == 851590
    assert b["ingest"]["figures"]["pid"] != __import__("os").getpid()  # ran in its own process
    assert b["allocators"]["status"] == "error" and "RuntimeError: solver exploded" in b["allocators"]["error"]
    assert b["replay"]["status"] == "missing" and "defines no run() or bench() or main()" in b["replay"]["error"]
    assert b["horizon"]["status"] == "error" and "not dict" in b["horizon"]["error"]
    assert b["sweep"]["status"] == "missing"
    assert b["app"]["status"] == "ok" and b["app"]["figures"] == {"argv": []}
    assert b["load"]["status"] == "missing"
    # every other registered benchmark has no file in this folder: missing, not a crash
    others = set(suite_mod.BENCHMARKS) - {"ingest", "allocators", "replay", "horizon", "app"}
    assert others >= {"sweep", "load", "sweep_memory"}
    assert all(b[k]["status"] == "missing" for k in others)
    assert suite["counts"] == {"ok": 2, "missing": 1 + len(others), "error": 2}
    on_disk = json.loads(out.read_text())
    assert set(on_disk) >= {"date", "machine", "versions", "benchmarks", "wall_s"}
    assert on_disk["machine"]["cpu_count"] >= 1 and on_disk["machine"]["memory_gb"]
    assert on_disk["versions"]["duckdb"] and on_disk["versions"]["python"]
    for pkg in ("pyomo", "highspy", "streamlit", "pandas"):
        assert pkg in on_disk["versions"]

    table = _load("scripts/bench_table.py")
    md_path = tmp_path / "t.md"
    assert table.main([str(out), "--out", str(md_path)]) == 0
    md = md_path.read_text()
    assert "| benchmark | figure | value |" in md
    assert "| ingest | ingest s | 1.25 |" in md and "|  | peak MiB | 310 |" in md
    assert "| allocators | error | RuntimeError: solver exploded |" in md
    assert "| sweep | missing |" in md
    assert on_disk["date"] in md


def test_bench_table_bad_input(tmp_path, capsys):
    table = _load("scripts/bench_table.py")
    assert table.main([str(tmp_path / "none.json")]) == 2
    bad = tmp_path / "bad.json"
    bad.write_text("{\n  \"date\": 1,\n")
    assert table.main([str(bad)]) == 2
    assert "line" in capsys.readouterr().err


def test_unknown_benchmark_name(tmp_path):
    import pytest

    from planner.errors import InputError

    suite_mod = _load("benchmarks/run_all.py")
    with pytest.raises(InputError, match="unknown benchmark 'nope'"):
        suite_mod.run_suite(out=None, only=["nope"])


@pytest.mark.slow  # 0.4 s CPU measured in the default run: the slow tier
def test_update_reruns_one_benchmark_and_keeps_the_others(tmp_path, monkeypatch):
    bdir = tmp_path / "benchmarks"
    bdir.mkdir()
    (bdir / "bench_ingest.py").write_text("def run():\n    return {'v': 1}\n")
    (bdir / "bench_sweep.py").write_text("def run():\n    return {'speedup': 1.9}\n")
    monkeypatch.setenv("PLANNER_BENCH_DIR", str(bdir))
    suite_mod = _load("benchmarks/run_all.py")
    out = tmp_path / "suite.json"
    suite_mod.run_suite(out=out, only=["ingest", "sweep"])
    (bdir / "bench_sweep.py").write_text("def run():\n    return {'speedup': 1.8}\n")
    s2 = suite_mod.run_suite(out=out, only=["sweep"], update=True)
    assert s2["benchmarks"]["ingest"]["figures"] == {"v": 1}
    assert s2["benchmarks"]["sweep"]["figures"] == {"speedup": 1.8}
    assert list(json.loads(out.read_text())["benchmarks"]) == ["ingest", "sweep"]


def test_bench_table_dates_rows_only_when_kept_from_an_earlier_run():
    """Records of one run finish in different seconds (the suite crossed a second boundary):
    still one run, no dated rows. A record older than the suite's start (kept by --update) is."""
    table = _load("scripts/bench_table.py")
    rec = {"status": "ok", "figures": {"v": 1}}
    one_run = {"date": "2026-01-01T10:00:00Z", "benchmarks": {
        "ingest": {**rec, "date": "2026-01-01T10:00:00Z"},
        "sweep": {**rec, "date": "2026-01-01T10:00:01Z"},
        "app": {**rec, "date": "2026-01-01T10:03:59Z"}}}
    md = table.table(one_run)
    assert "| ingest | v | 1 |" in md and "| sweep | v | 1 |" in md and "(2026" not in md
    updated = {"date": "2026-01-02T08:00:00Z", "benchmarks": {
        "ingest": {**rec, "date": "2026-01-01T10:00:00Z"},
        "sweep": {**rec, "date": "2026-01-02T08:00:00Z"}}}
    md = table.table(updated)
    assert "| ingest (2026-01-01T10:00:00Z) | v | 1 |" in md
    assert "| sweep (2026-01-02T08:00:00Z) | v | 1 |" in md
