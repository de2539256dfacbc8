"""Small inputs that expand to huge ones ("bombs"): each is generated small in the test and run
in a subprocess whose address space is capped (RLIMIT_AS), so a regression fails with a
MemoryError instead of taking the machine down. Each must end in a one-line refusal, fast."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.helpers import ROOT

CAP_BYTES = int(1.5 * 1024**3)


def run_capped(code: str, *, timeout_s: float = 60.0, cap_bytes: int = CAP_BYTES, cwd=None):
    """Run python code in a child whose memory (address space) is capped; returns the
    CompletedProcess (stdout, stderr text)."""
    pre = textwrap.dedent(f"""
        import resource, sys
        resource.setrlimit(resource.RLIMIT_AS, ({cap_bytes}, {cap_bytes}))
        sys.path.insert(0, {str(ROOT)!r})
    """)
    env = {**os.environ, "MALLOC_ARENA_MAX": "2"}  # fewer malloc arenas: steadier RSS, less address space
    return subprocess.run([sys.executable, "-c", pre + textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=timeout_s, cwd=cwd, check=False, env=env)


def refused(proc, *needles):
    """The child printed one REFUSED line holding every needle (and no traceback)."""
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("REFUSED ")]
    assert len(lines) == 1, proc.stdout[-2000:]
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize("text,needle", [
    ("a[1-100]b[1-100]c[1-100]d[1-100]", "100,000,000 hosts"),
    # each is a capped subprocess (~1 s): one in the default tier, the others under -m slow
    pytest.param("r[1-1000]" * 6, "hosts", marks=pytest.mark.slow),
    pytest.param("n[0-99999999999999999999]", "hosts", marks=pytest.mark.slow),
    pytest.param(",".join(["n[1-600000]"] * 2), "1,200,000 hosts", marks=pytest.mark.slow),
])
def test_hostlist_bomb_counted_before_expanding(text, needle):
    proc = run_capped(f"""
        from planner.logs import hostlist
        try:
            hostlist.expand({text!r})
            print("EXPANDED")
        except ValueError as e:
            print("REFUSED", e)
    """, timeout_s=30)
    refused(proc, needle)


@pytest.mark.slow  # 0.9 s CPU measured in the default run: the slow tier
def test_sacct_hostlist_bomb_one_line(tmp_path):
    """The 310-byte sacct line of the issue: one line naming the line and field."""
    f = tmp_path / "bomb.sacct"
    f.write_text("JobID|Start|End|NNodes|NodeList\n"
                 "1|2021-01-01T00:00:00|2021-01-01T01:00:00|4|a[1-100]b[1-100]c[1-100]d[1-100]\n")
    proc = run_capped(f"""
        from planner import logs
        from planner.store import db
        from planner.errors import InputError
        con = db.connect(":memory:")
        try:
            logs.ingest(con, {str(f)!r})
            print("LOADED")
        except InputError as e:
            print("REFUSED", e)
    """)
    refused(proc, "line 2", "NodeList", "100,000,000")


@pytest.mark.slow  # a capped subprocess; the sacct bomb above stays in the default tier
def test_many_distinct_hostlists_capped(tmp_path):
    """Many jobs each naming 100,000 new hosts: the distinct-host cap stops it early (the cap
    lowered to 250,000 in the child to keep the test fast; the mechanism is the same)."""
    f = tmp_path / "wide.sacct"
    rows = [f"{i}|2021-01-01T00:00:00|2021-01-01T01:00:00|100000|h{i}x[1-100000]" for i in range(1, 40)]
    f.write_text("JobID|Start|End|NNodes|NodeList\n" + "\n".join(rows) + "\n")
    proc = run_capped(f"""
        from planner import logs
        from planner.store import db
        from planner.errors import InputError
        from planner.logs import nodelists
        nodelists.MAX_MACHINE_NODES = 250_000
        con = db.connect(":memory:")
        try:
            logs.ingest(con, {str(f)!r})
            print("LOADED")
        except InputError as e:
            print("REFUSED", e)
    """)
    refused(proc, "more than 250,000 distinct nodes", "line 4", "NodeList")


def _node_state_gzip(path: Path, blocks: int) -> int:
    """A gzip node-state log of `blocks` x 10,000 rows (100 nodes x 100 times per block, times
    rising): built from one block's row endings, so generating it is fast. States change twice
    per block and node. Returns the decompressed size in bytes."""
    import gzip

    ends = [f"{j:03d},n{i},{(j // 50 + i) % 2}\n".encode() for j in range(100) for i in range(100)]
    size = 0
    with gzip.open(path, "wb", compresslevel=1) as f:
        head = b"time,node,idle\n"
        f.write(head)
        size += len(head)
        for b in range(blocks):
            pre = str(1_600_000 + b).encode()
            chunk = pre + pre.join(ends)
            f.write(chunk)
            size += len(chunk)
    return size


@pytest.mark.slow  # a capped subprocess (~2 s of CPU)
def test_gzip_bomb_refused_while_decompressing(tmp_path):
    """64 MB of rows in a small gzip with a 4 MiB limit: refused at the limit, by the ingest and
    by the reader itself, naming the file and the option."""
    f = tmp_path / "bomb.csv.gz"
    size = _node_state_gzip(f, 300)
    assert size > 48 * 1024**2
    proc = run_capped(f"""
        from planner import logs
        from planner.store import db
        from planner.errors import InputError
        from planner.logs import nodestate
        con = db.connect(":memory:")
        for load in (lambda: logs.ingest(con, {str(f)!r}, max_bytes=4 * 1024**2),
                     lambda: nodestate.read({str(f)!r}, max_bytes=4 * 1024**2)):
            try:
                load()
                print("LOADED")
            except InputError as e:
                print("REFUSED", e)
    """)
    assert "Traceback" not in proc.stderr and proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.splitlines()
    assert len(lines) == 2 and all(ln.startswith("REFUSED bomb.csv.gz: decompresses to more than 4 MiB")
                                   and "--max-bytes" in ln for ln in lines), lines


@pytest.mark.slow  # 6.0 s CPU measured in the default run: the slow tier
def test_large_node_state_streams_in_bounded_memory(tmp_path):
    """Peak memory is flat in the file size: ingesting 6,000,000 node-state rows (100 MB) peaks
    within 120 MiB of ingesting 1,500,000 (the reader streams 1,000,000-row chunks and keeps only
    state changes; the whole-frame reader this replaced grew by ~250 MiB between the two)."""
    peaks = {}
    for blocks in (150, 600):
        f = tmp_path / f"big{blocks}.csv.gz"
        _node_state_gzip(f, blocks)
        proc = run_capped(f"""
            import resource
            from planner import logs
            from planner.store import db
            con = db.connect(":memory:")
            r = logs.ingest(con, {str(f)!r})
            print("ROWS", r["rows"], r["nodes"], r["repeated_state_rows"])
            print("RSS_MB", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
        """, timeout_s=180)
        assert proc.returncode == 0, proc.stderr[-2000:]
        out = dict(ln.split(" ", 1) for ln in proc.stdout.splitlines())
        rows, nodes, repeated = map(int, out["ROWS"].split())
        assert (rows, nodes) == (blocks * 10_000, 100) and repeated > rows * 0.97
        peaks[blocks] = float(out["RSS_MB"])
    assert peaks[600] - peaks[150] < 120, peaks
    assert peaks[600] < 1024, peaks


@pytest.mark.slow  # a capped subprocess (~2 s of CPU)
def test_endless_line_refused_while_reading(tmp_path):
    """A 40 MB line without a line end (gzip of a few KB): refused at 16 MiB with its line number,
    in detection and in every reader, never held whole."""
    import gzip

    f = tmp_path / "line.csv.gz"
    with gzip.open(f, "wb", compresslevel=9) as g:
        g.write(b"time,node,idle\n0,")
        for _ in range(40):
            g.write(b"x" * 1_000_000)
    proc = run_capped(f"""
        from planner import logs
        from planner.store import db
        from planner.errors import InputError
        for fmt in (None, "nodestate", "csv", "slurm", "swf"):
            try:
                logs.ingest(db.connect(":memory:"), {str(f)!r}, format=fmt)
                print("LOADED")
            except InputError as e:
                print("REFUSED", e)
    """)
    assert "Traceback" not in proc.stderr and proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.splitlines()
    assert len(lines) == 5 and all("line 2" in ln and "longer than 16 MiB" in ln for ln in lines), lines


@pytest.mark.slow  # 0.4 s CPU measured in the default run: the slow tier
def test_cli_max_bytes(tmp_path, capsys):
    from planner import cli

    f = tmp_path / "s.csv"
    f.write_text("time,node,idle\n0,a,1\n10,a,0\n" + "".join(f"{20 + i},a,{i % 2}\n" for i in range(300)))
    dbf = str(tmp_path / "x.duckdb")
    assert cli.main(["ingest", str(f), "--db", dbf, "--max-bytes", "1K"]) == 2
    err = capsys.readouterr().err
    assert "s.csv: holds more than 1 KiB (the input size limit; raise it with --max-bytes)" in err
    assert cli.main(["ingest", str(f), "--db", dbf, "--max-bytes", "lots"]) == 2
    assert "field 'max-bytes'" in capsys.readouterr().err
    assert cli.main(["ingest", str(f), "--db", dbf, "--max-bytes", "8K", "--json"]) == 0
    assert '"rows": 302' in capsys.readouterr().out
