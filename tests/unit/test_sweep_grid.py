"""Hostile grid files: bounded whatever the input, one-line errors naming the file and field."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys

import pytest

from planner.cli import main as cli_main
from planner.errors import InputError
from planner.sweep import MAX_CELLS, load_grid, parse_grid, resolve, run_sweep
from planner.sweep import grid as sweep_grid
from tests.helpers import ROOT


def _cli(capsys, *argv) -> tuple[int, str]:
    rc = cli_main(["sweep", *map(str, argv)])
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) <= 1, err
    return rc, err


def test_cli_cell_cap_and_override(tmp_path, capsys):
    g = tmp_path / "big.json"  # 15 x 15 = 225 cells of a fixed pool, over the cap of 200
    g.write_text(json.dumps({"base": {"pool": "fixed", "pool_size": 8, "hours": 0.1},
                             "grid": {"seed": list(range(15)), "pj_max": list(range(1, 16))}}))
    rc, err = _cli(capsys, "--grid", g, "--out", tmp_path / "o.duckdb")
    assert rc == 2 and str(g) in err and "field 'grid'" in err
    assert f"225 cells, more than the cap of {MAX_CELLS}" in err and "--max-cells" in err
    assert not (tmp_path / "o.duckdb").exists()
    rc, err = _cli(capsys, "--grid", g, "--out", tmp_path / "o.duckdb", "--max-cells", "0")
    assert rc == 2 and "field 'max-cells'" in err
    # the cap is raised explicitly: the grid resolves (checked through the library, not run)
    assert len(resolve(load_grid(g), max_cells=225)) == 225


def test_cell_count_is_checked_before_the_product_is_built():
    # 10^12 cells: counting is instant; building them would take the machine down
    g = parse_grid({"grid": {f"o{i}": list(range(100)) for i in range(6)}}, valid=[])
    with pytest.raises(InputError, match="1,000,000,000,000 cells"):
        resolve(g, resolver=dict, max_cells=MAX_CELLS)


def test_app_and_cli_share_one_cap():
    page = (ROOT / "app_pages" / "compare.py").read_text()
    assert "MAX_CELLS" in page and "> 200" not in page


BOMB = """base:
  a: &a ["x", "x", "x", "x", "x", "x", "x", "x", "x"]
  b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]
  c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]
  d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]
  e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]
  f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]
  g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]
  h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g]
  i: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h]
  j: &j [*i, *i, *i, *i, *i, *i, *i, *i, *i]
  k: &k [*j, *j, *j, *j, *j, *j, *j, *j, *j]
  l: &l [*k, *k, *k, *k, *k, *k, *k, *k, *k]
  m: &m [*l, *l, *l, *l, *l, *l, *l, *l, *l]
grid:
  n: [1]
"""


def _limited(code: str, mem_mb: int = 1024) -> subprocess.CompletedProcess:
    """Run `code` in a child Python whose address space is capped: a regression fails there
    (MemoryError) instead of taking the machine down."""
    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (mem_mb << 20, mem_mb << 20))

    return subprocess.run([sys.executable, "-c", code], preexec_fn=cap, capture_output=True, text=True,
                          timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT)})


@pytest.mark.slow  # over 2 s in the default tier (measured): the slow tier runs it
def test_yaml_alias_bomb_in_base_is_refused_in_bounded_memory(tmp_path):
    g = tmp_path / "bomb.yaml"
    g.write_text(BOMB)
    code = ("from planner.sweep import load_grid\nfrom planner.errors import InputError\n"
            f"try:\n    load_grid({str(g)!r}, valid=[])\nexcept InputError as e:\n    print(e)\n")
    proc = _limited(code)
    assert proc.returncode == 0, proc.stderr[-500:]
    assert proc.stdout.strip() == f"{g}, line 14: more than 100 YAML aliases"


@pytest.mark.parametrize("text,match", [
    ("base:\n  hours: [1, 2]\ngrid:\n  tfwd: [60]\n",
     r"line 2, field 'base\.hours': base option 'hours' must be a single value, not a list"),
    ("base:\n  hours: {a: 1}\ngrid:\n  tfwd: [60]\n", r"field 'base\.hours'.*not a dict"),
    ("base:\n  x: &x [1]\n  y: *x\ngrid:\n  tfwd: [60]\n", r"field 'base\.x'"),
    ("grid:\n  tfwd: " + "[" * 30 + "1" + "]" * 30 + "\n", r"line 2: YAML nested deeper than 20 levels"),
])
def test_base_values_are_scalars_and_yaml_is_bounded(tmp_path, text, match):
    g = tmp_path / "g.yaml"
    g.write_text(text)
    with pytest.raises(InputError, match=match):
        load_grid(g, valid=[])


def test_deep_json_and_oversized_or_special_grid_files(tmp_path, monkeypatch):
    deep = tmp_path / "deep.json"
    deep.write_text('{"grid": {"n": ' + "[" * 100_000 + "]" * 100_000 + "}}")
    with pytest.raises(InputError, match=r"deep\.json: nested too deeply"):
        load_grid(deep, valid=[])
    monkeypatch.setattr(sweep_grid, "MAX_GRID_BYTES", 100)
    big = tmp_path / "big.json"
    big.write_text(json.dumps({"grid": {"n": list(range(100))}}))
    with pytest.raises(InputError, match=r"big\.json: grid file larger than"):
        load_grid(big, valid=[])
    (tmp_path / "dir.json").mkdir()
    with pytest.raises(InputError, match=r"dir\.json: grid file is not a regular file"):
        load_grid(tmp_path / "dir.json")
    bad = tmp_path / "latin.yaml"
    bad.write_bytes(b"grid:\n  n: [\xff]\n")
    with pytest.raises(InputError, match=r"latin\.yaml: not UTF-8 text"):
        load_grid(bad, valid=[])


def test_workload_path_must_be_a_regular_bounded_file(tmp_path, monkeypatch):
    base = {"pool": "fixed", "pool_size": 8, "hours": 0.1}
    for path in ("/dev/zero", str(tmp_path)):
        g = parse_grid({"base": base, "grid": {"workload": ["hpo", path]}}, file="g.json")
        with pytest.raises(InputError, match=r"g\.json, field 'grid\.workload': cell 1 .*is not a regular file"):
            resolve(g)
    csv = tmp_path / "t.csv"
    csv.write_text("id,model,submit_s,work_samples\n" + "".join(f"t{i},resnet50,0,1e6\n" for i in range(100)))
    monkeypatch.setattr(sweep_grid, "MAX_WORKLOAD_BYTES", 1000)
    g = parse_grid({"base": {**base, "workload": str(csv)}, "grid": {"seed": [0]}}, file="g.json")
    with pytest.raises(InputError, match=r"field 'base\.workload'.*larger than"):
        resolve(g)
    monkeypatch.setattr(sweep_grid, "MAX_WORKLOAD_BYTES", 64 << 20)
    assert resolve(g)[0].params["workload"] == str(csv)


def test_workload_dev_zero_through_the_cli_is_one_line(tmp_path, capsys):
    g = tmp_path / "z.yaml"
    g.write_text("base:\n  pool: fixed\n  pool-size: 8\n  workload: /dev/zero\ngrid:\n  seed: [0]\n")
    rc, err = _cli(capsys, "--grid", g, "--out", tmp_path / "o.duckdb")
    assert rc == 2 and "field 'base.workload'" in err and "/dev/zero' is not a regular file" in err


def test_run_sweep_applies_the_cap_by_default(tmp_path):
    with pytest.raises(InputError, match="more than the cap"):
        run_sweep({"grid": {"n": list(range(MAX_CELLS + 1))}}, out=tmp_path / "o.duckdb", cell_fn=len)
    assert not (tmp_path / "o.duckdb").exists()


def test_results_file_that_is_not_duckdb_is_one_line(tmp_path, capsys):
    from planner.sweep import load_results

    bad = tmp_path / "notdb.duckdb"
    bad.write_bytes(b"not a database\n" * 100)
    with pytest.raises(InputError, match=r"notdb\.duckdb: cannot read the results database"):
        load_results(bad)
    g = tmp_path / "g.json"
    g.write_text(json.dumps({"base": {"pool": "fixed", "pool_size": 8, "hours": 0.1}, "grid": {"seed": [0]}}))
    rc, err = _cli(capsys, "--grid", g, "--out", bad)
    assert rc == 2 and "cannot open the results database" in err and str(bad) in err
    assert bad.read_bytes() == b"not a database\n" * 100  # left as it was
