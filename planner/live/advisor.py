"""Recommendations for elastic jobs on a live cluster: the planner's allocators on the harvestable nodes.

The jobs file (JSON, the instance format of planner.allocators.instances without a pool):

    {"tfwd_s": 600, "objective": "throughput",
     "trainers": [{"id": "resnet", "slurm_job": "42", "model": "resnet50", "nmin": 1, "nmax": 8,
                   "rup_s": 18, "rdw_s": 12, "worker": "/path/worker.sh"}]}

`slurm_job` (default: `id`) is the Slurm job the elastic job runs as; its nodes, and those of its
grow jobs (Slurm jobs named `hp-grow-<id>`), are the nodes it holds. `worker` is the batch script a
grow job runs (default: `--wrap` of a placeholder the operator replaces).

At every change of the harvestable set or of what the jobs hold, the allocator (`auto` by default,
planner.allocators.allocate) decides the target sizes on pool = harvestable nodes + nodes the jobs
hold, with T_fwd = tfwd_s. Which nodes: the survival model's P(node stays idle >= T_fwd)
(planner.predict.survival: S(T | x) of the Cox model, x = the node's time already harvestable, hour,
weekday, idle share, history); a growing job takes the free nodes most likely to stay, a shrinking
one releases the nodes least likely to (planner.predict.replay_hooks.ranked_map). One JSON line per
job whose size changes:

    {time, job, from_nodes, to_nodes, nodes_to_add, nodes_to_release, p_stays_idle,
     expected_gain_samples, command, allocator, tfwd_s, status}

p_stays_idle: the mean P over nodes_to_add (null when none are added). expected_gain_samples: the
allocator's objective gain of the move for this job, T_fwd*O(to) - T_fwd*O(from) - rescale cost
(O(from)*Rup when growing, O(from)*Rdw when shrinking; planner.allocators.base.level_value).
command: `scontrol update JobId=<slurm_job> NumNodes=<to>` to shrink; to grow, an `sbatch` of one
worker job on the added nodes. Advisory: nothing runs unless the caller executes the commands.
"""

from __future__ import annotations

import json
import math
import shlex
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from planner.allocators import AllocOptions, AllocState, allocate
from planner.allocators.base import level_value
from planner.allocators.instances import MAX_INSTANCE_BYTES, parse_instance
from planner.errors import InputError
from planner.logs.hostlist import expand
from planner.predict.replay_hooks import ranked_map
from planner.predict.survival import feature_matrix

GROW_PREFIX = "hp-grow-"
ADVISOR_TFWD_S = 600.0  # T_fwd of a live advice (10 min: a live cluster's look-ahead, not the replay's 120 s)
LIVE_KEYS = ("slurm_job", "worker", "partition")


@dataclass(frozen=True)
class ElasticJob:
    id: str
    slurm_job: str
    worker: str
    partition: str | None
    trainer: object  # planner.allocators.base.TrainerState (current filled per decision)


def load_jobs(path) -> tuple[list[ElasticJob], dict]:
    """Read a jobs file: (jobs, allocator options from the file). InputError names file and field."""
    path = Path(path)
    try:
        raw = path.read_bytes()[:MAX_INSTANCE_BYTES + 1]
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror or e}", file=str(path)) from None
    try:
        data = json.loads(raw.decode("utf-8-sig"))
    except (ValueError, UnicodeDecodeError) as e:
        raise InputError(f"not valid JSON ({str(e)[:100]})", file=str(path)) from None
    if not isinstance(data, dict) or not isinstance(data.get("trainers"), list) or not data["trainers"]:
        raise InputError("expected an object with a non-empty 'trainers' list", file=str(path), field="trainers")
    extras = []
    trainers = []
    for i, tr in enumerate(data["trainers"]):
        if not isinstance(tr, dict):
            raise InputError(f"trainers[{i}] is not an object", file=str(path), field=f"trainers[{i}]")
        if "current" in tr:
            raise InputError("'current' comes from Slurm in live mode (the nodes of slurm_job)", file=str(path),
                             field=f"trainers[{i}].current")
        extras.append({k: tr[k] for k in LIVE_KEYS if k in tr})
        trainers.append({k: v for k, v in tr.items() if k not in LIVE_KEYS})
    inst = {k: v for k, v in data.items() if k != "trainers"}
    inst.update(pool=[], trainers=trainers)
    state, opts = parse_instance(inst, str(path))
    jobs = []
    for t, ex in zip(state.trainers, extras):
        sj = str(ex.get("slurm_job", t.id))
        if not sj.replace("_", "").isdigit() and "slurm_job" in ex:
            raise InputError(f"slurm_job {sj[:40]!r} is not a Slurm job id", file=str(path), field="slurm_job")
        jobs.append(ElasticJob(id=t.id, slurm_job=sj, worker=str(ex.get("worker", "")),
                               partition=ex.get("partition"), trainer=t))
    opts.setdefault("tfwd_s", ADVISOR_TFWD_S)
    return jobs, opts


def held_nodes(jobs: list[ElasticJob], squeue_jobs) -> dict[str, list[str]]:
    """Node names each elastic job holds now: its Slurm job's nodes and its running grow jobs'."""
    out = {j.id: [] for j in jobs}
    by_slurm = {j.slurm_job: j.id for j in jobs}
    for r in squeue_jobs:
        if r.state not in ("RUNNING", "COMPLETING") or not r.nodes:
            continue
        owner = by_slurm.get(r.job_id)
        name = (r.extra or {}).get("name") or ""
        if owner is None and name.startswith(GROW_PREFIX):
            owner = name[len(GROW_PREFIX):] if name[len(GROW_PREFIX):] in out else None
        if owner is not None:
            out[owner].extend(expand(r.nodes))
    return {k: sorted(set(v)) for k, v in out.items()}


def survival_p(model, ages_s, t_s: float, idle_frac: float, hist, tfwd_s: float) -> np.ndarray:
    """P(stays idle >= tfwd_s) per node from the Cox model (planner.predict.survival)."""
    ages = np.asarray(ages_s, float)
    if model is None or len(ages) == 0:
        return np.full(len(ages), np.nan)
    x = feature_matrix(ages, np.full(len(ages), t_s), np.full(len(ages), idle_frac),
                       np.asarray(hist, float) if hist is not None else np.full(len(ages), model.prior_hist))
    lin = model.lin(x)
    return np.array([float(model.survival(float(v), [tfwd_s])[0]) for v in lin])


def command_for(job: ElasticJob, frm: int, to: int, add: list[str], partition: str | None) -> str:
    if to < frm:
        return f"scontrol update JobId={job.slurm_job} NumNodes={to}"
    if not add:
        return ""
    argv = ["sbatch", f"--job-name={GROW_PREFIX}{job.id}", f"--nodes={len(add)}", f"--nodelist={','.join(add)}"]
    if partition:
        argv.append(f"--partition={partition}")
    if job.worker:
        argv.append(job.worker)
    else:
        argv.append("--wrap=WORKER_COMMAND")
    return " ".join(shlex.quote(a) for a in argv)


class Advisor:
    """Decides at every change; remembers the last inputs to skip unchanged polls."""

    def __init__(self, jobs: list[ElasticJob], allocator: str = "auto", opts: dict | None = None):
        self.jobs = jobs
        self.allocator = allocator
        o = dict(opts or {})
        self.opts = AllocOptions(**o)
        self.tfwd_s = float(self.opts.tfwd_s)
        self._last_key = None

    def state(self, names: list[str], harvestable: list[str], held: dict[str, list[str]], t_s: float):
        """The AllocState of a snapshot: node ids index `names`; pool = harvestable + held."""
        idx = {n: i for i, n in enumerate(names)}
        pool = sorted({idx[n] for n in harvestable} | {idx[n] for v in held.values() for n in v if n in idx})
        trs = tuple(replace(j.trainer, current=tuple(sorted(idx[n] for n in held.get(j.id, []) if n in idx)))
                    for j in self.jobs)
        return AllocState(pool=tuple(pool), trainers=trs, now_s=t_s)

    def decide(self, t_s: float, names: list[str], harvestable: list[str], held: dict[str, list[str]],
               p_idle: dict[str, float] | None = None, partition: str | None = None, force: bool = False):
        """(recommendations, the allocator's result or None when nothing changed since the last call)."""
        key = (tuple(sorted(harvestable)), tuple((k, tuple(v)) for k, v in sorted(held.items())))
        if key == self._last_key and not force:
            return [], None
        self._last_key = key
        st = self.state(names, harvestable, held, t_s)
        res = allocate(self.allocator, st, self.opts)
        p = p_idle or {}
        # node choice by P(stays idle >= T): rank 0 = most likely to stay

        pool = np.asarray(st.pool, np.int64)
        span = 1 + max([int(pool.max()) if len(pool) else -1] + [max(t.current) for t in st.trainers if t.current])
        pv = np.array([p.get(names[i], np.nan) for i in pool], float)
        order = np.lexsort((pool, -np.nan_to_num(pv, nan=-1.0)))
        rank = np.full(span, len(pool), np.int64)
        rank[pool[order]] = np.arange(len(pool))
        node_map = ranked_map(st, res.counts, rank)
        recs = []
        for j, tr in zip(self.jobs, st.trainers):
            frm, to = len(tr.current), int(res.counts.get(tr.id, 0))
            if frm == to:
                continue
            cur = set(tr.current)
            new = set(node_map.get(tr.id, ()))
            add = sorted(names[i] for i in new - cur)
            rel = sorted(names[i] for i in cur - new)
            padd = [p.get(n, math.nan) for n in add]
            pmean = float(np.mean(padd)) if padd and not np.all(np.isnan(padd)) else None
            gain = level_value(tr, to, self.opts, frm) - level_value(tr, frm, self.opts, frm)
            recs.append({"time": float(t_s), "job": j.id, "slurm_job": j.slurm_job, "from_nodes": frm,
                         "to_nodes": to, "nodes_to_add": add, "nodes_to_release": rel,
                         "p_stays_idle": None if pmean is None else round(pmean, 4),
                         "expected_gain_samples": round(float(gain), 3),
                         "command": command_for(j, frm, to, add, partition or j.partition),
                         "allocator": self.allocator, "tfwd_s": self.tfwd_s, "status": res.status})
        return recs, res
