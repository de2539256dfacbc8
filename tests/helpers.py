"""Plain helpers shared by the tests (no fixtures: those are in tests/conftest.py). Import as
`from tests.helpers import NAME`; a test module never imports another test module.

Paths       ROOT (the repository), APP (app.py), CORPUS (tests/corpus), GOLDEN (tests/golden)
Logs        TINY_NODE_LOG / TINY_T0 (3 nodes, figures counted by hand in tests/unit/test_idle_fragments.py);
            swf(jobs) / SMALL / SWF_T0 / SACCT (the small job logs of tests/unit/test_idle_views.py);
            CORPUS_WHERE (tests/corpus/ file -> what its refusal must name)
Allocators  instances (hypothesis strategy), check_result (invariants of one result), same,
            EDGES / OPTION_SETS (the differential tests' edge cases and option sets), CURVES
Survival    frags(...) (Fragments from arrays), synthetic_fragments(seed) (long/short idle nodes)
App         app_load(body, filename, tmp_path) (what the Logs page does with an upload)
Browser     SHOTS (artifacts/screenshots), settle(page) (wait until Streamlit's run is over),
            need(ok, why) (skip locally, FAIL under CI=true: browser tests must run in CI)
Sweeps      series_cell(params) (a small real cell function, importable by sweep workers)
Tiers       seeds(n, fast) and examples(full, fast): random-instance batteries keep their full coverage
            under `-m slow` and run a small fixed sample in the default (fast) tier
Fixtures    built_once(config, tmp_path_factory, name, build, dest): a database file built once for
            all xdist workers and kept between runs under a sha256 of its inputs (summit_db, ingested_db)
"""

from __future__ import annotations

import math
import os
import random
import shutil
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import strategies as st

from planner.allocators import AllocOptions, AllocState, TrainerState
from planner.allocators.base import STATUSES, objective_of
from planner.errors import InputError
from planner.predict import survival as S
from planner.workload.trainers import Curve, imagenet_curves

ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "app.py")
GOLDEN = Path(__file__).resolve().parent / "golden"
SWF_T0 = 1609718400  # Monday 2021-01-04 00:00:00 UTC (the t = 0 of swf())

CORPUS = Path(__file__).resolve().parent / "corpus"

# tests/corpus/ file -> text its refusal must contain (the line or field, or the cause), where one
# exists: tests/unit/test_logs_corpus.py (library, in-process CLI), tests/unit/test_logs_hostile.py (subprocess)
CORPUS_WHERE = {
    "bad_nodelist.sacct": "line 2, field 'NodeList'",
    "bad_time.csv": "line 3",
    "before_1970.csv": "line 2, field 'start'",
    "before_1970.swf": "line 3",
    "binary_junk.dat": "line 1",
    "binary_nul.bin": "binary file",
    "empty.csv": "empty",
    "end_before_start.sacct": "line 2",
    "far_future.sacct": "line 3, field 'End'",
    "far_future_epoch.csv": "line 3, field 'end'",
    "far_future_iso.csv": "line 4, field 'time'",
    "header_only.csv": "header only",
    "header_only.sacct": "header only",
    "huge_hostlist.sacct": "line 2, field 'NodeList'",
    "huge_job.csv": "exceeds the limit",
    "huge_machine.swf": "field 'machine-nodes'",
    "huge_nodes_1e20.csv": "line 3, field 'nodes'",
    "huge_procs.swf": "line 2, field 'field 5 (allocated procs)'",
    "idle_not_binary.csv": "line 4",
    "inf_end.csv": "line 3",
    "inf_run.swf": "line 3",
    "inf_time.csv": "line 3, field 'time'",
    "letters_in_range.sacct": "line 2, field 'NodeList'",
    "misnamed_column.csv": "field 'end'",
    "missing_idle_column.csv": "missing column",
    "missing_nodelist.sacct": "field 'NodeList'",
    "nan_nodes.csv": "line 3, field 'nodes'",
    "nan_time.csv": "line 3",
    "negative_run.csv": "line 3",
    "negative_wait.swf": "line 3",
    "nodelist_count_mismatch.sacct": "line 3",
    "oversubscribed.swf": "field 'machine-nodes'",
    "semicolon_delimiter.csv": "separated by ';'",
    "short_row.swf": "line 3",
    "tab_delimiter.csv": "separated by tabs",
    "text_in_idle.csv": "line 4",
    "text_in_nnodes.sacct": "line 2",
    "text_in_nodes.csv": "line 2",
    "text_in_run.swf": "line 3",
    "time_backwards.csv": "line 5",
    "truncated.csv.gz": "gzip",
    "unknown_format.txt": "line 1",
    "zero_durations.csv": "no usable jobs",
    "zero_runs.swf": "no usable jobs",
}

# t = 0 is 2021-01-01 00:00:00 UTC. a idle [0,1200) and [1800,3600); b idle [600,1800);
# c idle [0,1200) and [2400,3600); b's row at 3600 is at the log end (zero length).
TINY_NODE_LOG = """time,node,idle
2021-01-01 00:00:00,a,1
2021-01-01 00:00:00,b,0
2021-01-01 00:00:00,c,1
2021-01-01 00:10:00,b,1
2021-01-01 00:20:00,a,0
2021-01-01 00:20:00,c,0
2021-01-01 00:30:00,a,1
2021-01-01 00:30:00,b,0
2021-01-01 00:40:00,c,1
2021-01-01 00:40:00,c,1
2021-01-01 01:00:00,b,1
"""
TINY_T0 = 1609459200.0  # 2021-01-01T00:00:00Z



EDGES = ["empty-pool", "more-trainers", "nmin-above-pool", "flat-curves", "zero-curves", "preempted"]


OPTION_SETS = [
    AllocOptions(),
    AllocOptions(pow2=True, tfwd_s=600.0),
    AllocOptions(objective="progress", pj_max=2),
    AllocOptions(objective="priority", tfwd_s=30.0),
    AllocOptions(objective="scaling-efficiency", pj_max=1),
]


def same(a: float, b: float, gap: float = 1e-6) -> bool:
    return abs(a - b) <= gap * max(1.0, abs(a), abs(b))


CURVES = list(imagenet_curves().values())


@st.composite
def instances(draw, max_jobs=4, max_pool=12):
    P = draw(st.integers(0, max_pool))
    universe = P + 4
    pool = sorted(draw(st.sets(st.integers(0, universe - 1), min_size=P, max_size=P)))
    J = draw(st.integers(1, max_jobs))
    taken: set[int] = set()
    trainers = []
    for j in range(J):
        nmin = draw(st.integers(1, 4))
        nmax = draw(st.integers(nmin, nmin + 8))
        kind = draw(st.sampled_from(["shipped", "own", "flat", "zero"]))
        if kind == "shipped":
            curve = draw(st.sampled_from(CURVES))
        elif kind == "own":
            pts = sorted(draw(st.sets(st.integers(1, 12), min_size=1, max_size=4)))
            vals = draw(st.lists(st.floats(0, 5000, allow_nan=False), min_size=len(pts), max_size=len(pts)))
            curve = Curve(tuple(pts), tuple(vals))  # may be non-monotone and non-concave
        elif kind == "flat":
            v = draw(st.floats(1, 5000))
            curve = Curve((0, 1, 64), (0.0, v, v))
        else:
            curve = Curve((0, 1), (0.0, 0.0))
        # current nodes: some in the pool, some gone (preempted), disjoint across Trainers
        cand = [x for x in range(universe) if x not in taken]
        cur = draw(st.lists(st.sampled_from(cand), unique=True, max_size=min(len(cand), nmax + 2))) if cand else []
        taken.update(cur)
        trainers.append(TrainerState(
            id=f"t{j}", nmin=nmin, nmax=nmax, curve=curve, current=tuple(sorted(cur)),
            rup_s=draw(st.sampled_from([0.0, 1.0, 18.0, 60.0])), rdw_s=draw(st.sampled_from([0.0, 12.0, 40.0])),
            remaining_samples=draw(st.sampled_from([math.inf, 1e4, 1e6, 1e8])),
            priority=draw(st.sampled_from([0.5, 1.0, 2.0])), submit_s=float(draw(st.integers(0, 3))),
            running_s=float(draw(st.integers(0, 100))),
        ))
    opts = AllocOptions(
        tfwd_s=draw(st.sampled_from([1.0, 120.0, 600.0])),
        objective=draw(st.sampled_from(["throughput", "scaling-efficiency", "priority", "progress"])),
        pow2=draw(st.booleans()),
        pj_max=draw(st.sampled_from([None, None, 1, 2])),
        time_limit_s=20.0,
    )
    return AllocState(pool=tuple(pool), trainers=tuple(trainers)), opts


def check_result(state: AllocState, opts: AllocOptions, res) -> None:
    pool = set(state.pool)
    assert res.status in STATUSES
    assert set(res.counts) == {t.id for t in state.trainers}
    # capacity: a node serves at most one Trainer, only pool nodes are used
    used = [n for nodes in res.node_map.values() for n in nodes]
    assert len(used) == len(set(used))
    assert set(used) <= pool
    assert sum(res.counts.values()) <= len(pool)
    running = 0
    for t in state.trainers:
        k = res.counts[t.id]
        assert len(res.node_map[t.id]) == k
        # bounds: 0 or Nmin..Nmax, powers of two with pow2
        assert k == 0 or t.nmin <= k <= t.nmax
        if opts.pow2 and k:
            assert k & (k - 1) == 0
        running += k > 0
        # no migration: only grow (keep all held pool nodes) or only shrink (take no new node)
        mine, held = set(res.node_map[t.id]), set(t.current) & pool
        assert mine >= held or mine <= held, (t.id, sorted(held), sorted(mine))
    if opts.pj_max is not None:
        assert running <= opts.pj_max
    assert res.objective == pytest.approx(objective_of(state, res.counts, opts), rel=1e-9, abs=1e-9)


def swf(jobs, machine=10) -> str:
    """SWF text: jobs = [(submit, wait, run, nodes, partition)], queue = partition."""
    lines = [f"; UnixStartTime: {SWF_T0}", f"; MaxNodes: {machine}", f"; MaxProcs: {machine}"]
    for i, (sub, wait, run, n, part) in enumerate(jobs, 1):
        lines.append(f"{i} {sub} {wait} {run} {n} -1 -1 {n} -1 -1 1 1 1 1 {part} {part} -1 -1")
    return "\n".join(lines) + "\n"


SMALL = [(0, 0, 9000, 4, 1), (0, 3600, 3600, 6, 2), (5400, 3600, 1800, 8, 1), (0, 1800, 1800, 2, 3)]


# sacct, exact node identity: n1, n2 held by J1 (batch) [0, 2 h); n3 by J2 (debug) [0, 1 h) and J3
# (batch) [1 h, 1.5 h): home debug (1 h > 0.5 h), idle [1.5 h, 2 h); n4 by J4 (gpu) [0, 0.5 h):
# idle [0.5 h, 2 h). Idle: debug 0.5, gpu 1.5 node-h (batch none).
SACCT = """JobID|Submit|Start|End|NNodes|NodeList|Partition
1|2021-01-04T00:00:00|2021-01-04T00:00:00|2021-01-04T02:00:00|2|n[1-2]|batch
2|2021-01-04T00:00:00|2021-01-04T00:00:00|2021-01-04T01:00:00|1|n3|debug
3|2021-01-04T00:30:00|2021-01-04T01:00:00|2021-01-04T01:30:00|1|n3|batch
4|2021-01-04T00:00:00|2021-01-04T00:00:00|2021-01-04T00:30:00|1|n4|gpu
"""


def frags(node, start, end, t1, nodes=None, closed=None):
    node, start, end = (np.asarray(a) for a in (node, start, end))
    nodes = nodes or int(node.max()) + 1
    closed = end < t1 if closed is None else np.asarray(closed)
    # N(t): +1 at each start, -1 at each closed end
    t = np.r_[start, end[closed]]
    d = np.r_[np.ones(len(start)), -np.ones(closed.sum())]
    o = np.argsort(t, kind="stable")
    ut, idx = np.unique(t[o], return_index=True)
    cum = np.cumsum(d[o])[np.r_[idx[1:] - 1, len(o) - 1]]
    st_, sn = np.r_[TINY_T0, ut], np.r_[0, cum].astype(np.int64)
    return S.Fragments(node=node.astype(np.int64), start=start.astype(float), end=end.astype(float),
                       closed=closed, t0=TINY_T0, t1=t1, nodes=nodes, st=st_, sn=sn)


def synthetic_fragments(seed=0, n_nodes=60, hours=48):
    """Nodes alternate idle/busy; a node's idle periods are long or short by node."""
    rng = np.random.default_rng(seed)
    t1 = TINY_T0 + hours * 3600
    node, start, end = [], [], []
    for k in range(n_nodes):
        scale = 300 if k % 2 else 3000
        t = TINY_T0 + rng.uniform(0, 600)
        while t < t1:
            ln = rng.exponential(scale) + 10
            node.append(k), start.append(t), end.append(min(t + ln, t1))
            t += ln + rng.exponential(600) + 10
    return frags(node, start, end, t1=t1, nodes=n_nodes)


def app_load(body: bytes, user_filename: str, tmp_path):
    """What the Logs page does: store the upload under a server name, load it in the worker's
    job (appkit.jobs.job_ingest); an error comes back through jobs._clean (no server paths)."""
    from appkit import data, jobs

    path = data.save_upload(body, user_filename, tmp_path / "uploads")
    (tmp_path / "logs").mkdir(exist_ok=True)
    spec = {"upload": str(path), "user_filename": user_filename, "log_name": data.log_name_for(user_filename),
            "out": str(tmp_path / "logs" / "log.duckdb")}
    try:
        return jobs.job_ingest(spec, lambda *a: None), path
    except InputError as e:
        raise InputError(jobs._clean(str(e), spec)) from None


def _inputs_key(*extra: str) -> str:
    """sha256 of what a built database depends on: every file of planner/ (its code and the
    shipped logs in planner/datasets/) and the versions of Python and the libraries it reads with."""
    import hashlib
    from importlib.metadata import version

    libs = [f"{d}=={version(d)}" for d in ("duckdb", "numpy", "pandas", "pyarrow")]
    h = hashlib.sha256("\0".join([sys.version, *libs, *extra]).encode())
    root = ROOT / "planner"
    for p in sorted(root.rglob("*")):
        if p.is_file() and "__pycache__" not in p.parts:
            h.update(b"\0" + p.relative_to(root).as_posix().encode() + b"\0" + p.read_bytes())
    return h.hexdigest()


def _cache_dir(config, tmp_path_factory) -> Path:
    """pytest's cache (.pytest_cache/d/, kept between runs; `pytest --cache-clear` empties it), or
    without the cache plugin (-p no:cacheprovider) this run's temp folder, which xdist's workers share."""
    if getattr(config, "cache", None) is not None:
        return config.cache.mkdir("planner-dbs")
    base = tmp_path_factory.getbasetemp()
    return (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "planner-dbs"


def built_once(config, tmp_path_factory, name: str, build, dest: Path) -> Path:
    """Copy to `dest` the file build(path) writes, built once for all xdist workers and kept between
    runs under a key of its inputs (_inputs_key): a changed file of planner/, of the test file that
    defines `build` or of this one, or another library version builds it anew, so no stale file can
    be used. A file lock makes the other workers wait for the first one."""
    import fcntl
    import inspect

    cache = _cache_dir(config, tmp_path_factory)
    cache.mkdir(parents=True, exist_ok=True)
    code = [Path(inspect.getsourcefile(build)).read_text(), Path(__file__).read_text()]  # how it is built
    done = cache / f"{name}-{_inputs_key(name, *code)[:32]}.duckdb"
    with open(cache / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            for old in cache.glob(f"{name}-*"):  # the files of older inputs
                old.unlink()
            part = cache / f"{name}.partial.duckdb"
            for f in (part, part.with_name(part.name + ".wal")):  # a killed build's (DuckDB would replay its WAL)
                f.unlink(missing_ok=True)
            build(part)
            part.rename(done)  # complete or absent: a build killed half-way leaves only .partial
        shutil.copyfile(done, dest)
    return dest


SHOTS = ROOT / "artifacts" / "screenshots"


def settle(pg):
    """Wait until Streamlit's script run is over (no 'Running...' status widget)."""
    pg.wait_for_timeout(300)
    pg.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidgetRunningIcon\"]')",
                         timeout=120_000)


def settled(pg, timeout: int = 120_000):
    """Wait until the script run is over and no element of an earlier run is left on the page. Count
    elements after this, not after `settle`: a click's rerun can start after settle's 300 ms (under load),
    and while it runs the page holds the new elements beside the earlier run's (Streamlit marks those
    data-stale="true" until the run ends): the Idle page's 10 charts were once counted as 12."""
    pg.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidgetRunningIcon\"]') "
                         "&& !document.querySelector('[data-stale=\"true\"]')", timeout=timeout)


def need(ok: bool, why: str):
    if not ok:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{why} (CI=true: the browser test must run)")
        pytest.skip(why)


def seeds(n: int, fast: int = 3) -> list:
    """range(n) as pytest parameters: a fixed sample of `fast` seeds (always the same, chosen with
    random.Random(n)) in the default tier, the other n - fast marked slow (`-m slow` runs them), so
    the two tiers together run every seed once."""
    sample = set(random.Random(n).sample(range(n), min(fast, n)))
    return [pytest.param(s) if s in sample else pytest.param(s, marks=pytest.mark.slow) for s in range(n)]


def examples(full: int, fast: int = 10) -> list:
    """Hypothesis budgets as pytest parameters: `fast` examples in the default tier, `full` under
    `-m slow`. Use as @pytest.mark.parametrize("budget", examples(150)) and build the @given test
    inside with settings(max_examples=budget)."""
    return [pytest.param(fast, id=f"{fast}-examples"),
            pytest.param(full, id=f"{full}-examples", marks=pytest.mark.slow)]


def series_cell(params: dict) -> dict:
    """A deterministic computation over the cell's params: partial sums of a decaying series.

    Fails (ValueError) when params['n'] is negative, so error handling can be tested; kills its
    own process (SIGKILL) when params['n'] == params['die_at'].
    """
    n = int(params["n"])
    rate = float(params.get("rate", 1.0))
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    total = sum(math.exp(-rate * k / max(n, 1)) for k in range(n))
    if params.get("die_at") is not None and n == int(params["die_at"]):
        import signal

        os.kill(os.getpid(), signal.SIGKILL)  # like the out-of-memory killer
    delay = float(params.get("sleep_s", 0.0))
    if delay:
        time.sleep(delay)
    return {"n_terms": n, "total": total, "nested": {"max": n * rate, "min": 0.0},
            "label": f"n{n}", "pid": os.getpid()}


WALL_FIELDS = frozenset({"wall_s", "solve_s", "build_s"})  # wall-clock seconds: may differ between equal runs


def assert_same_run(a, b, ignore=WALL_FIELDS) -> None:
    """Two SimResults equal float for float: summary and every table, but for the `ignore` fields."""
    import pandas as pd

    assert {k: v for k, v in a.summary.items() if k not in ignore} == \
        {k: v for k, v in b.summary.items() if k not in ignore}
    for t in ("timeline", "trainers", "decisions", "preemptions"):
        fa, fb = getattr(a, t), getattr(b, t)
        keep = [c for c in fa.columns if c not in ignore]
        pd.testing.assert_frame_equal(fa[keep], fb[keep], check_exact=True)


# A job log with an outage and a warm-up, counted by hand (tests/unit/test_idle_split.py, the Idle
# page's toggles in tests/app/test_page_idle_toggles.py). SWF, 10 nodes, 20 h from OUTAGE_T0:
#   J1 2 nodes 0-8 h; J2 7 nodes 2-8 h; J3 9 nodes submitted at 7 h, started at 11 h, ends 20 h.
# idle node-h: 0-2 h 16 (the warm-up), 2-8 h 6, 8-11 h 30 (no job running while J3 waits: an
# outage), 11-20 h 9: 61 in all; harvestable 6 + 9 = 15; with the outage 45; with both 61.
OUTAGE_T0 = 1_700_000_000
OUTAGE_SWF = "\n".join([
    "; MaxNodes: 10",
    "; MaxProcs: 10",
    f"; UnixStartTime: {OUTAGE_T0}",
    # job submit wait run procs cpu mem reqprocs reqtime reqmem status user group app queue part prev think
    f"1 0 0 {8 * 3600} 2 -1 -1 2 -1 -1 1 1 1 1 1 1 -1 -1",
    f"2 {2 * 3600} 0 {6 * 3600} 7 -1 -1 7 -1 -1 1 1 1 1 1 1 -1 -1",
    f"3 {7 * 3600} {4 * 3600} {9 * 3600} 9 -1 -1 9 -1 -1 1 1 1 1 1 1 -1 -1",
]) + "\n"


def pictures(at) -> list[str]:
    """The SVG text of every static picture on an AppTest page (st.image of an SVG: a data URL)."""
    import base64  # lazy: AppTest pages only

    out = []
    for el in at.get("image"):
        for img in el.proto.imgs:
            if img.url.startswith("data:image/svg+xml;base64,"):
                out.append(base64.b64decode(img.url.split(",", 1)[1]).decode())
    return out
