"""`planner live` against a real Slurm (the session cluster of tests/e2e/conftest.py).

- a job started, shrunk (scontrol update NumNodes: RESIZING) and ended shows in the live log's
  node events and job events with the right states, within one poll of Slurm's own times; the
  same job's real `sacct --json --duplicates` (slurmdbd) loads through `planner ingest` as its two
  size epochs, each node-second once
- drained, reserved and maintenance nodes are not harvestable (and carry their idle-split state)
- killing slurmctld mid-run and restarting it (and restarting `planner live` itself) loses and
  duplicates no event
- the recommendations on a scripted sequence equal the allocator's answer on the same stored
  snapshot; with --execute the grow command really runs on the test cluster
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
INTERVAL = 1.0
IN_CI = os.environ.get("CI", "").lower() == "true"


def _env(cluster) -> dict:
    e = dict(os.environ)
    e.update(cluster["env"])
    e["PYTHONPATH"] = str(ROOT) + os.pathsep + e.get("PYTHONPATH", "")
    return e


def _start_live(cluster, db, log, *extra, interval=INTERVAL):
    return subprocess.Popen([sys.executable, "-m", "planner", "live", "--db", str(db), "--log", log, "--interval",
                             str(interval), "--json", *extra], env=_env(cluster), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=ROOT)


def _stop(p, timeout=30):
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=timeout)
    return p.returncode, out, err


def _q(db, sql, params=()):
    for _ in range(100):  # the writer holds the file only while it appends one poll
        try:
            con = duckdb.connect(str(db), read_only=True)
            break
        except duckdb.IOException:
            time.sleep(0.1)
    try:
        return con.execute(sql, list(params)).fetchall()
    finally:
        con.close()


def _wait_polls(db, log, n, timeout=60):
    end = time.time() + timeout
    while time.time() < end:
        if Path(db).exists():
            try:
                r = _q(db, "SELECT count(*) FROM live_polls p JOIN logs l USING (log_id) WHERE l.name = ? AND p.ok",
                       [log])
                if r and r[0][0] >= n:
                    return r[0][0]
            except duckdb.Error:
                pass
        time.sleep(0.2)
    raise AssertionError(f"fewer than {n} polls stored after {timeout} s")


def _polls(db, log):
    return _wait_polls(db, log, 0, timeout=5)


def _node_events(db, log):
    return _q(db, "SELECT n.name, e.t_s, e.idle FROM node_events e JOIN logs l USING (log_id) JOIN nodes n "
                  "ON n.log_id = e.log_id AND n.node_idx = e.node_idx WHERE l.name = ? ORDER BY e.t_s, n.name", [log])


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _hook_server(port):
    """A local HTTP server on port that keeps every POSTed JSON body (in a thread)."""
    import http.server
    import threading

    received = []

    class Hook(http.server.BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 - the http.server name
            received.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *a):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Hook)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    return server, received


def _no_repeats(events):
    """Change-only: per node, no two consecutive rows with the same state."""
    last = {}
    for name, _t, idle in events:
        assert last.get(name) != idle, f"duplicate state row for {name}"
        last[name] = idle


def test_job_start_shrink_end_shows_in_the_events(slurm_cluster, tmp_path):
    drv = slurm_cluster["driver"]
    db, log = tmp_path / "live.duckdb", "run1"
    p = _start_live(slurm_cluster, db, log)
    try:
        _wait_polls(db, log, 2)
        jid = drv.submit(3, seconds=600, partition="batch", name="elastic")
        j = drv.wait_state(jid, "RUNNING")
        started, hosts = float(j["start_time"]), drv.sh("scontrol", "show", "hostnames", j["nodes"]).split()
        n0 = _polls(db, log)
        _wait_polls(db, log, n0 + 3)
        drv.resize(jid, 1)
        j = drv.wait_state(jid, "RUNNING")
        assert j["node_count"] == 1
        resized = float(j["resize_time"])
        kept = drv.sh("scontrol", "show", "hostnames", j["nodes"]).split()
        released = sorted(set(hosts) - set(kept))
        drv.wait_nodes(lambda st: all(st[h] == "idle" for h in released))
        n0 = _polls(db, log)
        _wait_polls(db, log, n0 + 3)
        drv.cancel(jid)
        drv.wait_nodes(lambda st: all(st[h] == "idle" for h in hosts))
        ended = time.time()
        n0 = _polls(db, log)
        _wait_polls(db, log, n0 + 3)
    finally:
        rc, out, err = _stop(p)
    assert rc == 0, err
    summary = json.loads(out.strip().splitlines()[-1])
    assert summary["type"] == "summary" and summary["polls"] >= 10
    if slurm_cluster["accounting"]:  # sacct works here (the site without one: the drained test)
        assert "sacct unavailable" not in err, err
    ev = _node_events(db, log)
    _no_repeats(ev)
    by = {}
    for name, t, idle in ev:
        by.setdefault(name, []).append((t, idle))
    # within one poll: the poll that recorded a change came after it, the poll before did not see it
    # (a snapshot's time is when sinfo answered; Slurm's own times are whole seconds: 1 s slack)
    polls = [t for (t,) in _q(db, "SELECT p.t_s FROM live_polls p JOIN logs l USING (log_id) WHERE l.name = ? "
                                  "AND p.ok ORDER BY p.t_s", [log])]

    def within_one_poll(t_ev, true):
        prev = max(t for t in polls if t < t_ev)
        return prev - 1 <= true <= t_ev + 1

    first_busy = {}
    for h in hosts:
        busy = [t for t, idle in by[h] if not idle]
        assert busy and within_one_poll(busy[0], started), (h, busy, started)
        first_busy[h] = busy[0]
    # back to idle: the idle rows after the node was seen busy. Not "after `started`": Slurm's times are
    # whole seconds, so a job started in the log's first second (start_time 837 for a start at 837.7)
    # precedes the first poll's rows (837.09: every node idle), which a rehearsal once took for the return
    for h in released:
        back = [t for t, idle in by[h] if idle and t > first_busy[h]]
        assert back and within_one_poll(back[0], resized), (h, back, resized)
    back = [t for t, idle in by[kept[0]] if idle and t > first_busy[kept[0]]]
    assert back and max(t for t in polls if t < back[0]) <= ended + 1  # seen by the first poll after it
    jev = _q(db, "SELECT event, state, node_count, t_s FROM live_job_events e JOIN logs l USING (log_id) "
                 "WHERE l.name = ? AND job_id = ? ORDER BY t_s", [log, jid])
    kinds = [r[0] for r in jev]
    assert [k for k in kinds if k in ("started", "resized", "ended")] == ["started", "resized", "ended"], jev
    assert set(kinds) <= {"submitted", "started", "resized", "state", "ended"}  # 'state': e.g. COMPLETING
    st, rs, en = (next(r for r in jev if r[0] == k) for k in ("started", "resized", "ended"))
    assert st[1] == "RUNNING" and st[2] == 3 and rs[2] == 1 and en[1] == "CANCELLED"
    assert within_one_poll(st[3], started) and within_one_poll(rs[3], resized)
    if slurm_cluster["accounting"]:
        _sacct_epochs_load(slurm_cluster, tmp_path, jid, started, resized, hosts, kept)
    elif IN_CI:
        pytest.fail("the cluster has no accounting under CI=true")
    # the schema the replay reads: planner fragments works on the live log
    r = subprocess.run([sys.executable, "-m", "planner", "fragments", "--db", str(db), "--log", log, "--json"],
                       env=_env(slurm_cluster), capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert r.returncode == 0, r.stderr
    fr = json.loads(r.stdout)
    assert fr["nodes"] == 8 and fr["leave_events"] >= 1 and fr["join_events"] >= 2
    for cmd in (["simulate", "--pool-size", "6"], ["profile"]):  # and the replay and the operator views
        r = subprocess.run([sys.executable, "-m", "planner", *cmd, "--db", str(db), "--log", log, "--json"],
                           env=_env(slurm_cluster), capture_output=True, text=True, cwd=ROOT, timeout=300)
        assert r.returncode == 0, (cmd, r.stderr)
        assert json.loads(r.stdout)["log"] == log


def _sacct_epochs_load(cluster, tmp_path, jid, started, resized, hosts, kept):
    """The job's records as slurmdbd wrote them, ingested: one row per size epoch."""
    drv = cluster["driver"]
    end = time.time() + 60
    while True:  # slurmctld hands records to slurmdbd asynchronously: wait for the final one
        doc = json.loads(drv.sh("sacct", "--json", "--duplicates", "-X", "-j", jid))
        recs = [j for j in doc["jobs"] if str(j["job_id"]) == jid]
        states = [j["state"]["current"] for j in recs]
        if states == ["RESIZING", "CANCELLED"]:
            break
        assert time.time() < end, f"sacct records of job {jid}: {states}"
        time.sleep(0.5)
    assert doc["meta"]["plugin"]["type"] == "openapi/dbv0.0.38"
    p = tmp_path / "sacct.json"
    p.write_text(json.dumps(doc))
    db = tmp_path / "acct.duckdb"
    r = subprocess.run([sys.executable, "-m", "planner", "ingest", str(p), "--db", str(db), "--name", "acct"],
                       env=_env(cluster), capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert r.returncode == 0, r.stderr
    rows = _q(db, "SELECT start_s, end_s, nodes, node_list FROM jobs ORDER BY start_s")
    t_end = float(recs[1]["time"]["end"])
    assert [(a, b, n) for a, b, n, _ in rows] == [(started, resized, 3), (resized, t_end, 1)], (rows, recs)
    from planner.logs.hostlist import expand
    assert sorted(expand(rows[0][3])) == sorted(hosts) and expand(rows[1][3]) == kept
    busy = _q(db, "SELECT sum((end_s - start_s) * nodes) FROM jobs")[0][0]
    assert busy == 3 * (resized - started) + (t_end - resized)  # each node-second once


def test_drained_reserved_and_maintenance_nodes_are_not_harvestable(slurm_cluster, tmp_path):
    from planner.live import runner
    from planner.live.source import CliSource

    drv = slurm_cluster["driver"]
    drv.drain("node2")
    drv.reserve("hp_resv", "node3")
    drv.reserve("hp_maint", "node4", maint=True)
    try:
        drv.wait_nodes(lambda st: st["node2"].startswith("drain") and st["node3"] == "resv" and st["node4"] == "maint")
        # as on a site without an accounting database: the client's slurm.conf names none
        conf = tmp_path / "slurm.conf"
        conf.write_text("\n".join("AccountingStorageType=accounting_storage/none" if ln.startswith(
            "AccountingStorage") else ln for ln in Path(slurm_cluster["conf"]).read_text().splitlines()
            if not ln.startswith(("AccountingStorageHost", "AccountingStoragePort"))) + "\n")
        said = []
        poller = runner.Poller(tmp_path / "l.duckdb", "states", CliSource({"SLURM_CONF": str(conf)}), ["batch"],
                               warn=said.append)
        out = poller.cycle()
        poller.cycle()
        assert len(said) == 1 and said[0].startswith("sacct unavailable"), said  # said once, polls go on
    finally:
        drv.resume("node2")
        drv.unreserve("hp_resv")
        drv.unreserve("hp_maint")
        # the cluster as this test found it before the next test polls it (node2 still draining was
        # recorded busy by the next test's first poll)
        drv.wait_nodes(lambda st: all(st[n] == "idle" for n in ("node2", "node3", "node4")), timeout=60)
    con = duckdb.connect(str(tmp_path / "l.duckdb"), read_only=True)
    rows = dict(con.execute("SELECT n.name, e.idle FROM node_events e JOIN nodes n USING (log_id, node_idx)")
                .fetchall())
    st = dict(con.execute("SELECT n.name, s.state FROM live_node_states s JOIN nodes n USING (log_id, node_idx)")
              .fetchall())
    con.close()
    assert st["node2"] == "drained" and st["node3"] == "reserved" and st["node4"] == "planned_down"
    assert not rows["node2"] and not rows["node3"] and not rows["node4"]
    assert rows["node1"] and rows["node5"] and rows["node6"]
    # idle gpu nodes are idle but not in a harvestable partition (--partitions batch)
    assert st["node7"] == "idle" and not rows["node7"] and not rows["node8"]
    assert out["harvestable"] == 3
    assert out["by_partition"]["batch"]["harvestable"] == 3 and out["by_partition"]["batch"]["drained"] == 1
    assert out["by_partition"]["gpu"]["offered"] is False


def test_killing_slurmctld_and_restarting_loses_and_duplicates_nothing(slurm_cluster, tmp_path):
    """slurmctld is SIGKILLed while a job runs, stays down until the job's processes have ended,
    and comes back; then `planner live` itself restarts. Slurm persists a job's start only with its
    next state save (Driver.save_state): the test kills the controller after that save, so Slurm's
    own account is deterministic (the job RUNNING when it died, COMPLETED once its node reports
    back); a kill before it makes Slurm forget the start, run the job again and drain its node
    ('Duplicate jobid'), which made this test flaky."""
    drv = slurm_cluster["driver"]
    db, log = tmp_path / "live.duckdb", "restart"
    job_s = 20  # long enough to outlast two polls and slurmctld's state save before the kill
    # every node idle before the advisor's first poll: node2, just resumed from the previous test's
    # drain, was recorded busy first, then idle ([False, True, False, True] in a CI rehearsal,
    # 2026-11-26), against the idle -> busy -> idle the assertions below expect
    drv.wait_nodes(lambda st: all(v == "idle" for v in st.values()), timeout=60)
    p = _start_live(slurm_cluster, db, log)
    jid = None
    try:
        _wait_polls(db, log, 2)
        jid = drv.submit(2, seconds=job_s, partition="batch", name="short")
        j = drv.wait_state(jid, "RUNNING")
        hosts = drv.sh("scontrol", "show", "hostnames", j["nodes"]).split()
        ends_at = float(j["start_time"]) + job_s  # its `sleep` ends then (start_time: whole seconds)
        n0 = _polls(db, log)
        _wait_polls(db, log, n0 + 2)
        drv.save_state(jid)
        assert time.time() < ends_at - 1, "the job would end before slurmctld is killed: nothing tested"
        drv.kill_ctld()  # mid-run: the job ends while nobody answers
        time.sleep(ends_at + 1 - time.time())  # the outage lasts until the job's processes have ended
        drv.start_ctld()
        # settled: every node re-registered (a restarted slurmctld shows them UNKNOWN until then)
        drv.wait_nodes(lambda st: all(v == "idle" for v in st.values()), timeout=60)
        assert drv.wait_state(jid, "COMPLETED", timeout=30)  # Slurm's own account: ran once, completed
        n0 = _polls(db, log)
        _wait_polls(db, log, n0 + 2)
        rc, out, err = _stop(p)  # and the advisor itself restarts
        assert rc == 0, err
        assert "Slurm not reachable" in err and "retrying in" in err
        lines = [ln for ln in err.splitlines() if "Slurm not reachable" in ln]
        assert all(len(ln) < 400 for ln in lines)
        before = _node_events(db, log)
        jid2 = drv.submit(1, seconds=600, partition="batch", name="after", nodelist="node6")
        drv.wait_state(jid2, "RUNNING")
        p = _start_live(slurm_cluster, db, log)
        _wait_polls(db, log, _polls(db, log) + 3)
        drv.cancel(jid2)
        drv.wait_nodes(lambda st: st["node6"] == "idle")
        _wait_polls(db, log, _polls(db, log) + 3)
    finally:
        drv.ensure_ctld()
        rc, out, err = _stop(p)
        truth = drv.wait_nodes(lambda st: not any(v.endswith("*") or v.startswith("unk") for v in st.values()),
                               timeout=60)  # the last stored state must be what Slurm says now
        for name, st in truth.items():
            if st.startswith("drain"):
                drv.resume(name)
    assert rc == 0, err
    assert all(v == "idle" for v in truth.values()), truth  # nothing drained, nothing down
    ev = _node_events(db, log)
    _no_repeats(ev)
    assert ev[:len(before)] == before  # nothing rewritten
    by = {}
    for name, _t, idle in ev:
        by.setdefault(name, []).append(idle)
    for h in hosts:  # idle -> busy -> idle: the end during the outage recorded once
        assert by[h] == [True, False, True], (h, by[h])
    for name, seq in by.items():
        assert seq[-1] == (truth[name] == "idle"), (name, seq, truth[name])
    assert by["node6"][-2:] == [False, True] and len(ev) - len(before) == 2
    # the job: started once, ended once (the end Slurm learnt after the restart), no second start
    jev = _q(db, "SELECT event, state FROM live_job_events e JOIN logs l USING (log_id) WHERE l.name = ? "
                 "AND job_id = ? ORDER BY t_s", [log, jid])
    assert [e for e, _ in jev if e in ("started", "ended")] == ["started", "ended"], jev
    fails = _q(db, "SELECT count(*) FROM live_polls p JOIN logs l USING (log_id) WHERE l.name = ? AND NOT p.ok", [log])
    assert fails[0][0] >= 1
    # the stored fragments (grown poll by poll, across both restarts) are those the loader computes
    # from the same events in one go
    import numpy as np

    from planner.logs.store import node_fragments
    lid, end_s = _q(db, "SELECT log_id, end_s FROM logs WHERE name = ?", [log])[0]
    e = _q(db, "SELECT t_s, node_idx, idle FROM node_events WHERE log_id = ? ORDER BY t_s, node_idx", [lid])
    fn, fs, fe = node_fragments(np.array([r[0] for r in e]), np.array([r[1] for r in e]),
                                np.array([r[2] for r in e]), end_s)
    stored = _q(db, "SELECT node_idx, start_s, end_s FROM fragments WHERE log_id = ? ORDER BY node_idx, start_s", [lid])
    assert stored == sorted(zip(fn.tolist(), fs.tolist(), fe.tolist()))


def test_recommendations_equal_the_allocators_answer_and_execute_grows(slurm_cluster, tmp_path, monkeypatch):
    from planner.allocators import AllocOptions, AllocState, allocate
    from planner.live import runner
    from planner.live.advisor import Advisor, load_jobs
    from planner.live.source import CliSource

    drv = slurm_cluster["driver"]
    monkeypatch.chdir(tmp_path)  # an executed sbatch writes its slurm-N.out here, not into the checkout
    el = drv.submit(1, seconds=600, partition="batch", name="trainer", nodelist="node1")
    drv.wait_state(el, "RUNNING")
    jobs_file = tmp_path / "jobs.json"
    jobs_file.write_text(json.dumps({"tfwd_s": 2, "trainers": [
        {"id": "a", "slurm_job": el, "model": "resnet18", "nmin": 1, "nmax": 4, "rup_s": 0.5, "rdw_s": 0.5,
         "worker": "--wrap=sleep 600"},
        {"id": "b", "slurm_job": "999999", "model": "vgg16", "nmin": 2, "nmax": 3, "rup_s": 0.5, "rdw_s": 0.5}]}))
    jobs, opts = load_jobs(jobs_file)
    db = tmp_path / "rec.duckdb"
    # the webhook: first a URL nobody listens on (each failed POST one line, kept, the poll goes on),
    # then a local HTTP server on that port receives every recommendation once, in order
    port = _free_port()
    hook = f"http://127.0.0.1:{port}/hook"
    warned = []
    poller = runner.Poller(db, "rec", CliSource(slurm_cluster["env"]), ["batch"], Advisor(jobs, "auto", opts),
                           webhook=hook, warn=warned.append)
    blocker = server = None
    seen = []
    try:
        seen.append(poller.cycle())
        assert seen[0]["recommendations"], "the first cycle recommends growing job a"
        assert len(warned) == 1 and warned[0].startswith(f"webhook {hook}:") and "\n" not in warned[0], warned
        assert "retried at the next poll" in warned[0] and len(poller.webhook_pending) == len(
            seen[0]["recommendations"])
        server, received = _hook_server(port)
        blocker = drv.submit(3, seconds=600, partition="batch", name="main", nodelist="node2,node3,node4")
        drv.wait_state(blocker, "RUNNING")
        seen.append(poller.cycle())
        drv.cancel(blocker)
        drv.wait_nodes(lambda st: all(st[h] == "idle" for h in ("node2", "node3", "node4")))
        seen.append(poller.cycle())
        recs = [r for s in seen for r in s["recommendations"]]
        assert recs, "the scripted sequence produced no recommendation"
        con = duckdb.connect(str(db), read_only=True)
        try:
            for s in seen:
                if not s["recommendations"]:
                    continue
                t = s["t_s"]
                names = [n for (n,) in con.execute("SELECT name FROM nodes ORDER BY node_idx").fetchall()]
                harv = [n for n, idle in con.execute(
                    "SELECT n.name, arg_max(e.idle, e.t_s) FROM node_events e JOIN nodes n USING (log_id, node_idx) "
                    "WHERE e.t_s <= ? GROUP BY n.name", [t]).fetchall() if idle]
                held = {"a": ["node1"], "b": []}
                idx = {n: i for i, n in enumerate(names)}
                pool = sorted({idx[n] for n in harv} | {idx["node1"]})
                from dataclasses import replace
                st = AllocState(pool=tuple(pool), trainers=tuple(
                    replace(j.trainer, current=tuple(idx[n] for n in held[j.id])) for j in jobs), now_s=t)
                want = allocate("auto", st, AllocOptions(**opts)).counts
                for r in s["recommendations"]:
                    assert r["to_nodes"] == want[r["job"]], (r, want)
                    assert r["from_nodes"] == len(held[r["job"]])
                    assert set(r["nodes_to_add"]) <= set(harv)
                    assert r["command"].startswith("sbatch") == (r["to_nodes"] > r["from_nodes"])
        finally:
            con.close()
        # advisory by default: nothing was submitted
        names_now = json.loads(drv.sh("squeue", "--json"))["jobs"]
        assert not any(j["name"].startswith("hp-grow-") for j in names_now)
        # with --execute (test cluster only) the grow command runs and the job then holds the nodes
        poller.execute = True
        poller.advisor._last_key = None
        out = poller.cycle()
        later = [out]
        grow = [r for r in out["recommendations"] if r["job"] == "a" and r["to_nodes"] > r["from_nodes"]]
        assert grow and grow[0]["executed"]["exit"] == 0, out["recommendations"]
        gid = grow[0]["executed"]["output"].split()[-1]
        drv.wait_state(gid, "RUNNING")
        poller.execute = False
        out = poller.cycle()
        later.append(out)
        from planner.live.advisor import held_nodes
        from planner.logs import slurm_json
        held = held_nodes(jobs, slurm_json.jobs(json.loads(drv.sh("squeue", "--json"))))
        assert set(grow[0]["nodes_to_add"]) <= set(held["a"])
        # scores once T_fwd has passed
        time.sleep(2.5)
        out = poller.cycle()
        later.append(out)
        assert out["scores"], "no recommendation was scored after its T_fwd"
        sc = out["scores"][0]
        assert {"stayed", "stayed_share", "hindsight_gain_samples", "best_gain_samples", "regret_samples"} <= set(sc)
        # the webhook got every recommendation of every cycle, once, in order (the kept ones first)
        sent = [r for s in [*seen, *later] for r in s["recommendations"]]
        assert [(r["time"], r["job"], r["to_nodes"]) for r in received] == \
            [(r["time"], r["job"], r["to_nodes"]) for r in sent]
        assert received[0] == json.loads(json.dumps(sent[0]))  # the same JSON the CLI prints
        assert len(warned) == 1 and not poller.webhook_pending and poller.stats["webhook_sent"] == len(sent)
    finally:
        if server is not None:
            server.shutdown()
            server.server_close()
        for j in json.loads(drv.sh("squeue", "--json"))["jobs"]:
            drv.cancel(str(j["job_id"]))
        drv.wait_nodes(lambda st: all(v == "idle" for v in st.values()), timeout=60)


def test_slurmrestd_gives_the_same_snapshot_as_the_client_commands(slurm_cluster, tmp_path, monkeypatch):
    from planner.live import runner
    from planner.live.source import CliSource, RestSource

    sc, drv = slurm_cluster["module"], slurm_cluster["driver"]
    if sc._which("slurmrestd") is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("slurmrestd is not installed; CI=true: the test must run")
        pytest.skip("slurmrestd is not installed (apt-get install slurmrestd)")
    url = sc.start_rest(Path(slurm_cluster["dir"]))
    jid = drv.submit(2, seconds=600, partition="batch", name="r", nodelist="node1,node2")
    drv.drain("node3")
    try:
        drv.wait_state(jid, "RUNNING")
        drv.wait_nodes(lambda st: st["node3"].startswith("drain"))
        outs = {}
        for kind, src in (("rest", RestSource(url)), ("cli", CliSource(slurm_cluster["env"]))):
            p = runner.Poller(tmp_path / f"{kind}.duckdb", "x", src, ["batch"], warn=lambda m: None)
            outs[kind] = p.cycle()
            con = duckdb.connect(str(tmp_path / f"{kind}.duckdb"), read_only=True)
            outs[kind]["states"] = sorted(con.execute(
                "SELECT n.name, s.state, s.words FROM live_node_states s JOIN nodes n USING (log_id, node_idx)")
                .fetchall())
            outs[kind]["jobs"] = sorted(con.execute("SELECT job_id, event, node_count FROM live_job_events").fetchall())
            outs[kind]["meta"] = json.loads(con.execute("SELECT meta FROM live_polls").fetchone()[0])
            con.close()
        assert outs["rest"]["states"] == outs["cli"]["states"]
        assert outs["rest"]["harvestable"] == outs["cli"]["harvestable"] == 3  # node4-6
        assert (jid, "started", 2) in outs["rest"]["jobs"]
        assert outs["rest"]["meta"]["source"] == "rest" and outs["rest"]["meta"]["version"] == "v0.0.38"
        assert outs["rest"]["meta"]["sinfo"]["plugin"] == "openapi/v0.0.38"
        # the command line with --rest: records, then stops on --for with exit 0
        r = subprocess.run([sys.executable, "-m", "planner", "live", "--db", str(tmp_path / "cli-rest.duckdb"),
                            "--rest", url, "--interval", "1", "--for", "3", "--json"], env=_env(slurm_cluster),
                           capture_output=True, text=True, cwd=ROOT, timeout=120)
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout.strip().splitlines()[-1])["polls"] >= 2
        # over HTTP with rest_auth/jwt: the token of `scontrol token` in $SLURM_JWT (as an operator
        # sets it); without one, HTTP 401 in one line
        if slurm_cluster["jwt"]:
            from planner.live.source import SlurmUnreachable

            http_url = sc.start_rest(Path(slurm_cluster["dir"]), jwt=True)
            monkeypatch.setenv("SLURM_JWT", drv.token())
            p = runner.Poller(tmp_path / "jwt.duckdb", "x", RestSource(http_url), ["batch"], warn=lambda m: None)
            o = p.cycle()
            assert o["harvestable"] == outs["rest"]["harvestable"] and p.source.version == "v0.0.38"
            monkeypatch.delenv("SLURM_JWT")
            with pytest.raises(SlurmUnreachable, match="HTTP 401") as e:
                RestSource(http_url).poll()
            assert "\n" not in str(e.value) and len(str(e.value)) < 400
        elif IN_CI:
            pytest.fail("the cluster has no auth/jwt under CI=true")
    finally:
        drv.cancel(jid)
        drv.resume("node3")
        sc.kill_daemon(Path(slurm_cluster["dir"]), "slurmrestd")
        sc.kill_daemon(Path(slurm_cluster["dir"]), "slurmrestd-jwt")


def test_unreachable_slurm_is_one_line_and_retried(tmp_path):
    """No controller at all (a slurm.conf naming a port nobody listens on): one line per failed poll,
    back-off, exit 0 at --for, nothing recorded but the failures."""
    conf = tmp_path / "slurm.conf"
    conf.write_text("ClusterName=nobody\nSlurmctldHost=localhost(127.0.0.1)\nSlurmctldPort=1\nAuthType=auth/none\n"
                    "CredType=cred/none\nMessageTimeout=2\nNodeName=n1 CPUs=1\nPartitionName=p Nodes=n1\n")
    e = dict(os.environ, SLURM_CONF=str(conf), PYTHONPATH=str(ROOT))
    r = subprocess.run([sys.executable, "-m", "planner", "live", "--db", str(tmp_path / "u.duckdb"), "--interval",
                        "1", "--for", "6", "--json"], env=e, capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert r.returncode == 0, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if "Slurm not reachable" in ln]
    assert lines and all(len(ln) < 400 for ln in lines), r.stderr
    delays = [float(ln.rsplit("retrying in ", 1)[1].split()[0]) for ln in lines]
    assert delays[:3] == sorted(delays[:3]) and (len(delays) < 2 or delays[1] == 2 * delays[0])
    summary = json.loads(r.stdout.strip().splitlines()[-1])
    assert summary["polls"] == 0 and summary["failed_polls"] == len(lines)
