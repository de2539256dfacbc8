"""The Slurm JSON adapter (planner.logs.slurm_json) and the harvestable rule (planner.idle.states) on
JSON captured from a real Slurm 22.05 cluster, and on the same documents in later releases' spelling."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from planner import logs
from planner.errors import InputError
from planner.idle import states as S
from planner.live.store import by_partition, view
from planner.logs import slurm_json
from planner.store import db

DATA = Path(__file__).parent / "data" / "slurm"


def _load(name):
    return json.loads((DATA / name).read_text())


def _newer(doc):
    """The same document as Slurm 23.02+ writes it: state lists, numbers as {set, infinite, number}."""
    d = copy.deepcopy(doc)
    d["meta"] = {"plugin": {"type": "openapi/slurmctld", "name": "Slurm OpenAPI slurmctld",
                            "data_parser": "data_parser/v0.0.40"},
                 "slurm": {"version": {"major": "23", "micro": "4", "minor": "11"}, "release": "23.11.4"}}

    def n(v):
        return {"set": True, "infinite": False, "number": v}
    for node in d.get("nodes", []):
        node["state"] = [node["state"].upper()] + list(node.pop("state_flags", []))
        node["alloc_cpus"] = node["alloc_cpus"]
    for j in d.get("jobs", []):
        if "job_state" in j:
            j["job_state"] = [j["job_state"]]
            for k in ("start_time", "end_time", "submit_time", "resize_time", "node_count"):
                j[k] = n(j[k])
        else:
            j["state"]["current"] = [j["state"]["current"]]
            j["time"] = {k: (n(v) if isinstance(v, int) else v) for k, v in j["time"].items()}
            j["allocation_nodes"] = n(j["allocation_nodes"])
    return d


@pytest.mark.parametrize("variant", ["22.05", "23.11"])
def test_sinfo_states_and_harvestable(variant):
    doc = _load("sinfo_22.05.json")
    if variant != "22.05":
        doc = _newer(doc)
    rows = {r.name: r for r in slurm_json.nodes(doc)}
    assert len(rows) == 8
    v = {n: view(r) for n, r in rows.items()}
    assert {n: x.state for n, x in v.items()} == {
        "node1": S.ALLOCATED, "node2": S.ALLOCATED, "node3": S.ALLOCATED, "node4": S.PLANNED_DOWN,
        "node5": S.DRAINED, "node6": S.RESERVED, "node7": S.ALLOCATED, "node8": S.DOWN}
    assert not any(x.harvestable for x in v.values())  # nothing idle without a flag in this snapshot
    assert v["node3"].free_cpus == 1 and v["node7"].free_cpus == 1  # mixed nodes: their free CPUs
    assert v["node5"].free_cpus == 0  # a drained node offers nothing
    parts = by_partition(list(v.values()))
    assert parts["batch"]["nodes"] == 6 and parts["batch"]["drained"] == 1 and parts["batch"]["reserved"] == 1
    assert parts["batch"]["free_cpus"] == 1 and parts["gpu"]["down"] == 1
    m = slurm_json.meta(doc)
    assert (m["plugin"], m["release"]) == (("openapi/v0.0.38", "22.05.8") if variant == "22.05"
                                           else ("openapi/slurmctld", "23.11.4"))


def test_the_rule_for_every_flag():
    def c(*w, parts=("batch",), harvest=None):
        return S.classify(set(w), parts, harvest)
    assert c("IDLE") == (S.IDLE, True)
    for flag, state in (("DRAIN", S.DRAINED), ("RESERVED", S.RESERVED), ("MAINTENANCE", S.PLANNED_DOWN),
                        ("POWERED_DOWN", S.DOWN), ("POWER_SAVE", S.DOWN), ("NOT_RESPONDING", S.DOWN),
                        ("REBOOT_REQUESTED", S.PLANNED_DOWN)):
        assert c("IDLE", flag) == (state, False), flag
    assert c("MIXED", "DRAIN") == (S.ALLOCATED, False)  # still running jobs: allocated, draining
    assert c("IDLE", harvest=("gpu",)) == (S.IDLE, False)  # idle, not in a harvestable partition
    assert c("IDLE", parts=("a", "gpu"), harvest=("gpu",)) == (S.IDLE, True)
    assert c("WEIRD") == (S.DOWN, False)  # unknown: never harvestable


@pytest.mark.parametrize("variant", ["22.05", "23.11"])
def test_squeue_jobs(variant):
    doc = _load("squeue_22.05.json")
    if variant != "22.05":
        doc = _newer(doc)
    jobs = {j.job_id: j for j in slurm_json.jobs(doc)}
    assert set(jobs) == {"1", "2", "3"}
    j1 = jobs["1"]
    assert j1.state == "RUNNING" and j1.nodes == "node[1-2]" and j1.node_count == 2 and j1.partition == "batch"
    assert j1.extra["resize_time"] and j1.extra["resize_time"] >= j1.start_s  # shrunk after it started


@pytest.mark.parametrize("variant", ["22.05", "23.11"])
def test_sacct_json_ingest_splits_resized_jobs_into_epochs(tmp_path, variant):
    doc = _load("sacct_22.05_resize.json")
    if variant != "22.05":
        doc = _newer(doc)
    p = tmp_path / f"sacct-{variant}.json"
    p.write_text(json.dumps(doc, indent=2))
    assert logs.detect_format(p) == "slurm_json"
    con = db.connect(":memory:")
    rep = logs.ingest(con, p)
    assert rep["format"] == "slurm_json" and rep["kind"] == "jobs"
    assert rep["skipped_why"] == {"duplicate records": 1, "never started": 1}
    assert any("RESIZING" in n for n in rep["notes"])
    rows = con.execute("SELECT job_id, start_s, end_s, nodes, node_list FROM jobs ORDER BY job_id, start_s").fetchall()
    t0 = 1795625000
    assert [(r[0], r[1] - t0, r[2] - t0, r[3]) for r in rows] == [
        ("1", 10, 40, 3), ("1", 40, 100, 1), ("2", 20, 80, 1), ("4", 90, 100, 2)]  # 4 running: to the log end
    # busy node-seconds: each epoch once (3*30 + 1*60 + 60 + 2*10), not the job's largest size for its whole run
    busy = con.execute("SELECT sum((end_s - start_s) * nodes) FROM jobs").fetchone()[0]
    assert busy == 90 + 60 + 60 + 20
    # node1 is busy without a gap across the resize; node2 and node3 come back at the resize
    fr = dict(con.execute("SELECT n.name, min(f.start_s) FROM fragments f JOIN nodes n USING (log_id, node_idx) "
                          "GROUP BY n.name").fetchall())
    assert fr["node2"] - t0 == 40 and fr["node3"] - t0 == 40 and "node1" not in fr  # busy to the log end


def test_bad_slurm_json_is_one_line(tmp_path):
    p = tmp_path / "s.json"
    p.write_text(json.dumps(_load("sinfo_22.05.json")))
    with pytest.raises(InputError, match="sinfo --json .*give a sacct --json dump"):
        logs.ingest(db.connect(":memory:"), p, format="slurm_json")
    p.write_text('{"meta": {}, "jobs": [\n{"job_id": 1,,}]}')
    with pytest.raises(InputError, match="not valid JSON") as e:
        logs.ingest(db.connect(":memory:"), p)
    assert "\n" not in str(e.value)
    assert slurm_json.num({"set": False, "number": 5}) is None and slurm_json.num({"infinite": True}) is None
    assert slurm_json.words("IDLE+DRAIN") == ["IDLE", "DRAIN"] and slurm_json._gpus("gpu:a100:4(S:0-1)") == 4
