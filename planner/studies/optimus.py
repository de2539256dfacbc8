"""Optimus' headline (Peng et al., EuroSys'18) against its own fairness baseline.

The paper (../shared/papers/optimus-summary.txt): "Optimus is compared against a fairness-based
scheduler using Dominant Resource Fairness as used in many existing systems [...] Optimus
reduces the average completion time and makespan by 2.39x and 1.63x respectively as compared to
the DRF based scheduler." Its allocation: "Initially each job is allocated one worker [...] Then
we iterate, greedily adding a worker [...] to the job with the largest marginal gain", the gain
being "the estimated reduction in job completion time when one worker [...] is added".

Our setting: the `optimus` allocator (planner.allocators.optimus: every job at its minimum, then
one node at a time to the largest drop in rem/O(k)) against `drf` (planner.allocators.drf: with
one resource type DRF is max-min fairness on nodes, progressive filling from the minima), on the
same jobs:
- a fixed pool of 64 nodes; BFTrainer's seven measured ImageNet curves (the `diverse` workload:
  Nmin 1, Nmax 64, Poisson arrivals, here every 300 s on average), each job's work 100 epochs of
  ImageNet times a seeded factor uniform in [0.2, 2] (so remaining work differs: Optimus'
  gain depends on it); 40 jobs; rescaling costs 18 s / 12 s (Elastic Horovod);
- decisions at every arrival and completion, Pj_max above the job count (every job admitted);
- every job completes (checked); JCT = end - submit, makespan = last end - first submit.
The speed curves are known to the allocator (Optimus learns them online: `planner simulate
--learn-curves` models that; not used here, so the comparison isolates the allocation rule).
"""

from __future__ import annotations

import math
import time
from dataclasses import replace

import numpy as np

from planner.allocators import allocate
from planner.allocators.base import AllocOptions, make_result
from planner.replay.pool import fixed_pool
from planner.replay.simulator import simulate
from planner.studies.common import row
from planner.workload.generators import make_workload

PAPER = "Peng et al., Optimus: An Efficient Dynamic Resource Scheduler for Deep Learning Clusters, EuroSys 2018"
POOL = 64
COUNT = 40
GAP_S = 300.0
PAPER_JCT, PAPER_MAKESPAN = 2.39, 1.63


def workload(seed: int, count: int = COUNT, equal_work: bool = False):
    specs = make_workload("diverse", seed=seed, count=count, interarrival_s=GAP_S)
    f = np.random.default_rng([seed, 22]).uniform(0.2, 2.0, size=len(specs))
    if equal_work:  # the isolating run: every job the mean work (only the curves differ)
        f = np.full(len(specs), 1.1)
    return [replace(s, work_samples=s.work_samples * float(x)) for s, x in zip(specs, f)]


def optimus_without_remaining_work(state, opts):
    """The isolating variant: Optimus' rule with every job's remaining work taken as equal (the
    gain 1/O(k) - 1/O(k+1): only the curve's shape decides), the one change from `optimus`."""
    flat = replace(state, trainers=tuple(replace(t, remaining_samples=math.inf) for t in state.trainers))
    res = allocate("optimus", flat, opts)
    return allocate_counts(state, res.counts, opts)


def allocate_counts(state, counts, opts):
    return make_result("optimus-no-rem", state, counts, opts, "heuristic")


def replay(policy: str, seed: int, count: int = COUNT, equal_work: bool = False) -> dict:
    specs = workload(seed, count, equal_work)
    alloc = optimus_without_remaining_work if policy == "optimus-no-rem" else policy
    res = simulate(fixed_pool(POOL, 0.0, 400 * 3600.0), specs, allocator=alloc, opts=AllocOptions(tfwd_s=120.0),
                   pj_max=10**6, check=False)
    tr = res.trainers
    done = tr[tr["completed"]]
    if len(done) != len(tr):
        raise RuntimeError(f"{policy}: only {len(done)} of {len(tr)} jobs finished")
    return {"policy": policy, "seed": seed, "jobs": int(len(tr)), "mean_jct_s": float(done["jct_s"].mean()),
            "makespan_s": float(done["end_s"].max() - tr["submit_s"].min()),
            "allocated_share": float(res.summary["allocated_share"]), "rescales": int(tr["rescales"].sum())}


PLANNER = {"pool": "fixed", "pool_size": POOL, "hours": 24.0, "workload": "diverse", "allocator": "optimus",
           "pj_max": 10_000}
PLANNER_NOTE = "64 nodes, the diverse workload (BFTrainer's seven ImageNet curves), Optimus' rule; try drf beside it"


RULE = ("Optimus: every job at its minimum, then one node at a time to the job whose estimated completion time "
        "(remaining work / speed) drops most; baseline DRF: with one resource, max-min fair node shares")


def run(quick: bool = False, progress=None) -> dict:
    wall0 = time.perf_counter()
    seeds = (0,) if quick else (0, 1, 2)
    count = 24 if quick else COUNT
    runs = []
    todo = [(p, s) for s in seeds for p in ("optimus", "drf")]
    for i, (p, s) in enumerate(todo):
        runs.append(replay(p, s, count))
        if progress:
            progress((i + 1) / len(todo))

    # one change: every job the same work (1.1 x 100 epochs), the rest as is
    eq = {p: replay(p, seeds[0], count, equal_work=True) for p in ("optimus", "drf")}
    norem = replay("optimus-no-rem", seeds[0], count)

    def mean(p, key):
        return float(np.mean([r[key] for r in runs if r["policy"] == p]))

    per_seed = {s: {r["policy"]: r for r in runs if r["seed"] == s} for s in seeds}
    jct = mean("drf", "mean_jct_s") / mean("optimus", "mean_jct_s")
    mk = mean("drf", "makespan_s") / mean("optimus", "makespan_s")
    jct_seeds = [per_seed[s]["drf"]["mean_jct_s"] / per_seed[s]["optimus"]["mean_jct_s"] for s in seeds]
    mk_seeds = [per_seed[s]["drf"]["makespan_s"] / per_seed[s]["optimus"]["makespan_s"] for s in seeds]
    setting = (f"fixed pool {POOL} nodes, {count} jobs (7 ImageNet curves on Summit, Nmin 1, Nmax 64, work "
               f"100 epochs x U[0.2, 2]), Poisson arrivals every {GAP_S:g} s, Rup/Rdw 18/12 s, all jobs "
               f"complete; optimus vs drf; {len(seeds)} seed(s)")
    pset = ("Kubernetes cluster (CPU and GPU servers, parameter-server jobs), 9 models, Optimus vs a DRF-based "
            "scheduler; figures from the paper's evaluation as summarised")

    def verdict(v, paper):
        return "yes" if v >= 0.8 * paper else ("partly" if v > 1.05 else "no")

    eq_jct = eq["drf"]["mean_jct_s"] / eq["optimus"]["mean_jct_s"]
    nr_jct = per_seed[seeds[0]]["drf"]["mean_jct_s"] / norem["mean_jct_s"]
    runs_text = (f"seed {seeds[0]}, one change each: (a) every job the same work: DRF / Optimus {eq_jct:.2f} "
                 f"(vs {jct_seeds[0]:.2f}); (b) Optimus' gain without the remaining work (1/O(k) - 1/O(k+1)): "
                 f"DRF / that rule {nr_jct:.2f}")
    o, d, n = (per_seed[seeds[0]]["optimus"]["mean_jct_s"], per_seed[seeds[0]]["drf"]["mean_jct_s"],
               norem["mean_jct_s"])
    closed = (o - n) / (o - d) if o != d else 0.0
    if d < o and 0.2 <= closed:
        why_jct = (f"measured: {runs_text}. Removing the remaining-work factor closes {100 * closed:.0f} % of the "
                   "gap to DRF: rem/O(k) - rem/O(k+1) grows with a job's remaining work, so jobs near "
                   "completion get the fewest nodes (the opposite of shortest-remaining-first); work spread "
                   "at submission is not the cause (a). The rest of the gap: not yet explained")
    else:
        why_jct = "not yet explained; " + runs_text

    rows = [
        row("Optimus cuts the mean JCT against DRF", "mean JCT, DRF / Optimus (x)", PAPER_JCT, pset, round(jct, 2),
            f"{setting}; per seed {', '.join(f'{x:.2f}' for x in jct_seeds)}; Optimus "
            f"{mean('optimus', 'mean_jct_s') / 3600:.2f} h vs DRF {mean('drf', 'mean_jct_s') / 3600:.2f} h",
            verdict(jct, PAPER_JCT), f"agrees: {jct:.2f}x is within 20 % of the paper's {PAPER_JCT}x or above"
            if verdict(jct, PAPER_JCT) == "yes" else why_jct),
        row("Optimus cuts the makespan against DRF", "makespan, DRF / Optimus (x)", PAPER_MAKESPAN, pset,
            round(mk, 2),
            f"{setting}; per seed {', '.join(f'{x:.2f}' for x in mk_seeds)}; Optimus "
            f"{mean('optimus', 'makespan_s') / 3600:.2f} h vs DRF {mean('drf', 'makespan_s') / 3600:.2f} h",
            verdict(mk, PAPER_MAKESPAN), f"agrees: {mk:.2f}x is within 20 % of the paper's {PAPER_MAKESPAN}x or above"
            if verdict(mk, PAPER_MAKESPAN) == "yes" else "not yet explained"),
    ]
    cut = f"one seed and {count} jobs (full: 3 seeds, {COUNT} jobs)" if quick else ""
    return {"paper": "optimus", "quick": bool(quick), "cut": cut, "rows": rows, "runs": runs, "rule": RULE,
            "wall_s": time.perf_counter() - wall0,
            "equal_work_runs": list(eq.values()), "no_remaining_work_run": norem,
            "setting": {"pool": POOL, "jobs": count, "gap_s": GAP_S, "seeds": list(seeds)}}
