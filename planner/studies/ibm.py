"""IBM's effective elastic scaling (Saxena et al., MASCOTS'20) in IBM's own setting and baseline.

The paper (../shared/papers/ibm-effective-elastic-scaling.txt): jobs choose GPUs and total batch
size jointly; the baseline "fix[es] the total batch size of a job to be a value selected from the
range of allowed batch sizes for that job category, but we allow the total batch of the job to be
distributed over several GPUs" and, "in a more realistic scenario", the batch is "random
batch-size (Random-BS) which is a value picked uniformly randomly between the Max-BS and Min-BS".
Headlines, all against Random-BS: "The number of jobs completed improve by 82%, 64.4% and 90% for
Categories 1, 2 and 3" (Fig. 5, high arrival, jobs dropped when they do not fit: "the simulator
can be run in both modes - with and without queuing"); 40 GPUs, 12 h bursty arrivals (Table III,
simulator): job drop ratio 10.09 % (elastic) vs 39.57 % (baseline), and without drops the mean
JCT "increases by nearly 10X (34.12 mins to 351.02 mins) for the baseline"; 400 GPUs, 8 h bursty
(Table IV): drop ratio 1.23 % vs 38.28 %, mean JCT without drops 22.96 vs 166.82 min (~7x).

Our setting:
- throughput: IBM's Table II (category 1, ResNet-50 on CIFAR-100: throughput scaling factor on
  2 GPUs 0.86, 1.06, 1.3, 1.45, 1.66 at 8, 11, 16, 22, 32 samples per GPU) fitted by a step time
  a + c m + s 2(k-1)/k (m = b/k samples per GPU, ring all-reduce), normalised so one GPU at its
  maximum per-GPU batch (32) runs 1 unit: a = 5.06, c = 0.84, s = 6.53 (fit_table2; the factors
  come back within 0.02); sub-linear: at most 1.66x on 2 GPUs;
- jobs: category 1's batch range (total 32..256), at most 32 samples per GPU (Table II's
  largest; b runs on k GPUs only when b/k <= 32), 1..8 GPUs (k_max = 8); every job "takes about
  half an hour to execute on a single GPU with the maximum feasible batch size";
- arrivals: Poisson; IBM's rates: lambda = 1/30 min, high k_max lambda, low lambda/k_max;
  bursty: "a very high job arrival rate for the first two hours followed by a very low job
  arrival rate for the next two hours", over 12 h (40 GPUs) or 8 h (400 GPUs); "very high" is
  not given: we use `load` x IBM's high rate, scaled by GPUs/40 on 400 GPUs;
- elastic (IBM's method): admission `min-fits` (the autoscaler adds jobs while the optimizer
  stays feasible), `dp` choosing GPUs and total batch jointly (batch grid 32, 64, ..., 256),
  throughput objective (IBM maximises the sum of throughput scaling factors; all jobs share one
  normaliser here, so that is total throughput);
- baseline: the same, with `--batch-choice random` (Random-BS: one total batch per job drawn
  once, seeded, uniformly between 32 and 256; elastic in GPUs only);
- decisions at every arrival and completion (IBM's simulator: "An event is created in the
  simulator whenever a job arrives or completes"); drop mode or queueing; rescaling costs 0
  (IBM's simulator charges none: "the simulator does not [restart from a checkpoint]").
"""

from __future__ import annotations

import os
import time

import numpy as np

from planner.allocators.base import AllocOptions
from planner.replay.pool import fixed_pool
from planner.replay.simulator import simulate
from planner.studies.common import row
from planner.workload.generators import choose_batches
from planner.workload.trainers import Curve, TrainerSpec

PAPER = "Saxena et al., Effective Elastic Scaling of Deep Learning Workloads, MASCOTS 2020"
TABLE2 = ((8, 0.86), (11, 1.06), (16, 1.3), (22, 1.45), (32, 1.66))  # per-GPU batch, factor on 2 GPUs
MAX_PER_GPU = 32
BMIN, BMAX, KMAX = 32, 256, 8
JOB_MIN = 30.0  # minutes on one GPU at the maximum per-GPU batch
LAMBDA_PER_H = 60.0 / JOB_MIN


def fit_table2() -> tuple[float, float, float]:
    """(a, c, s) of the step time a + c m + s 2(k-1)/k with a + 32 c = 32 (one GPU at 32 per GPU
    runs 1 sample per time unit): least squares of 2m/f = a + s + c m over Table II."""
    m = np.array([x for x, _ in TABLE2], dtype=float)
    y = np.array([2 * x / f for x, f in TABLE2])
    # a + s + (1 - a/32) m = y  ->  (a + s) + m - (a/32) m = y: linear in (a + s, a)
    A = np.column_stack([np.ones_like(m), -m / 32.0])
    (ps, a), *_ = np.linalg.lstsq(A, y - m, rcond=None)
    return float(a), float(1 - a / 32.0), float(ps - a)


def throughput(b: float, k: int, abc=None) -> float:
    """Samples per time unit of total batch b on k GPUs (0 when b/k exceeds a GPU's memory)."""
    a, c, s = abc or fit_table2()
    m = b / k
    if m > MAX_PER_GPU or m < 1:
        return 0.0
    return b / (a + c * m + s * 2.0 * (k - 1) / k)


def batch_choices(unit_per_s: float):
    """((b, Curve), ...) on the batch grid; samples/s = throughput x unit_per_s."""
    abc = fit_table2()
    out = []
    for b in range(BMIN, BMAX + 1, 32):
        ks = tuple(range(0, KMAX + 1))
        out.append((b, Curve(ks, tuple(0.0 if k == 0 else throughput(b, k, abc) * unit_per_s for k in ks))))
    return tuple(out)


def arrivals(rng, hours: float, high_per_h: float, low_per_h: float, period_h: float = 2.0) -> list[float]:
    """Bursty Poisson arrivals (seconds): high for period_h, low for period_h, repeated."""
    t, out = 0.0, []
    end = hours * 3600.0
    while True:
        phase_high = int(t // (period_h * 3600.0)) % 2 == 0
        rate = (high_per_h if phase_high else low_per_h) / 3600.0
        nxt = t + rng.exponential(1.0 / rate)
        boundary = (int(t // (period_h * 3600.0)) + 1) * period_h * 3600.0
        if nxt >= boundary:  # memoryless: restart the draw at the phase boundary
            t = boundary
            if t >= end:
                return out
            continue
        t = nxt
        if t >= end:
            return out
        out.append(t)


def jobs(seed: int, hours: float, gpus: int, load: float):
    unit = 1.0  # 1 sample/s at one GPU, 32 per GPU: a job is 1800 samples
    bs = batch_choices(unit)
    scale = gpus / 40.0
    sub = arrivals(np.random.default_rng(seed), hours, load * KMAX * LAMBDA_PER_H * scale,
                   LAMBDA_PER_H / KMAX * scale)
    b0, c0 = bs[0]
    return [TrainerSpec(id=f"j{i:05d}", model="cat1", curve=c0, nmin=1, nmax=KMAX, rup_s=0.0, rdw_s=0.0,
                        work_samples=JOB_MIN * 60.0 * unit, submit_s=s, batches=bs, batch_size=b0)
            for i, s in enumerate(sub)]


def replay(policy: str, gpus: int, hours: float, load: float, drop: bool, seed: int) -> dict:
    specs = jobs(seed, hours, gpus, load)
    specs = choose_batches(specs, "elastic" if policy == "elastic" else "random", seed=seed)
    # the window runs on until every admitted job is done (queued ones too, without drops)
    res = simulate(fixed_pool(gpus, 0.0, (hours + 200.0) * 3600.0), specs, allocator="dp",
                   opts=AllocOptions(tfwd_s=120.0), pj_max=10**6, admission="min-fits", drop=drop, check=False)
    tr = res.trainers
    inside = tr[tr["submit_s"] < hours * 3600.0]
    done = inside[inside["completed"]]
    in_window = done[done["end_s"] <= hours * 3600.0]
    s = res.summary
    return {"policy": policy, "gpus": gpus, "hours": hours, "load": load, "drop": drop, "seed": seed,
            "arrived": int(len(inside)), "completed": int(len(done)), "completed_in_window": int(len(in_window)),
            "dropped": int(s["trainers_dropped"]), "drop_ratio": float(s["drop_ratio"]),
            "mean_jct_min": float(done["jct_s"].mean() / 60.0) if len(done) else None}


def _mean(rs, key):
    v = [r[key] for r in rs if r[key] is not None]
    return float(np.mean(v)) if v else None


# the Planner's closest setting (URL fields of planner.scenario.schema; the app's "Open in Planner")
PLANNER = {"pool": "fixed", "pool_size": 40, "hours": 12.0, "allocator": "dp", "admission": "min-fits", "drop": True,
           "rup": 0.0, "rdw": 0.0}
PLANNER_NOTE = ("IBM's 40 GPUs with its admission and drop mode (the study's Table II jobs are not a shipped "
                "workload: the Planner's default workload runs)")


RULE = ("IBM: admit arriving jobs while every admitted job's minimum fits (else drop or queue); an exact DP "
        "picks GPUs and total batch size per job jointly to maximise the summed throughput; baseline Random-BS: "
        "one total batch per job drawn uniformly in [min, max], elastic in GPUs only")


def run(quick: bool = False, progress=None) -> dict:
    wall0 = time.perf_counter()
    # (GPUs, hours, load x IBM's high rate, seeds)
    if quick:
        cases = [(40, 12.0, 1.0, (0,)), (40, 12.0, 8.0, (0,))]
    else:
        cases = [(40, 12.0, 1.0, (0, 1)), (40, 12.0, 4.0, (0, 1)), (40, 12.0, 8.0, (0, 1)),
                 (400, 8.0, 4.0, (0,))]
    # PLANNER_IBM_GPUS=40 leaves the 400-GPU case out (its four replays take about 2.3 CPU-minutes
    # since batch_levels is cached; 22 wall minutes on loaded shared cores); `cut` then says so

    sizes = {int(x) for x in os.environ.get("PLANNER_IBM_GPUS", "40,400").split(",") if x.strip()}
    skipped = sorted({c[0] for c in cases} - sizes)
    cases = [c for c in cases if c[0] in sizes]
    loads = sorted({c[2] for c in cases})
    seeds = sorted({s for c in cases for s in c[3]})
    runs = []
    todo = [(g, h, ld, d, p, s) for g, h, ld, ss in cases for d in (True, False)
            for p in ("elastic", "random-bs") for s in ss]
    for i, (g, h, ld, d, p, s) in enumerate(todo):
        runs.append(replay(p, g, h, ld, d, s))
        if progress:
            progress((i + 1) / len(todo))

    def agg(g, ld, d, p, key):
        return _mean([r for r in runs if (r["gpus"], r["load"], r["drop"], r["policy"]) == (g, ld, d, p)], key)

    a, c, s = fit_table2()
    setting0 = (f"Table II fit (a {a:.2f}, c {c:.2f}, s {s:.2f}; 2-GPU factor at 32/GPU "
                f"{2 * 32 / (a + c * 32 + s):.2f}), batch 32..256, <= 32 per GPU, 1..8 GPUs, jobs 30 GPU-min, "
                "bursty 2 h high / 2 h low")

    def nseeds(g):
        return f"{len({x for c in cases if c[0] == g for x in c[3]})} seed(s)"

    loads40 = [c[2] for c in cases if c[0] == 40]

    def why_completed(ld, g=40):
        """The measured reason a load shows (almost) no gain: the baseline drops (almost) nothing
        there, and the same runs at the highest load (one change: the arrival rate) differ."""
        bd, top = agg(g, ld, True, "random-bs", "drop_ratio"), max(c[2] for c in cases if c[0] == g)
        if bd is not None and bd < 0.02 and top != ld:
            te, tb = agg(g, top, True, "elastic", "completed"), agg(g, top, True, "random-bs", "completed")
            return (f"measured: at {ld:g}x IBM's high rate the cluster is not contended, Random-BS drops "
                    f"{100 * bd:.1f} % of the jobs, so there is nothing to win back; the same runs at {top:g}x "
                    f"(one change: the arrival rate) give {100 * (te / tb - 1):+.1f} %")
        return "not yet explained"

    def why_jct(g, ld):
        """The measured reason for a small JCT ratio: when turning drop mode on (one change) drops
        no job and leaves every JCT as it was, no job ever waited to be admitted, so the ratio is
        only the per-job speed of the batch choice; IBM attributes its 10x to the baseline's queue
        ("scheduling jobs that have accumulated in the queue during the period of high arrival")."""
        pol = ("elastic", "random-bs")
        same = all(agg(g, ld, True, p, "mean_jct_min") == agg(g, ld, False, p, "mean_jct_min") for p in pol)
        if same and all(agg(g, ld, True, p, "drop_ratio") == 0.0 for p in pol):
            return (f"measured: at {ld:g}x, drop mode on instead of off (one change) drops no job and leaves "
                    f"both policies' mean JCT unchanged ({agg(g, ld, True, 'elastic', 'mean_jct_min'):.1f} and "
                    f"{agg(g, ld, True, 'random-bs', 'mean_jct_min'):.1f} min): no job waits to be admitted, so "
                    "the ratio is only the per-job speed of the batch choice; IBM's ~10x comes from the "
                    "baseline's queue (its text: \"scheduling jobs that have accumulated in the queue during "
                    "the period of high arrival\"), which this load does not build")
        return "not yet explained"

    rows = []
    for ld in loads40:
        e, b = agg(40, ld, True, "elastic", "completed"), agg(40, ld, True, "random-bs", "completed")
        gain = 100.0 * (e / b - 1) if b else None
        rows.append(row(
            "elastic scaling completes more jobs than Random-BS (drop mode)",
            "jobs completed, elastic vs Random-BS (%)",
            "+64.4 to +90", "Fig. 5: 40 GPUs (real) and simulator, categories 1-3, high arrival, 4 h, drops",
            None if gain is None else round(gain, 1),
            f"40 GPUs, 12 h, high = {ld:g} x IBM's high rate; {setting0}, {nseeds(40)}; elastic {e:.1f} vs "
            f"Random-BS {b:.1f}",
            "yes" if gain is not None and gain >= 64.4 else ("partly" if gain and gain > 0 else "no"),
            f"agrees: {gain:+.1f} % is at least the paper's lowest, +64.4 % (yes: at least that; partly: "
            "a smaller gain)" if gain is not None and gain >= 64.4 else why_completed(ld)))
    for g, pe, pb, pset in ((40, 10.09, 39.57, "Table III: 40 GPUs, 12 h bursty, simulator"),
                            (400, 1.23, 38.28, "Table IV: 400 GPUs, 8 h bursty, simulator")):
        if g not in sizes:
            continue
        g_loads = [c[2] for c in cases if c[0] == g]
        for ld in g_loads:
            e, b = agg(g, ld, True, "elastic", "drop_ratio"), agg(g, ld, True, "random-bs", "drop_ratio")
            ok = e < b and (b - e) >= 0.5 * (pb - pe) / 100.0
            rows.append(row(
                "elastic drops far fewer jobs than Random-BS", "job drop ratio, elastic / Random-BS (%)",
                f"{pe:g} / {pb:g}", pset, f"{100 * e:.1f} / {100 * b:.1f}",
                f"{g} GPUs, {ld:g} x IBM's high rate (x GPUs/40); {setting0}, {nseeds(g)}",
                "yes" if ok else ("partly" if e < b else "no"),
                f"agrees: the baseline drops {100 * (b - e):.1f} points more, at least half the paper's "
                f"{pb - pe:.1f} (yes: that; partly: fewer drops but a smaller gap)" if ok else why_completed(ld, g)))
        for ld in g_loads:
            e, b = agg(g, ld, False, "elastic", "mean_jct_min"), agg(g, ld, False, "random-bs", "mean_jct_min")
            ratio = b / e if e else None
            pr = 320.32 / 27.75 if g == 40 else 166.82 / 22.96
            ok = ratio is not None and ratio >= 0.5 * pr
            rows.append(row(
                "without drops (queueing) the baseline's mean JCT is many times the elastic one",
                "mean JCT Random-BS / elastic (x)", round(pr, 1), pset + " (no drops)",
                None if ratio is None else round(ratio, 2),
                f"{g} GPUs, {ld:g} x IBM's high rate; elastic {e:.1f} min vs Random-BS {b:.1f} min; {setting0}, "
                f"{nseeds(g)}",
                "yes" if ok else ("partly" if ratio and ratio > 1.5 else "no"),
                f"agrees: {ratio:.1f}x is at least half the paper's {pr:.1f}x" if ok else why_jct(g, ld)))
    cut = "one seed, 40 GPUs at 1x and 8x IBM's high rate only (no 4x, no 400-GPU runs)" if quick else ""
    if skipped and not quick:
        cut = f"the {', '.join(map(str, skipped))}-GPU case (PLANNER_IBM_GPUS)"
    return {"paper": "ibm", "quick": bool(quick), "cut": cut, "rows": rows, "runs": runs, "rule": RULE,
            "wall_s": time.perf_counter() - wall0,
            "setting": {"table2_fit": {"a": a, "c": c, "s": s}, "loads": list(loads), "seeds": list(seeds),
                        "batch_range": [BMIN, BMAX], "max_per_gpu": MAX_PER_GPU, "kmax": KMAX}}
