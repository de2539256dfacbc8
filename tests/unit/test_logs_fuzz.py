"""Fuzzing every log reader with Hypothesis: structured-but-mutated logs, not only random bytes.

For each format (nodestate, swf, slurm, csv) a strategy writes a valid log (header, plausible
rows) and then applies 0-5 mutations: a field replaced by a nasty token (nan, inf, -1, 1e308,
9999-12-31, unbalanced brackets, a 5,000-character word, control characters, ...), characters
deleted or inserted, lines dropped, duplicated or swapped, a delimiter swapped, the file cut
short; the bytes are sometimes gzipped (and the gzip sometimes truncated) or followed by junk.
Every input goes through `planner.logs.ingest` (with the format forced or auto-detected) into a
DuckDB database. Properties:

- nothing but planner.errors.InputError escapes; its message is one line naming the file;
- a refused input leaves the row counts of every table unchanged;
- an accepted input leaves consistent tables: 0 <= N(t) <= machine nodes, fragments of
  positive length inside the log span, a logs row whose counts match;
- no input takes longer than HANG_S seconds (SIGALRM per example; plus pytest-timeout).

Default run: SHORT = 20 examples per reader (derandomized: the same inputs every run).
Long run (`pytest -m slow tests/unit/test_logs_fuzz.py`, in .ci/run): LONG = 1,000 new examples per
reader each run (163 s for the four in the CI rehearsal, quiet machine, two xdist workers), and the
random-bytes check with 150. A deep
run sets PLANNER_FUZZ_LONG (10,000 per reader took about 24 min here, docs/robustness.md): CI keeps the
routine run short and, since the long examples are not derandomized, covers new inputs every run.
"""

from __future__ import annotations

import gzip
import itertools
import os
import signal
import tempfile
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner import logs
from planner.errors import InputError
from planner.logs import hostlist
from planner.store import db
from tests.helpers import examples

SHORT = 20  # the default (fast) tier; the slow tier's LONG run covers these and far more
LONG = int(os.environ.get("PLANNER_FUZZ_LONG", "1000"))
HANG_S = 20.0
FORMATS = ("nodestate", "swf", "slurm", "csv")

NASTY = ["", " ", "nan", "NaN", "inf", "-inf", "-1", "0", "-0", "1e308", "-1e308", "1e20", "4294967296",
         "2147483648", "99999999999999999999", "0.5", "1.5", "  7  ", "0x10", "1_000", "None", "Unknown",
         "N/A", "9999-12-31T23:59:59", "1900-01-01", "1969-12-31T23:59:59", "2021-02-30T00:00:00",
         "2021-01-01T25:00:00", "2021-01-01T00:00:00+14:00", "2021-01-01 00:00:00Z", "T", "--", ";", "|",
         ",", "\t", '"', "'", "[", "]", "nid[", "nid]", "n[1-]", "n[-1]", "n[5-1]", "n[0-99999999999]",
         "n[1-3][1-3]", "n[[1]]", "a,,b", "n[01-10],m[1,3-5]", "None assigned", "x" * 5000, "\x00", "\x7f",
         "é", "节点", "\ufeff", "\u2028", "=cmd|' /C calc'!A0", "1,2", "1|2", "1 2"]

BASE = 1609459200  # 2021-01-01T00:00:00Z


def _iso(t: float) -> str:
    return np.datetime_as_string(np.datetime64(int(t), "s")).replace("T", " ")


# ---------------------------------------------------------------- valid logs

@st.composite
def nodestate_lines(draw):
    names = draw(st.lists(st.sampled_from([f"n{i:02d}" for i in range(12)] + ["a", "b", "c"]),
                          min_size=1, max_size=6, unique=True))
    epoch = draw(st.booleans())
    t = BASE + draw(st.integers(0, 10_000))
    rows = [(t, n, draw(st.integers(0, 1))) for n in names]
    for _ in range(draw(st.integers(0, 25))):
        t += draw(st.sampled_from([0, 0, 1, 10, 60, 600, 3600]))
        rows.append((t, draw(st.sampled_from(names)), draw(st.integers(0, 1))))
    head = draw(st.sampled_from(["time,node,idle", "Time,Node,Idle", "node,time,idle", "time, node, idle"]))
    cols = [c.strip().lower() for c in head.split(",")]
    out = [head]
    for t, n, i in rows:
        rec = {"time": str(t) if epoch else _iso(t), "node": n, "idle": str(i)}
        out.append(",".join(rec[c] for c in cols))
    return out


@st.composite
def swf_lines(draw):
    out = []
    if draw(st.booleans()):
        out.append(f"; MaxNodes: {draw(st.integers(1, 64))}")
    if draw(st.booleans()):
        out.append(f"; MaxProcs: {draw(st.integers(1, 128))}")
    if draw(st.booleans()):
        out.append(f"; UnixStartTime: {BASE + draw(st.integers(0, 10**6))}")
    if draw(st.booleans()):
        out.append("; Computer: fuzz")
    submit = 0
    for j in range(draw(st.integers(1, 25))):
        submit += draw(st.integers(0, 500))
        f = [j + 1, submit, draw(st.sampled_from([-1, 0, 5, 100])), draw(st.sampled_from([-1, 0, 1, 60, 3600])),
             draw(st.integers(-1, 16)), -1, -1, draw(st.integers(-1, 16)), 3600, -1, 1, 1, 1, -1, -1, -1, -1, -1]
        out.append(" ".join(map(str, f)))
    return out


HOSTLISTS = ["nid01", "nid[01-02]", "nid[0001-0004,0010]", "gpu07", "nid[01-02],gpu07", "r[1-2]n[1-2]",
             "None assigned", "a,b,c"]


def _hosts_count(text: str) -> int:
    try:
        return len(set(hostlist.expand(text)))
    except ValueError:
        return 1


@st.composite
def slurm_lines(draw):
    extra = draw(st.sampled_from([[], ["Submit"], ["State"], ["Submit", "JobName"]]))
    cols = ["JobID", "Start", "End", "NNodes", "NodeList"] + extra
    if draw(st.booleans()):
        cols = cols[1:3] + cols[:1] + cols[3:]
    out = ["|".join(cols)]
    for j in range(draw(st.integers(1, 20))):
        s = BASE + draw(st.integers(0, 20_000))
        e = s + draw(st.sampled_from([0, 1, 60, 3600]))
        nl = draw(st.sampled_from(HOSTLISTS))
        rec = {"JobID": draw(st.sampled_from([str(100 + j), f"{100 + j}.batch", f"{100 + j}_3", f"{100 + j}+0"])),
               "Start": draw(st.sampled_from([_iso(s).replace(" ", "T"), "Unknown", "None"])),
               "End": draw(st.sampled_from([_iso(e).replace(" ", "T"), "Unknown"])),
               "NNodes": str(0 if nl == "None assigned" else _hosts_count(nl)), "NodeList": nl,
               "Submit": _iso(s - 5).replace(" ", "T"), "State": "COMPLETED", "JobName": "j"}
        out.append("|".join(rec[c] for c in cols))
    return out


@st.composite
def csv_lines(draw):
    cols = draw(st.sampled_from([["start", "end", "nodes"], ["start", "end", "nodes", "node_list"],
                                 ["job_id", "submit", "start", "end", "nodes"], ["start", "end", "node_list"]]))
    epoch = draw(st.booleans())
    out = [",".join(cols)]
    for j in range(draw(st.integers(1, 20))):
        s = BASE + draw(st.integers(0, 20_000))
        e = s + draw(st.sampled_from([0, 1, 60, 3600]))
        nl = draw(st.sampled_from(["n1", "n2", "n[1-2]", "n3", "n[3-4]"]))
        rec = {"job_id": str(j), "submit": str(s - 10) if epoch else _iso(s - 10),
               "start": str(s) if epoch else _iso(s), "end": str(e) if epoch else _iso(e),
               "nodes": str(len(hostlist.expand(nl)) if "node_list" in cols else draw(st.integers(0, 8))),
               "node_list": f'"{nl}"' if "," in nl else nl}
        out.append(",".join(rec[c] for c in cols))
    return out


VALID = {"nodestate": nodestate_lines(), "swf": swf_lines(), "slurm": slurm_lines(), "csv": csv_lines()}
SEPS = {"nodestate": ",", "swf": " ", "slurm": "|", "csv": ","}


# ---------------------------------------------------------------- mutations

@st.composite
def mutated(draw, fmt: str) -> tuple[bytes, str]:
    lines = list(draw(VALID[fmt]))
    sep = SEPS[fmt]
    for _ in range(draw(st.integers(0, 5))):
        op = draw(st.sampled_from(["field", "field", "field", "delete", "insert", "drop", "dup", "swap",
                                   "sep", "truncate_line"]))
        i = draw(st.integers(0, len(lines) - 1)) if lines else 0
        if not lines:
            lines = [""]
        if op == "field":
            parts = lines[i].split(sep)
            k = draw(st.integers(0, len(parts) - 1))
            parts[k] = draw(st.sampled_from(NASTY) | st.text(max_size=12))
            lines[i] = sep.join(parts)
        elif op == "delete":
            a = draw(st.integers(0, len(lines[i])))
            lines[i] = lines[i][:a] + lines[i][a + draw(st.integers(1, 8)):]
        elif op == "insert":
            a = draw(st.integers(0, len(lines[i])))
            lines[i] = lines[i][:a] + draw(st.sampled_from(NASTY) | st.text(min_size=1, max_size=6)) + lines[i][a:]
        elif op == "drop" and len(lines) > 1:
            del lines[i]
        elif op == "dup":
            lines.insert(i, lines[i])
        elif op == "swap" and len(lines) > 1:
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        elif op == "sep":
            lines[i] = lines[i].replace(sep, draw(st.sampled_from([",", "|", ";", "\t", " ", "  "])))
        elif op == "truncate_line":
            lines[i] = lines[i][: draw(st.integers(0, len(lines[i])))]
    text = "\n".join(lines) + draw(st.sampled_from(["\n", "", "\r\n", "\n\n\n"]))
    data = text.encode("utf-8", "surrogatepass")
    wrap = draw(st.sampled_from(["plain"] * 6 + ["gzip", "gzip", "gzip_cut", "junk_tail"]))
    suffix = ".log"
    if wrap == "gzip":
        data, suffix = gzip.compress(data), ".log.gz"
    elif wrap == "gzip_cut":
        z = gzip.compress(data)
        data, suffix = z[: draw(st.integers(0, len(z) - 1))], ".log.gz"
    elif wrap == "junk_tail":
        data += draw(st.binary(min_size=1, max_size=64))
    return data, suffix


# ---------------------------------------------------------------- the property

class Hang(Exception):
    pass


@contextmanager
def hang_guard(seconds: float):
    def _alarm(signum, frame):
        raise Hang(f"one input took more than {seconds} s")
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


class Target:
    """One DuckDB database and a temp dir for a whole test (examples get unique names)."""

    def __init__(self):
        self.dir = tempfile.TemporaryDirectory(prefix="fuzz-")
        self.con = db.connect(":memory:")
        self.n = itertools.count()
        self.stats = {"accepted": 0, "refused": 0}

    def close(self):
        self.con.close()
        self.dir.cleanup()


@pytest.fixture(scope="module")
def target():
    t = Target()
    yield t
    t.close()


def check_one(target: Target, fmt: str, data: bytes, suffix: str, force: bool):
    k = next(target.n)
    path = Path(target.dir.name) / f"in{k}{suffix}"
    path.write_bytes(data)
    con = target.con
    before = db.table_counts(con)
    try:
        with hang_guard(HANG_S):
            rep = logs.ingest(con, path, format=fmt if force else None, name=f"fuzz{k}")
    except InputError as e:
        msg = str(e)
        assert "\n" not in msg and path.name in msg and len(msg) < 800, msg[:300]
        assert db.table_counts(con) == before
        target.stats["refused"] += 1
        return
    finally:
        path.unlink(missing_ok=True)
    target.stats["accepted"] += 1
    if rep.get("already_loaded"):
        return
    lid = rep["log_id"]
    row = db.log_row(con, lid)
    assert row["rows"] >= 1 and row["machine_nodes"] >= 1 and row["start_s"] < row["end_s"]
    lo, hi, n = con.execute("SELECT min(idle_nodes), max(idle_nodes), count(*) FROM idle_series WHERE log_id = ?",
                            [lid]).fetchone()
    assert n >= 1 and 0 <= lo and hi <= row["machine_nodes"], (lo, hi, row["machine_nodes"])
    bad = con.execute("SELECT count(*) FROM fragments WHERE log_id = ? AND NOT (end_s > start_s AND "
                      "start_s >= ? AND end_s <= ?)", [lid, row["start_s"], row["end_s"]]).fetchone()[0]
    assert bad == 0
    if row["kind"] == "jobs":
        assert db.table_counts(con, lid)["jobs"] == row["rows"]


COMMON = dict(deadline=None, database=None, suppress_health_check=list(HealthCheck))


@pytest.mark.slow  # 5.6 s CPU measured in the default run: the slow tier
@pytest.mark.timeout(600)
@pytest.mark.parametrize("fmt", FORMATS)
@settings(max_examples=SHORT, derandomize=True, **COMMON)
@given(data=st.data())
def test_fuzz_reader_short(fmt, data, target):
    blob, suffix = data.draw(mutated(fmt))
    check_one(target, fmt, blob, suffix, data.draw(st.booleans()))


@pytest.mark.slow
@pytest.mark.timeout(4 * 3600)
@pytest.mark.parametrize("fmt", FORMATS)
@settings(max_examples=LONG, **COMMON)
@given(data=st.data())
def test_fuzz_reader_long(fmt, data, target):
    blob, suffix = data.draw(mutated(fmt))
    check_one(target, fmt, blob, suffix, data.draw(st.booleans()))


@pytest.mark.slow  # 0.3 s CPU measured in the default run: the slow tier
@pytest.mark.timeout(300)
@pytest.mark.parametrize("budget", examples(150, 20))
def test_fuzz_random_bytes_autodetect(target, budget):
    @settings(max_examples=budget, derandomize=True, **COMMON)
    @given(blob=st.binary(max_size=400), gz=st.booleans())
    def example(blob, gz):
        check_one(target, "csv", gzip.compress(blob) if gz else blob, ".gz" if gz else ".bin", False)

    example()


@pytest.mark.slow  # 1.1 s CPU measured in the default run: the slow tier
@pytest.mark.timeout(300)
@settings(max_examples=500, derandomize=True, **COMMON)
@given(text=st.text(alphabet="nid0123456789[]-, ab", max_size=40) | st.sampled_from(NASTY))
def test_fuzz_hostlist_only_valueerror(text):
    with hang_guard(HANG_S):
        try:
            hosts = hostlist.expand(text)
        except ValueError as e:
            assert "\n" not in str(e)
            return
    assert hosts and all(h and not any(c.isspace() for c in h) for h in hosts)
