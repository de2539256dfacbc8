"""Optimus' two task types on two resource types, as far as the summary describes them (the Optimus
study's one-change experiment "two resources", planner.studies.optimus).

The summary (../shared/papers/optimus-summary.txt): "Typically a model is partitioned among multiple
parameter servers, and training data is spread across multiple workers"; "Initially each job is
allocated one worker and one parameter server. Then we iterate, greedily adding a worker (parameter
server) to the job with the largest marginal gain in each iteration. Iteration stops when cluster
resource is exhausted, or the marginal gains are all negative"; the gain is the reduction in completion
time "divided by the amount of the dominant resource that a worker (parameter server) occupies"; the
asynchronous speed "f(p,w) = w (θ0 + θ1 w/p + θ2 w + θ3 p)^-1"; the baseline uses "Dominant Resource
Fairness". The paper's cluster (its abstract): "7 CPU servers and 6 GPU servers".

Assumed here (the summary gives none of it):
- a worker takes one slot of a GPU server, a parameter server one slot of a CPU server: W = 64 worker
  slots (our pool) and P = round(64 x 7 / 6) = 75 parameter-server slots (the abstract's 7 CPU to 6 GPU
  servers, each server with as many slots);
- a job's speed with w workers and p parameter servers is its measured curve at w nodes (our setting:
  one parameter server per worker) times (1 + r) / (1 + r w / p): the w/p term of the summary's
  asynchronous model, r = θ1/θ0 = 2.25 from its one example (ResNet-50 fastest at 8 workers and 12
  parameter servers of 20 containers, with θ2 = θ3 = 0, as `optimus.async_linear`). At p = w it is the
  measured curve, so DRF's runs are our setting's;
- DRF: a job's tasks come in bundles of one worker and one parameter server (the start at "one worker and
  one parameter server"; the summary's chart that "fix[es] the ratio of parameter servers to workers at
  1:1"). A bundle takes 1/W of the worker slots and 1/P of the server slots, so every job's dominant
  share is bundles / W and progressive filling is max-min on bundles over min(W, P) = 64 (the 11 server
  slots past 64 stay unused): the same allocation as `drf` on 64 nodes;
- Optimus: every job at one worker and one parameter server (FIFO while both fit), then one task at a
  time, a worker or a parameter server, to the largest rem/f(p, w) - rem/f(p', w') divided by the
  task's share of its resource (1/W for a worker, 1/P for a parameter server: the gain times W or P);
  workers up to the job's Nmax; stop when no task fits or no gain is positive. Ties: the job submitted
  first, a worker before a parameter server.

The replay is a fluid event loop of its own (arrivals and completions, a decision at each; rescaling
charged as planner.replay does: Rup or Rdw times the old rate, in samples, whenever a job's tasks
change). With `mode="bundles"` (Optimus adds bundles, one resource) it is our one-resource setting;
tests/unit/test_study_optimus_ps.py checks it against planner.replay.simulate there.

`place` is the summary's placement rule (equal workers and parameter servers on the fewest servers),
timed with the allocation at the summary's scale by `optimus.scale`.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass

import numpy as np

from planner.replay.runs import finish_tol
from planner.workload.trainers import TrainerSpec

RATIO = 2.25  # θ1/θ0 of the summary's asynchronous model, from its ResNet-50 example (optimus.async_linear)
WORKER_SLOTS = 64
SERVER_SLOTS = round(64 * 7 / 6)  # 75: the abstract's 7 CPU servers to 6 GPU servers


def speed(tab: np.ndarray, w: int, p: int, ratio: float = RATIO) -> float:
    """Samples/s of a job with measured curve `tab` (O(0..Nmax)) on w workers and p parameter servers."""
    if w <= 0 or p <= 0:
        return 0.0
    return float(tab[min(w, len(tab) - 1)]) * (1.0 + ratio) / (1.0 + ratio * w / p)


@dataclass
class Job:
    spec: TrainerSpec
    tab: np.ndarray
    rank: int
    done: float = 0.0
    pend: float = 0.0
    w: int = 0
    p: int = 0
    rate: float = 0.0
    end_s: float = math.nan

    @property
    def rem(self) -> float:
        return self.spec.work_samples - self.done


def _gain(j: Job, w: int, p: int, nw: int, np_: int, ratio: float) -> float:
    rem = max(j.rem, 0.0) or 1.0
    o0, o1 = speed(j.tab, w, p, ratio), speed(j.tab, nw, np_, ratio)
    if o1 <= 0:
        return -math.inf
    return (rem / o0 if o0 > 0 else math.inf) - rem / o1


def optimus_tasks(jobs: list[Job], W: int, P: int, ratio: float = RATIO, mode: str = "tasks") -> dict:
    """{job rank: (w, p)}: Optimus on two resources (module docstring); mode "bundles": a worker and a
    parameter server together, the gain per bundle (one resource: `optimus` on min(W, P) nodes)."""
    alloc = {j.rank: (0, 0) for j in jobs}
    fw, fp = W, P
    admitted = []
    for j in sorted(jobs, key=lambda j: (0 if j.w else 1, j.spec.submit_s, j.rank)):
        if fw >= 1 and fp >= 1:
            alloc[j.rank] = (1, 1)
            fw, fp = fw - 1, fp - 1
            admitted.append(j)
    steps = {"tasks": ((1, 0, W), (0, 1, P)), "bundles": ((1, 1, 1),)}[mode]
    by_rank = {j.rank: j for j in admitted}

    def entries(j):
        w, p = alloc[j.rank]
        out = []
        for kind, (dw, dp, scale) in enumerate(steps):
            if w + dw > j.spec.nmax:
                continue
            g = _gain(j, w, p, w + dw, p + dp, ratio) * scale
            if g > 0:
                out.append((-g, j.rank, kind, w, p))
        return out

    heap = [e for j in admitted for e in entries(j)]
    heapq.heapify(heap)
    while heap and (fw > 0 or fp > 0):
        _, rank, kind, w, p = heapq.heappop(heap)
        if alloc[rank] != (w, p):
            continue  # stale: the job moved since this entry
        dw, dp, _ = steps[kind]
        if dw > fw or dp > fp:
            continue  # does not fit (the free slots only shrink)
        alloc[rank] = (w + dw, p + dp)
        fw, fp = fw - dw, fp - dp
        for e in entries(by_rank[rank]):
            heapq.heappush(heap, e)
    return alloc


def drf_bundles(jobs: list[Job], W: int, P: int) -> dict:
    """{job rank: (w, p)}: DRF with 1:1 bundles (module docstring): FIFO admission while a bundle fits
    (the first that does not blocks the rest), then a bundle at a time to the job with the fewest."""
    alloc = {j.rank: (0, 0) for j in jobs}
    free = min(W, P)
    admitted = []
    for j in sorted(jobs, key=lambda j: (0 if j.w else 1, j.spec.submit_s, j.rank)):
        if free < 1:
            break
        alloc[j.rank] = (1, 1)
        free -= 1
        admitted.append(j)
    heap = [(1, j.rank, j) for j in admitted]
    heapq.heapify(heap)
    while heap and free > 0:
        k, rank, j = heapq.heappop(heap)
        if k + 1 > j.spec.nmax:
            continue
        alloc[rank] = (k + 1, k + 1)
        free -= 1
        heapq.heappush(heap, (k + 1, rank, j))
    return alloc


def replay(specs: list[TrainerSpec], policy: str, W: int = WORKER_SLOTS, P: int = SERVER_SLOTS,
           ratio: float = RATIO, mode: str = "tasks", horizon_s: float = 400 * 3600.0) -> dict:
    """Replay `specs` under `policy` ("optimus" or "drf") on W worker and P server slots; the study's
    figures (mean JCT, makespan) plus the mean worker and server slots in use. Raises when a job does
    not finish within `horizon_s`."""
    specs = sorted(specs, key=lambda s: s.submit_s)
    jobs = [Job(s, s.curve.table(max(s.nmax, 1)), i) for i, s in enumerate(specs)]
    active: list[Job] = []
    nxt, now = 0, 0.0
    used_w_s = used_p_s = 0.0
    while True:
        # complete, admit, decide at `now`
        for j in active:
            left = max(j.rem, 0.0) + j.pend
            if ((j.rem <= finish_tol(j.spec.work_samples) and j.pend <= 1e-6)
                    or (j.rate > 0 and now + left / j.rate <= now)):
                j.end_s, j.w, j.p, j.rate = now, 0, 0, 0.0
        active = [j for j in active if math.isnan(j.end_s)]
        while nxt < len(jobs) and jobs[nxt].spec.submit_s <= now:
            active.append(jobs[nxt])
            nxt += 1
        if not active and nxt >= len(jobs):
            break
        alloc = (optimus_tasks(active, W, P, ratio, mode) if policy == "optimus" else drf_bundles(active, W, P))
        for j in active:
            w, p = alloc[j.rank]
            if (w, p) != (j.w, j.p):
                grew = w + p > j.w + j.p
                j.pend += (j.spec.rup_s if grew else j.spec.rdw_s) * j.rate
                j.w, j.p = w, p
                j.rate = speed(j.tab, w, p, ratio)
        # the next event: an arrival or a completion at the current rates
        tn = jobs[nxt].spec.submit_s if nxt < len(jobs) else math.inf
        for j in active:
            if j.rate > 0:
                tn = min(tn, now + (max(j.rem, 0.0) + j.pend) / j.rate)
        if not math.isfinite(tn) or tn > horizon_s:
            raise RuntimeError(f"{policy}: jobs left unfinished at {horizon_s / 3600:g} h")
        dt = tn - now
        for j in active:
            if j.rate > 0:
                got = j.rate * dt
                pay = min(j.pend, got)
                j.pend -= pay
                j.done += got - pay
                used_w_s += j.w * dt
                used_p_s += j.p * dt
        now = tn
    jct = np.array([j.end_s - j.spec.submit_s for j in jobs])
    span = max(j.end_s for j in jobs) - min(j.spec.submit_s for j in jobs)
    return {"policy": policy, "jobs": len(jobs), "mean_jct_s": float(jct.mean()), "makespan_s": float(span),
            "mean_workers": used_w_s / span, "mean_servers": used_p_s / span,
            "worker_slots": W, "server_slots": P, "mode": mode}


def divisible(w: int, p: int, slots: int) -> bool:
    """Whether some n servers can each hold w/n workers and p/n parameter servers in `slots` slots."""
    g = math.gcd(w, p)
    return any(g % n == 0 and (w + p) // n <= slots for n in range(1, g + 1))


def place(alloc: dict, servers: int, slots: int) -> dict:
    """Optimus' placement as the summary gives it: "use the smallest number of servers to host the job,
    such that the same number of parameter servers and the same number of workers are deployed on each
    of these servers". Each of `servers` servers has `slots` task slots (a worker or a parameter server
    each: assumed, the summary gives no sizes). Jobs in decreasing task count (assumed); for job (w, p)
    the smallest n dividing both w and p with (w + p) / n <= slots for which n servers have that many
    free slots, the fullest such servers first (best fit; assumed). {job: [server, ...]} for the jobs
    placed; a job no n fits is left out (the summary does not say what Optimus does then)."""
    free = [slots] * servers
    by_free: list[set[int]] = [set() for _ in range(slots + 1)]
    by_free[slots] = set(range(servers))
    out = {}
    for job, (w, p) in sorted(alloc.items(), key=lambda kv: -(kv[1][0] + kv[1][1])):
        if w <= 0 or p <= 0:
            continue
        g = math.gcd(w, p)
        for n in (d for d in range(1, g + 1) if g % d == 0):
            need = (w + p) // n
            if need > slots:
                continue
            if sum(len(by_free[f]) for f in range(need, slots + 1)) < n:
                continue
            picked = []
            for f in range(need, slots + 1):  # best fit: the fullest servers that still fit
                while by_free[f] and len(picked) < n:
                    picked.append((by_free[f].pop(), f))
                if len(picked) == n:
                    break
            for s, f in picked:
                free[s] = f - need
                by_free[f - need].add(s)
            out[job] = [s for s, _ in picked]
            break
    return out
