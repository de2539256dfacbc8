"""Elan's elastic scheduling study (Xie et al., ICDCS'20, Sec. VI-C) in Elan's own setting.

The paper (../shared/papers/elan.txt): "we select and down-sample a two-day trace to make it finish
within 10 hours [...] We also downscale the number of total GPUs to 128 to match the scale of
jobs. The resource configuration of each job in the trace is static (each job specifies the
number of its requested workers `req_res`), to enable elastic scheduling, we also specify
`min_res` and `max_res` for them." Baselines: "FIFO and Backfill (BF)"; the elastic variants
E-FIFO and E-BF apply Elan's admission and allocation rule (planner.allocators.elan). Result:
"JPT is reduced by 43%+, JCT is reduced by 25%+, and makespan is reduced by 21%+" (Fig. 20), and
"Elan achieves a similar performance to the ideal system [...] while the JCT is increased by 6%
using S&R" (Fig. 22).

Our setting (Elan's Sensetime trace is not public; the closest shipped trace is Philly):
- 1 GPU = 1 node, a fixed pool of 128 nodes;
- jobs: every second Philly job (down-sampled, as Elan did) submitted in the 48 h from 2017-10-02
  00:00 with a run time <= 10 h (799 of 1,598 jobs: 656 of 1,359 GPU-hours, so the ten compressed
  hours ask for about half of the 128 GPUs on average, with a burst of ~950 one-GPU jobs in hours
  6-9 of the window), arrivals compressed by 10/48 (two days into ten hours); req_res = its GPUs
  (clipped to 128), min_res = 1, max_res = 4 req_res (clipped to 128); its speed curve one of
  BFTrainer's seven measured ImageNet curves (seeded), its work = its Philly run time at req_res;
- rescaling costs: the `elan` runtime preset (1 s), `stop-restart` (28 s) and `ideal` (0 s);
- static FIFO / BF: `static` / `static-backfill` (each job at req_res or waiting);
- E-FIFO / E-BF: `elan` / `elan-backfill` (Elan's rule alone admits: replay admission fcfs,
  Pj_max above the job count);
- the project's previous elastic policy: replay admission `min-fits` + `dp` on the `progress`
  objective (the removed scripts/elan_study.py, before issue 22).
Metrics: JPT = mean(first nodes - submit), JCT = mean(end - submit), makespan = last end - first
submit; every job completes (checked).
"""

from __future__ import annotations

import json
import time

import numpy as np
import pandas as pd

from planner.allocators.base import AllocOptions
from planner.paths import PHILLY_LOG
from planner.replay.pool import fixed_pool
from planner.replay.simulator import simulate
from planner.studies.common import closes, experiment_text, explain, process_pool, row
from planner.workload import runtimes
from planner.workload.trainers import Curve, TrainerSpec, imagenet_curves

PAPER = "Xie et al., Elan: Towards Generic and Efficient Elastic Training for Deep Learning, ICDCS 2020"
NODES = 128
SINCE = "2017-10-02 00:00:00"
WINDOW_H = 48.0
TARGET_H = 10.0
MAX_RUN_S = 10 * 3600.0
DOWN_SAMPLE = 2  # every 2nd job: Elan "down-sample[s] a two-day trace to make it finish within 10 hours"
PAPER_VALUES = {"jpt": -43.0, "jct": -25.0, "makespan": -21.0, "sr_jct": 6.0}
POLICIES = {  # name -> (allocator, replay admission, objective)
    "FIFO": ("static", "fcfs", "throughput"),
    "BF": ("static-backfill", "fcfs", "throughput"),
    "E-FIFO": ("elan", "fcfs", "throughput"),
    "E-BF": ("elan-backfill", "fcfs", "throughput"),
    "previous (min-fits + dp, progress)": ("dp", "min-fits", "progress"),
}


def workload(runtime: str = "elan", seed: int = 0, every: int = 1, nodes: int = NODES,
             target_h: float = TARGET_H, size_factor: int = 1, rescale_s: float | None = None,
             max_factor: int = 4, run_scale: float = 1.0, linear: bool = False, offset: int = 0):
    """The Philly jobs of the window as Trainers (module docstring); 1 GPU = 1 node; `every`: keep
    every n-th job only (the quick run's down-sampling). The isolating experiments' knobs:
    `target_h` (the 48 h are compressed into this many hours: the load), `size_factor` (every job
    asks for that many times its GPUs for 1/size_factor of its run time: the same GPU-hours, a
    mix with fewer one-GPU jobs), `max_factor` (max_res = this x req_res: the elastic range),
    `rescale_s` (Rup = Rdw = this, overriding the runtime's), `run_scale` (every run time times this),
    `linear` (every speed curve linear from its one-GPU speed: O(k) = k O(1)), `offset` (keep the
    n-th jobs from this one: another down-sample of the same trace)."""
    rup, rdw, _ = runtimes.costs(runtime, rescale_s, rescale_s)
    df = pd.read_csv(PHILLY_LOG, usecols=["timestamp", "duration", "num_gpus"])
    df["timestamp"] = pd.to_datetime(df["timestamp"])
    t0 = pd.Timestamp(SINCE)
    df = df[(df["timestamp"] >= t0) & (df["timestamp"] < t0 + pd.Timedelta(hours=WINDOW_H))
            & (df["duration"] > 0) & (df["duration"] <= MAX_RUN_S) & (df["num_gpus"] > 0)]
    df = df.sort_values("timestamp", kind="stable").iloc[offset::every]
    scale = target_h / WINDOW_H
    models = list(imagenet_curves().items())
    pick = np.random.default_rng(seed).integers(0, len(models), size=len(df))
    out = []
    for i, (ts, dur, gpus) in enumerate(zip(df["timestamp"], df["duration"], df["num_gpus"])):
        model, curve = models[pick[i]]
        if linear:
            curve = Curve(tuple(range(nodes + 1)), tuple(k * curve(1) for k in range(nodes + 1)))
        r = min(int(gpus) * size_factor, nodes)
        run_s = (float(dur) * int(gpus) / r if size_factor > 1 else float(dur)) * run_scale  # same GPU-hours
        out.append(TrainerSpec(id=f"philly-{i:04d}", model=model, curve=curve, nmin=1, nmax=min(max_factor * r, nodes),
                               request_nodes=r, rup_s=rup, rdw_s=rdw,
                               work_samples=max(run_s * curve(r), 1.0),
                               submit_s=(ts - t0).total_seconds() * scale))
    return out


def replay(policy: str, specs, nodes: int = NODES) -> dict:
    """One policy on the fixed pool until every job is done; JPT, JCT, makespan (s), and the share
    of the pending time that falls on one-GPU jobs (req_res 1 = min_res: no elastic rule can start
    them earlier)."""
    alloc, admission, objective = POLICIES[policy]
    t0 = time.perf_counter()
    horizon = 400 * 3600.0
    res = simulate(fixed_pool(nodes, 0.0, horizon), specs, allocator=alloc,
                   opts=AllocOptions(tfwd_s=120.0, objective=objective), pj_max=10**6, admission=admission,
                   check=False)
    tr = res.trainers
    done = tr[tr["completed"]]
    if len(done) != len(tr):
        raise RuntimeError(f"{policy}: only {len(done)} of {len(tr)} jobs finished in {horizon / 3600:g} h")
    one = tr["id"].map({s.id: s.request_nodes == 1 for s in specs}).astype(bool)
    q = float(tr["queue_s"].sum())
    return {"policy": policy, "jobs": int(len(tr)), "jpt_s": float(tr["queue_s"].mean()),
            "jct_s": float(done["jct_s"].mean()),
            "makespan_s": float(done["end_s"].max() - tr["submit_s"].min()),
            "rescales": int(tr["rescales"].sum()), "one_gpu_jobs": int(one.sum()),
            "mean_gpus": float(done["mean_nodes"].mean()),
            "jpt_one_gpu_share": float(tr.loc[one, "queue_s"].sum()) / q if q > 0 else None,
            "wall_s": time.perf_counter() - t0}


def _task(task) -> dict:
    """One replay of the study: (policy, runtime, every, workload knobs)."""
    policy, runtime, every, kw = task
    kw = dict(kw)
    every = kw.pop("every", every)  # a down-sampling experiment's own factor
    return replay(policy, workload(runtime, every=every, **kw))


# The isolating experiments: each changes exactly one thing of our setting toward the paper's
# (key, what changed, workload knobs); every one is replayed as FIFO and E-FIFO.
EXPERIMENTS = (
    ("load x2", "arrivals twice as dense (the 48 h compressed into 5 h, not 10)", {"target_h": 5.0}),
    ("load x0.5", "arrivals half as dense (the 48 h compressed into 20 h)", {"target_h": 20.0}),
    ("sizes x4", "every job asks 4x its GPUs for a quarter of its run time (the same GPU-hours; no one-GPU "
                 "job is left, so every job has min_res < req_res)", {"size_factor": 4}),
    ("max_res 16x", "max_res 16 x req_res instead of 4 x (a wider elastic range)", {"max_factor": 16}),
    ("runs x10/48", "run times compressed by 10/48 like the arrivals (the whole two days into ten hours: Elan's "
                    "trace is down-sampled 'to make it finish within 10 hours'; ours keeps the run times)",
     {"run_scale": TARGET_H / WINDOW_H}),
    *((f"every {n}{th}", f"the trace down-sampled to every {n}{th} job ({jobs} of 1,598) instead of every 2nd "
       "(Elan 'down-sample[s] a two-day trace to make it finish within 10 hours' without saying by how much)",
       {"every": n}) for n, th, jobs in ((3, "rd", 533), (4, "th", 400), (8, "th", 200))),
    ("linear speed", "every job's speed linear in its GPUs (O(k) = k O(1), as with Elan's hybrid scaling at its "
                     "best) instead of the measured curves", {"linear": True}),
)
DOWN_SAMPLES = ("every 3rd", "every 4th", "every 8th")
SR_EXPERIMENTS = ("sizes x4", "runs x10/48") + DOWN_SAMPLES  # also replayed under the ideal and the S&R runtimes
QUICK_EXPERIMENTS = ("load x2", "sizes x4", "runs x10/48")  # --quick runs these (and S&R at 80 s) only
# other samples of the trace at the study's and one experiment's factor (every n-th job from job k + 1),
# replayed as FIFO and E-FIFO by the full run: does the down-sampling's effect hold beyond one sample?
OFFSET_SAMPLES = ((2, 1), (4, 1), (4, 2), (4, 3))
SR_HIGH_S = 80.0  # the top of Elan's "10~80x faster on scaling in or out than S&R" (Fig. 15), Elan at ~1 s


def pct(new: float, old: float) -> float:
    """The change from old to new in %; from 0 (no pending time at all, possible in the quick
    run's thin sample): 0 when new is 0 too, else +100 (a rise from nothing)."""
    if old == 0:
        return 0.0 if new == 0 else 100.0
    return 100.0 * (new - old) / old


PLANNER = {"pool": "fixed", "pool_size": NODES, "hours": 24.0, "workload": "philly", "allocator": "elan",
           "baseline": "static", "pj_max": 10_000, "runtime": "elan", "rup": 1.0, "rdw": 1.0}
PLANNER_NOTE = ("128 nodes, the shipped Philly workload (its 6-GPU node mapping, not the study's 1 GPU = 1 node), "
                "Elan's rule (E-FIFO) and runtime against static FIFO, the paper's baseline")


RULE = ("Elan (E-FIFO / E-BF): admit a waiting job FIFO while its min_res < free nodes (free = pool - "
        "admitted minima; E-BF admits past a blocked job), every admitted job at min_res, then one node at a "
        "time to the largest drop in estimated completion time (Optimus' gain) until none is positive")


def run(quick: bool = False, progress=None, workers: int | None = None) -> dict:
    """The study; its replays run on `workers` processes (default: 1 for --quick, 2 for the full run's
    20 replays of about 10-40 s each)."""
    wall0 = time.perf_counter()
    workers = (1 if quick else 2) if workers is None else workers
    every = 4 if quick else DOWN_SAMPLE
    specs = workload("elan", every=every)
    setting = (f"Philly {SINCE[:10]} + {WINDOW_H:g} h, jobs <= 10 h ({len(specs)} jobs"
               + (f", every {every}{'nd' if every == 2 else 'th'}" if every > 1 else "") + "), arrivals x 10/48, "
               f"1 GPU = 1 node, {NODES} nodes, min_res 1, max_res 4 req_res, Elan runtime (1 s rescale)")
    names = list(POLICIES)
    # Fig. 22: E-FIFO under the ideal and the stop-and-restart runtimes; then the experiments
    tasks = {p: (p, "elan", every, {}) for p in names}
    tasks.update({f"E-FIFO, {n}": ("E-FIFO", n, every, {}) for n in ("ideal", "stop-restart")})
    exps = [e for e in EXPERIMENTS if not quick or e[0] in QUICK_EXPERIMENTS]
    for key, _, kw in exps:
        tasks.update({f"{p}, {key}": (p, "elan", every, kw) for p in ("FIFO", "E-FIFO")})
    tasks[f"E-FIFO, stop-restart {SR_HIGH_S:g} s"] = ("E-FIFO", "stop-restart", every, {"rescale_s": SR_HIGH_S})
    if not quick:
        for key, _, kw in EXPERIMENTS:
            if key in SR_EXPERIMENTS:
                tasks.update({f"{p}, {key}": (p, "elan", every, kw) for p in ("BF", "E-BF")})
                tasks.update({f"E-FIFO, {n}, {key}": ("E-FIFO", n, every, kw) for n in ("ideal", "stop-restart")})
        for n, k in OFFSET_SAMPLES:
            tasks.update({f"{p}, every {n}{'nd' if n == 2 else 'th'} offset {k}": (p, "elan", every,
                                                                                   {"every": n, "offset": k})
                          for p in ("FIFO", "E-FIFO")})
    keys = list(tasks)
    out: dict = {}
    if workers > 1:
        with process_pool(workers) as ex:
            for i, (k, r) in enumerate(zip(keys, ex.map(_task, [tasks[k] for k in keys]))):
                out[k] = r
                if progress:
                    progress((i + 1) / len(keys))
    else:
        for i, k in enumerate(keys):
            out[k] = _task(tasks[k])
            if progress:
                progress((i + 1) / len(keys))
    result = {"paper": "elan", "quick": bool(quick), "rule": RULE, "runs": out,
              "setting": {"nodes": NODES, "since": SINCE, "window_h": WINDOW_H, "every": every,
                          "compress": TARGET_H / WINDOW_H, "max_run_h": MAX_RUN_S / 3600, "jobs": len(specs),
                          "text": setting}}
    result.update(derive(result))
    result["wall_s"] = time.perf_counter() - wall0
    return result


def derive(result: dict) -> dict:
    """The rows (each with its isolating experiments, rows[i]["experiments"]) and the cut from a run's
    replays (`result["runs"]`), so that the rows of a committed run can be re-derived without replaying."""
    out, quick, every, setting = (result["runs"], result["quick"], result["setting"]["every"],
                                  result["setting"]["text"])
    names = list(POLICIES)
    exps = [e for e in EXPERIMENTS if f"E-FIFO, {e[0]}" in out]
    res = {p: out[p] for p in names}
    rt = {n: out[f"E-FIFO, {n}"] for n in ("ideal", "stop-restart")}
    rows = []
    paper_setting = ("Sensetime trace, two days down-sampled to finish within 10 h, 128 GPUs, each job's "
                     "min_res/req_res/max_res, throughput and rescaling measured on Elan; 3 runs")
    nth = f"{every}{'nd' if every == 2 else 'th'}"
    on = f"measured on E-FIFO vs FIFO at the study's own down-sampling (every {nth} job)"
    experiments = []
    for metric, key in (("jpt", "jpt_s"), ("jct", "jct_s")):
        before = pct(res["E-FIFO"][key], res["FIFO"][key])
        for ek, change, _ in exps:
            after = pct(out[f"E-FIFO, {ek}"][key], out[f"FIFO, {ek}"][key])
            experiments.append({"row": metric, "pair": "E-FIFO vs FIFO", "key": ek, "change": change, "unit": "%",
                                "before": round(before, 1), "after": round(after, 1), "paper": PAPER_VALUES[metric],
                                "closes": round(closes(before, after, PAPER_VALUES[metric]), 3)})
        after = pct(rt["ideal"][key], res["FIFO"][key])
        experiments.append({"row": metric, "pair": "E-FIFO vs FIFO", "key": "ideal", "unit": "%",
                            "change": "no rescaling cost (the ideal runtime, 0 s, instead of Elan's 1 s)",
                            "before": round(before, 1), "after": round(after, 1), "paper": PAPER_VALUES[metric],
                            "closes": round(closes(before, after, PAPER_VALUES[metric]), 3)})
        for ek, change, _ in EXPERIMENTS:
            if f"E-BF, {ek}" not in out:
                continue
            before = pct(res["E-BF"][key], res["BF"][key])
            after = pct(out[f"E-BF, {ek}"][key], out[f"BF, {ek}"][key])
            experiments.append({"row": metric, "pair": "E-BF vs BF", "key": ek, "change": change, "unit": "%",
                                "before": round(before, 1), "after": round(after, 1), "paper": PAPER_VALUES[metric],
                                "closes": round(closes(before, after, PAPER_VALUES[metric]), 3)})
    share = res["FIFO"]["jpt_one_gpu_share"]
    mechanism = {"sizes x4": (
                 f"Mechanism: {res['FIFO']['one_gpu_jobs']} of {res['FIFO']['jobs']} Philly jobs ask for one "
                 f"GPU (req_res = min_res = 1) and hold {100 * share:.0f} % of FIFO's pending time "
                 f"(E-FIFO: {100 * res['E-FIFO']['jpt_one_gpu_share']:.0f} %); Elan starts a job earlier only "
                 "when min_res < req_res, so on Philly's mix there is little to gain. Sensetime's job sizes "
                 "are not published, so this is the job-size mix of the trace, not a fault of the rule"
                 ) if share is not None else ""}
    if "FIFO, runs x10/48" in out:
        f0, f1, e1 = out["FIFO"], out["FIFO, runs x10/48"], out["E-FIFO, runs x10/48"]
        runs_mech = (f"With the run times compressed too, FIFO's makespan is {f1['makespan_s'] / 3600:.1f} h "
                     f"(ours {f0['makespan_s'] / 3600:.1f} h; E-FIFO {e1['makespan_s'] / 3600:.1f} h), close to the "
                     "paper's 'finish within 10 hours'; E-FIFO's jobs then run on "
                     + (f"{e1['mean_gpus']:.2f} GPUs on average against FIFO's {f1['mean_gpus']:.2f} "
                        if "mean_gpus" in e1 and "mean_gpus" in f1 else "more GPUs ")
                     + f"(mean JCT {e1['jct_s'] / 60:.1f} vs FIFO {f1['jct_s'] / 60:.1f} min, pending "
                     f"{e1['jpt_s'] / 60:.1f} vs {f1['jpt_s'] / 60:.1f} min); the paper does not say whether it "
                     "compressed run times, so this is the reading that fits its 10 hours, not a confirmed setting")
        mechanism["runs x10/48"] = runs_mech
        if "E-FIFO, stop-restart, runs x10/48" in out:
            sr_runs = pct(out["E-FIFO, stop-restart, runs x10/48"]["jct_s"], out["E-FIFO, ideal, runs x10/48"]["jct_s"])
            mechanism["runs x10/48"] += (f"; the same change sends S&R's penalty over ideal to {sr_runs:+.1f} % "
                                         f"(paper {PAPER_VALUES['sr_jct']:+g} %)")
    down = _down_sample_mechanism(out)
    for metric, key, label in (("jpt", "jpt_s", "mean job pending time"), ("jct", "jct_s", "mean JCT"),
                               ("makespan", "makespan_s", "makespan")):
        for el, st in (("E-FIFO", "FIFO"), ("E-BF", "BF")):
            v = pct(res[el][key], res[st][key])
            ok = v <= PAPER_VALUES[metric]
            verdict = "yes" if ok else ("partly" if v < 0 else "no")
            mine = [e for e in experiments if e["row"] == metric and e["pair"] == f"{el} vs {st}"]
            mech = {k: v for k, v in mechanism.items() if metric == "jpt" or k != "sizes x4"}
            # the down-sampling's mechanism once per row: on the sample that explains it, else the one past it
            first = next((e["key"] for e in sorted(mine, key=lambda e: not 0.5 <= e["closes"] <= 1.5)
                          if e["key"] in DOWN_SAMPLES and e["closes"] >= 0.5), None)
            if down and first:
                mech[first] = down
            if el == "E-BF":
                shared = [e for e in experiments if e["row"] == metric and e["pair"] == "E-FIFO vs FIFO"
                          and not any(m["key"] == e["key"] for m in mine)]
                why = explain(mine, mech) if mine else "not yet explained"
                if shared:
                    why += "; changes " + on + ": " + "; ".join(experiment_text(e) for e in shared)
            else:
                why = explain(mine, mech) + (f" ({on})" if mine else "")
            rows.append(dict(row(
                f"{el} vs {st}: {label} reduced by {-PAPER_VALUES[metric]:g} %+", f"{label} change (%)",
                PAPER_VALUES[metric], paper_setting, round(v, 1),
                f"{setting}; {el} {res[el][key] / 60:,.1f} min vs {st} {res[st][key] / 60:,.1f} min"
                if key != "makespan_s" else
                f"{setting}; {el} {res[el][key] / 3600:,.2f} h vs {st} {res[st][key] / 3600:,.2f} h",
                verdict, f"agrees: {v:+.1f} % is at least the paper's {PAPER_VALUES[metric]:+g} % (yes: at least "
                "the paper's reduction; partly: a smaller reduction)" if verdict == "yes" else
                f"verdict: yes at a reduction of {-PAPER_VALUES[metric]:g} % or more, partly at a smaller one. " + why),
                **({"experiments": mine + (shared if el == "E-BF" else [])} if mine or el == "E-BF" and shared
                   else {})))
    prev, efifo, fifo = res["previous (min-fits + dp, progress)"], res["E-FIFO"], res["FIFO"]
    rows.append(row(
        "Elan's own rule, not the project's previous elastic policy, is what lowers pending time (issue 22's "
        "check, not a headline of the paper)",
        "mean job pending time change vs FIFO (%)", PAPER_VALUES["jpt"], paper_setting,
        round(pct(prev["jpt_s"], fifo["jpt_s"]), 1),
        f"{setting}; previous policy (admission min-fits, dp on the progress objective) "
        f"{prev['jpt_s'] / 60:,.1f} min vs E-FIFO {efifo['jpt_s'] / 60:,.1f} min vs FIFO {fifo['jpt_s'] / 60:,.1f} min",
        "yes" if efifo["jpt_s"] < prev["jpt_s"] else "no",
        "not a claim of the paper (it has no such policy; the paper's value beside it is E-FIFO's reduction): the "
        "check that the project's previous elastic policy is not Elan's. Verdict: yes when Elan's rule (E-FIFO) "
        "gives a lower mean pending time than the previous policy. Measured by changing only the allocator (same "
        f"jobs, pool, runtime): the previous policy {pct(prev['jpt_s'], fifo['jpt_s']):+.1f} % vs FIFO, Elan's rule "
        f"{pct(efifo['jpt_s'], fifo['jpt_s']):+.1f} %"))
    sr = pct(rt["stop-restart"]["jct_s"], rt["ideal"]["jct_s"])
    el = pct(efifo["jct_s"], rt["ideal"]["jct_s"])
    sr_exp = [
        {"row": "sr", "key": f"S&R {SR_HIGH_S:g} s", "unit": "%",
         "change": f"S&R at {SR_HIGH_S:g} s per rescale (the top of the paper's '10~80x' Elan's ~1 s) instead of 28 s",
         "after": pct(out[f"E-FIFO, stop-restart {SR_HIGH_S:g} s"]["jct_s"], rt["ideal"]["jct_s"])},
    ] + [{"row": "sr", "key": key, "change": change, "unit": "%",
          "after": pct(out[f"E-FIFO, stop-restart, {key}"]["jct_s"], out[f"E-FIFO, ideal, {key}"]["jct_s"])}
         for key, change, _ in EXPERIMENTS if f"E-FIFO, ideal, {key}" in out]
    for e in sr_exp:
        e.update(before=round(sr, 1), after=round(e["after"], 1), paper=PAPER_VALUES["sr_jct"],
                 closes=round(closes(sr, e["after"], PAPER_VALUES["sr_jct"]), 3))
    sr_ok = 3.0 <= sr <= 12.0 and abs(el) < 2.0
    rows.append(dict(row(
        "S&R raises JCT by 6 % over the ideal system; Elan about equal to ideal", "mean JCT change vs ideal (%)",
        PAPER_VALUES["sr_jct"], paper_setting + "; Fig. 22", round(sr, 1),
        f"{setting}; E-FIFO with stop-restart (28 s per rescale) vs ideal (0 s); Elan runtime (1 s): {el:+.1f} %",
        "yes" if sr_ok else ("partly" if sr > 0 and abs(el) < 2.0 else "no"),
        f"agrees: S&R {sr:+.1f} % and Elan {el:+.1f} % over ideal (yes: S&R +3 to +12 %, Elan within 2 %)"
        if sr_ok else f"verdict: yes at S&R +3 to +12 % over ideal with Elan within 2 %, partly at S&R above ideal "
        f"with Elan within 2 % (Elan {el:+.1f} %). "
        + explain(sr_exp, {f"S&R {SR_HIGH_S:g} s": (
            "S&R's penalty is its cost per rescale times the rescales; the paper gives S&R's scaling only as "
            "10-80x Elan's ~1 s, and our 28 s is that range's geometric mean")})), experiments=sr_exp))
    cut = ("every 4th job of the 48 h window instead of every 2nd (half the jobs, less contention), the "
           "experiments too, and only 2x arrivals, 4x job sizes, compressed run times and S&R at 80 s of them"
           if quick else "")
    return {"cut": cut, "rows": rows}


def _down_sample_mechanism(out: dict) -> str:
    """What the down-sampling experiments show, from the runs (the study's own every 2nd and the
    `every n` experiments; other samples at the same factors, `... offset k`: OFFSET_SAMPLES, full run only)."""
    pts = [("2nd", "FIFO", "E-FIFO")] + [(k.split()[1], f"FIFO, {k}", f"E-FIFO, {k}") for k in DOWN_SAMPLES
                                         if f"E-FIFO, {k}" in out]
    if len(pts) < 2:
        return ""
    jct = " / ".join(f"{pct(out[e]['jct_s'], out[f]['jct_s']):+.1f}" for _, f, e in pts)
    gpus = [(out[f].get("mean_gpus"), out[e].get("mean_gpus")) for _, f, e in pts]
    text = (f"Mechanism: the down-sampling sets the contention. E-FIFO vs FIFO mean JCT at every "
            f"{' / '.join(n for n, _, _ in pts)} job: {jct} %")
    shown = [(n, g) for (n, _, _), g in zip(pts, gpus) if None not in g]
    if shown:
        text += ("; with fewer jobs E-FIFO's jobs find idle GPUs to scale out to (mean GPUs per job, E-FIFO vs "
                 "FIFO: " + ", ".join(f"{g[1]:.2f} vs {g[0]:.2f} at every {n}" for n, g in shown) + ")")
    idle = [n for n, f, e in pts if out[f]["jpt_s"] == 0 and out[e]["jpt_s"] == 0]
    if idle:
        text += f"; at every {' and '.join(idle)} no job waits at all"
    samples = [k[len("FIFO, "):] for k in sorted(out) if k.startswith("FIFO, ") and " offset " in k]
    other = [(k, pct(out[f"E-FIFO, {k}"]["jct_s"], out[f"FIFO, {k}"]["jct_s"])) for k in samples
             if f"E-FIFO, {k}" in out]
    if other:
        text += (". Other samples at the same factors (offset k: from the trace's job k + 1) agree ("
                 + "; ".join(f"{k}: {v:+.1f} %" for k, v in other) + ")")
    return (text + ". Elan gives neither its factor nor the Sensetime trace's load, so this shows that the size "
            "of the JCT reduction follows the contention the down-sampling leaves, not which factor Elan used")


def rewhy(result: dict) -> dict:
    """The rows (their experiments and whys) from the committed replays, replaying nothing (common.rewhy)."""
    return dict(result, **derive(result))


if __name__ == "__main__":  # pragma: no cover
    print(json.dumps(run(quick=True), indent=1))
