"""Small inputs that expand to huge ones ("bombs"): each is generated small in the test and run
in a subprocess whose address space is capped (RLIMIT_AS), so a regression fails with a
MemoryError instead of taking the machine down. Each must end in a one-line refusal, fast."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CAP_BYTES = int(1.5 * 1024**3)


def run_capped(code: str, *, timeout_s: float = 60.0, cap_bytes: int = CAP_BYTES, cwd=None):
    """Run python code in a child whose memory (address space) is capped; returns the
    CompletedProcess (stdout, stderr text)."""
    pre = textwrap.dedent(f"""
        import resource, sys
        resource.setrlimit(resource.RLIMIT_AS, ({cap_bytes}, {cap_bytes}))
        sys.path.insert(0, {str(ROOT)!r})
    """)
    return subprocess.run([sys.executable, "-c", pre + textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=timeout_s, cwd=cwd)


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
    ("r[1-1000]" * 6, "hosts"),
    ("n[0-99999999999999999999]", "hosts"),
    (",".join(["n[1-600000]"] * 2), "1,200,000 hosts"),
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


def test_sacct_hostlist_bomb_one_line(tmp_path):
    """The 310-byte sacct line of the issue: one line naming the line and field."""
    f = tmp_path / "bomb.sacct"
    f.write_text("JobID|Start|End|NNodes|NodeList\n"
                 "1|2021-01-01T00:00:00|2021-01-01T01:00:00|4|a[1-100]b[1-100]c[1-100]d[1-100]\n")
    proc = run_capped(f"""
        from planner import db, logs
        from planner.errors import InputError
        con = db.connect(":memory:")
        try:
            logs.ingest(con, {str(f)!r})
            print("LOADED")
        except InputError as e:
            print("REFUSED", e)
    """)
    refused(proc, "line 2", "NodeList", "100,000,000")


def test_many_distinct_hostlists_capped(tmp_path):
    """Many jobs each naming 100,000 new hosts: the distinct-host cap stops it early."""
    f = tmp_path / "wide.sacct"
    rows = [f"{i}|2021-01-01T00:00:00|2021-01-01T01:00:00|100000|h{i}x[1-100000]" for i in range(1, 40)]
    f.write_text("JobID|Start|End|NNodes|NodeList\n" + "\n".join(rows) + "\n")
    proc = run_capped(f"""
        from planner import db, logs
        from planner.errors import InputError
        con = db.connect(":memory:")
        try:
            logs.ingest(con, {str(f)!r})
            print("LOADED")
        except InputError as e:
            print("REFUSED", e)
    """)
    refused(proc, "distinct nodes", "NodeList")
