"""ModelArts' cloud-pool study: queueing time vs pool size, horizon-milp vs greedy.

    python scripts/modelarts_study.py                 # Philly jobs, writes docs/horizon.md
    python scripts/modelarts_study.py --workload poisson --no-doc
    python scripts/modelarts_study.py --quick         # 3 pool sizes, no robustness runs

Setting (docs/horizon.md explains it): a fixed pool of P nodes (70..190, step 20), the first
`--count` Philly jobs (planner.workload.generators 'philly': arrivals from the log, 1 GPU -> 1 node,
Nmax 4x the request, work = what the job did in the log on a measured ImageNet curve), or the
same jobs with Poisson arrivals of the same mean rate ('poisson'). Decisions every f = 5 min
(cadence `interval`, arrivals between ticks start at once on free nodes), every job visible
to the allocator (no admission cap), a window of `--hours` hours (jobs still running at its
end count as not completed). Per pool size and allocator: mean queueing time (submit -> first
nodes), mean total time (submit -> completion), jobs completed; the same with ETA noise
(+-20 %), and with 10 % bug jobs + 10 % killed jobs; horizon-milp's solve times.

Runs on up to `--jobs` processes (default 2). Writes artifacts/modelarts_study.json and, unless
--no-doc, docs/horizon.md's study section (between the STUDY markers) and docs/img/horizon_*.png.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import study_figures  # noqa: E402  (scripts/study_figures.py)

from planner.allocators.base import AllocOptions  # noqa: E402
from planner.replay.pool import fixed_pool  # noqa: E402
from planner.replay.simulator import simulate  # noqa: E402
from planner.workload.generators import make_workload, perturb_workload  # noqa: E402

DOC = ROOT / "docs" / "horizon.md"
IMG = ROOT / "docs" / "img"
ART = ROOT / "artifacts"
BEGIN, END = "<!-- STUDY:BEGIN -->", "<!-- STUDY:END -->"
POOLS = tuple(range(70, 191, 20))
ALLOCATORS = ("greedy", "horizon-milp")
VARIANTS = {
    "base": dict(),
    "eta-noise-20": dict(eta_noise=0.2),
    "bug10-kill10": dict(bug_share=0.1, kill_share=0.1),
}


LONG = 6  # the 'long' table: every job's work and every arrival gap times this


def workload(name: str, count: int, seed: int):
    if name == "philly-long":  # same load, jobs LONG x longer relative to the step f
        return make_workload("philly", seed=seed, count=count, work_scale=LONG, time_scale=LONG)
    specs = make_workload("philly", seed=seed, count=count)
    if name == "philly":
        return specs
    if name != "poisson":
        raise SystemExit(f"unknown workload {name!r}: philly | poisson")
    # the same jobs, Poisson arrivals with the log's mean rate over the same span
    span = max(s.submit_s for s in specs)
    rng = np.random.default_rng(seed + 1)
    gaps = rng.exponential(span / max(len(specs) - 1, 1), size=len(specs))
    sub = np.concatenate([[0.0], np.cumsum(gaps[:-1])])
    return [replace(s, submit_s=float(t)) for s, t in zip(specs, sub)]


def run_one(cell: dict) -> dict:
    specs = workload(cell["workload"], cell["count"], cell["seed"])
    knobs = VARIANTS[cell["variant"]]
    if knobs:
        specs = perturb_workload(specs, seed=cell["seed"], **knobs)
    opts = AllocOptions(time_limit_s=cell["time_limit_s"], mip_gap=cell["mip_gap"],
                        horizon_steps=cell["horizon_steps"], speed_rule=cell["speed_rule"], pow2=True,
                        extra={"spare_nodes": cell["spare_nodes"]})
    pool = fixed_pool(cell["pool"], 0.0, cell["hours"] * 3600.0)
    t0 = time.perf_counter()
    res = simulate(pool, specs, allocator=cell["allocator"], opts=opts, pj_max=100_000,
                   cadence="interval", step_min=cell["step_min"],
                   scaling_delay_s=cell["scaling_delay_s"], check=False)
    s = res.summary
    dec = res.decisions
    out = dict(cell)
    out.update(
        wall_s=time.perf_counter() - t0,
        mean_queue_s=s["mean_queue_s"], p95_queue_s=s["p95_queue_s"], mean_jct_s=s["mean_jct_s"],
        completed=s["trainers_completed"], started=s["trainers_started"], arrived=s["trainers_arrived"],
        killed=s.get("trainers_killed", 0), hung=s.get("trainers_hung", 0),
        allocated_share=s["allocated_share"], decisions=s["decisions"],
        solve_s=s["solve_s"], statuses=s.get("statuses", {}),
        solve_list=[float(x) for x in dec["solve_s"]] if cell["keep_solves"] else [],
        wall_list=[float(x) for x in dec["wall_s"]] if cell["keep_solves"] else [],
        trainers_list=[int(x) for x in dec["trainers"]] if cell["keep_solves"] else [],
    )
    return out


def cells(args) -> list[dict]:
    """One cell per (table, pool, allocator). Tables: the paper's f = 5 min on Philly arrivals
    (plus the robustness variants), the same with f = 1 min, and Poisson arrivals."""
    pools = (70, 130, 190) if args.quick else tuple(args.pools)
    base = dict(count=args.count, seed=args.seed, hours=args.hours,
                time_limit_s=args.time_limit, mip_gap=args.mip_gap, horizon_steps=args.horizon_steps,
                speed_rule=args.speed_rule, scaling_delay_s=args.scaling_delay_s,
                spare_nodes=args.spare_nodes)
    tabs = [("base", args.workload, args.step_min, "base")]
    if not args.quick:
        tabs += [("eta-noise-20", args.workload, args.step_min, "eta-noise-20"),
                 ("bug10-kill10", args.workload, args.step_min, "bug10-kill10")]
        if args.fine_step_min:
            tabs.append((f"f{args.fine_step_min:g}", args.workload, args.fine_step_min, "base"))
        if args.workload == "philly" and args.poisson:
            tabs.append(("poisson", "poisson", args.step_min, "base"))
        if args.workload == "philly" and args.long:
            tabs.append(("long", "philly-long", args.step_min, "base"))
    out = []
    for name, wl, f, v in tabs:
        for p in pools:
            for a in ALLOCATORS:
                c = dict(base, table=name, workload=wl, step_min=f, variant=v, pool=p, allocator=a,
                         keep_solves=(a == "horizon-milp"))
                if wl == "philly-long":
                    c["hours"] = args.hours * LONG
                out.append(c)
    # the slow ones first (small pools, short steps, horizon-milp) so both processes stay busy
    out.sort(key=lambda c: (c["allocator"] != "horizon-milp", c["workload"] != "philly-long",
                            c["step_min"], c["pool"]))
    return out


def change(new, old):
    return 100.0 * (new - old) / old if old and math.isfinite(old) and math.isfinite(new) else math.nan


def tables(rows: list[dict]) -> dict[str, pd.DataFrame]:
    df = pd.DataFrame(rows)
    out = {}
    for v, g in df.groupby("table", sort=False):
        gg = g[g.allocator == "greedy"].set_index("pool")
        hh = g[g.allocator == "horizon-milp"].set_index("pool")
        t = pd.DataFrame({
            "pool": gg.index,
            "greedy_queue_s": gg.mean_queue_s.values,
            "horizon_queue_s": hh.loc[gg.index].mean_queue_s.values,
            "greedy_total_s": gg.mean_jct_s.values,
            "horizon_total_s": hh.loc[gg.index].mean_jct_s.values,
            "greedy_completed": gg.completed.values,
            "horizon_completed": hh.loc[gg.index].completed.values,
            "horizon_solve_mean_s": [d["mean"] for d in hh.loc[gg.index].solve_s.values],
        })
        t["queue_change_pct"] = [change(a, b) for a, b in zip(t.horizon_queue_s, t.greedy_queue_s)]
        t["total_change_pct"] = [change(a, b) for a, b in zip(t.horizon_total_s, t.greedy_total_s)]
        t["extra_per_100"] = [change(a, b) for a, b in zip(t.horizon_completed, t.greedy_completed)]
        out[v] = t.sort_values("pool").reset_index(drop=True)
    return out


def md_table(t: pd.DataFrame) -> str:
    head = ("| pool | queue greedy (s) | queue horizon (s) | change | total greedy (s) | total horizon (s) "
            "| change | completed greedy | completed horizon | extra per 100 | horizon solve mean (s) |")
    lines = [head, "|" + "---:|" * 11]
    def pct(x):
        return "–" if not math.isfinite(x) else f"{x:+.0f} %"

    for _, r in t.iterrows():
        lines.append(
            f"| {int(r.pool)} | {r.greedy_queue_s:.0f} | {r.horizon_queue_s:.0f} | {pct(r.queue_change_pct)} "
            f"| {r.greedy_total_s:.0f} | {r.horizon_total_s:.0f} | {pct(r.total_change_pct)} "
            f"| {int(r.greedy_completed)} | {int(r.horizon_completed)} | {r.extra_per_100:+.1f} "
            f"| {r.horizon_solve_mean_s:.3f} |")
    return "\n".join(lines)


def figures(tabs: dict, rows: list[dict]) -> dict:
    import plotly.graph_objects as go

    figs = {}
    names = {"base": "", "eta-noise-20": " (ETA noise +-20 %)", "bug10-kill10": " (10 % bug, 10 % killed)",
             "poisson": " (Poisson arrivals)", "long": f" (jobs x{LONG} longer)"}
    dashes = {"base": "solid", "eta-noise-20": "dash", "bug10-kill10": "dot", "poisson": "longdash",
              "long": "dashdot"}
    f = go.Figure()
    for v, t in tabs.items():
        dash = dashes.get(v, "dashdot")
        f.add_trace(go.Scatter(x=t.pool, y=t.greedy_queue_s.clip(lower=1.0), name="greedy" + names.get(v, f" ({v})"),
                               line=dict(color="#1f77b4", dash=dash)))
        f.add_trace(go.Scatter(x=t.pool, y=t.horizon_queue_s.clip(lower=1.0),
                               name="horizon-milp" + names.get(v, f" ({v})"),
                               line=dict(color="#d62728", dash=dash)))
    f.update_layout(title="Mean queueing time vs pool size (log axis; below 1 s drawn at 1 s)",
                    xaxis_title="pool size (nodes)", yaxis_title="mean queueing time (s)", yaxis_type="log")
    figs["horizon_queue_vs_pool"] = f
    f = go.Figure()
    for v, t in tabs.items():
        dash = dashes.get(v, "dashdot")
        f.add_trace(go.Scatter(x=t.pool, y=t.greedy_total_s, name="greedy" + names.get(v, f" ({v})"),
                               line=dict(color="#1f77b4", dash=dash)))
        f.add_trace(go.Scatter(x=t.pool, y=t.horizon_total_s, name="horizon-milp" + names.get(v, f" ({v})"),
                               line=dict(color="#d62728", dash=dash)))
    f.update_layout(title="Mean total time (submit to completion) vs pool size (log axis)",
                    xaxis_title="pool size (nodes)", yaxis_title="mean total time (s)", yaxis_type="log")
    figs["horizon_total_vs_pool"] = f
    solves = [x for r in rows if r["allocator"] == "horizon-milp" and r["table"] == "base"
              for x in r["solve_list"]]
    f = go.Figure(go.Histogram(x=solves, nbinsx=60, marker_color="#d62728"))
    f.update_layout(title=f"horizon-milp solve time per decision ({len(solves)} decisions, all pool sizes)",
                    xaxis_title="HiGHS solve seconds", yaxis_title="decisions", yaxis_type="log")
    figs["horizon_solve_hist"] = f
    for fig in figs.values():
        fig.update_layout(width=900, height=460, template="plotly_white", margin=dict(l=60, r=20, t=60, b=50))
    return figs


def write_figures(figs: dict, log) -> list[str]:
    return study_figures.write_figures(figs, IMG, "horizon_figures.html", "ModelArts study", log)


def solve_stats(rows: list[dict], pool: int | None = None) -> dict:
    xs = [x for r in rows if r["allocator"] == "horizon-milp" and r["table"] == "base"
          and (pool is None or r["pool"] == pool) for x in r["solve_list"]]
    ws = [x for r in rows if r["allocator"] == "horizon-milp" and r["table"] == "base"
          and (pool is None or r["pool"] == pool) for x in r["wall_list"]]
    js = [x for r in rows if r["allocator"] == "horizon-milp" and r["table"] == "base"
          and (pool is None or r["pool"] == pool) for x in r["trainers_list"]]
    if not xs:
        return {}
    a, w = np.asarray(xs), np.asarray(ws)
    return dict(decisions=len(xs), mean=float(a.mean()), median=float(np.median(a)),
                p95=float(np.percentile(a, 95)), max=float(a.max()),
                wall_mean=float(w.mean()), wall_median=float(np.median(w)),
                wall_p95=float(np.percentile(w, 95)),
                jobs_median=float(np.median(js)), jobs_max=int(max(js)))


def section(res: dict, tabs: dict, pngs: list[str]) -> str:
    p = res["params"]
    st, st70 = res["solve_all"], res["solve_70"]
    base = tabs["base"]
    best = base.queue_change_pct.min()
    out = [BEGIN, "",
           f"_Generated by `python scripts/modelarts_study.py` on {res['date']} in {res['wall_s']:.0f} s "
           f"(2 processes on a shared 2-core machine). Workload `{p['workload']}`: the first {p['count']} "
           f"Philly jobs from 2017-10-02; window {p['hours']} h; T = {p['horizon_steps']} steps of "
           f"f = {p['step_min']:g} min; speed rule `{p['speed_rule']}`; MIP gap {p['mip_gap']:g}, "
           f"time limit {p['time_limit_s']:g} s per decision._", ""]
    out += ["### Queueing and total time by pool size", "", md_table(base), ""]
    for v, t in tabs.items():
        if v == "base":
            continue
        title = {"eta-noise-20": "With ETA noise (+-20 %, the allocator sees a noisy ETA)",
                 "bug10-kill10": "With 10 % bug jobs and 10 % jobs killed by users",
                 "poisson": "Poisson arrivals (same jobs, same mean rate)",
                 "long": f"Longer jobs: work and arrival gaps x{LONG} (same load), window x{LONG}"}.get(v)
        if title is None and v.startswith("f"):
            title = f"Shorter steps: f = {v[1:]} min (T = {p['horizon_steps']}), decisions every {v[1:]} min"
        title = title or v
        out += [f"### {title}", "", md_table(t), ""]
    for png in pngs:
        out += [f"![{png}](img/{png})", ""]
    if not pngs:
        out += ["Figures: [docs/img/horizon_figures.html](img/horizon_figures.html)", ""]
    out += ["### Solve time of horizon-milp",
            "",
            f"Over all base runs: {st.get('decisions', 0)} decisions, HiGHS solve mean "
            f"{st.get('mean', math.nan):.3f} s, median {st.get('median', math.nan):.3f} s, p95 "
            f"{st.get('p95', math.nan):.3f} s, max {st.get('max', math.nan):.2f} s. On the 70-node pool: "
            f"{st70.get('decisions', 0)} decisions with a median of {st70.get('jobs_median', math.nan):.0f} jobs "
            f"(max {st70.get('jobs_max', 0)}) in the model; solve mean {st70.get('mean', math.nan):.3f} s, "
            f"median {st70.get('median', math.nan):.3f} s, p95 {st70.get('p95', math.nan):.3f} s; build + "
            f"solve (the allocator's wall time) median {st70.get('wall_median', math.nan):.3f} s, p95 "
            f"{st70.get('wall_p95', math.nan):.3f} s.", "",
            f"Largest queueing-time reduction in the base runs: {-best:.0f} % "
            f"(pool {int(base.loc[base.queue_change_pct.idxmin(), 'pool'])}).", "",
            END]
    return "\n".join(out)


def write_doc(text: str):
    DOC.parent.mkdir(parents=True, exist_ok=True)
    doc = DOC.read_text() if DOC.exists() else f"# horizon-milp\n\n{BEGIN}\n{END}\n"
    if BEGIN in doc and END in doc:
        a, b = doc.index(BEGIN), doc.index(END) + len(END)
        doc = doc[:a] + text + doc[b:]
    else:
        doc = doc.rstrip() + "\n\n" + text + "\n"
    DOC.write_text(doc)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workload", default="philly", help="philly | poisson")
    ap.add_argument("--count", type=int, default=500)
    ap.add_argument("--hours", type=float, default=8.0)
    ap.add_argument("--pools", type=lambda s: [int(x) for x in s.split(",")], default=list(POOLS))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--horizon-steps", type=int, default=5)
    ap.add_argument("--step-min", type=float, default=5.0)
    ap.add_argument("--speed-rule", default="curve")
    ap.add_argument("--time-limit", type=float, default=1.0)
    ap.add_argument("--mip-gap", type=float, default=1e-3)
    ap.add_argument("--scaling-delay-s", type=float, default=0.0)
    ap.add_argument("--spare-nodes", default="spread", help="horizon-milp's spare-node rule: spread | fewest | none")
    ap.add_argument("--fine-step-min", type=float, default=0.0,
                    help="also run the base table with this step length (0: skip)")
    ap.add_argument("--no-poisson", dest="poisson", action="store_false",
                    help="skip the Poisson-arrival table")
    ap.add_argument("--no-long", dest="long", action="store_false",
                    help=f"skip the table with {LONG}x longer jobs and {LONG}x sparser arrivals")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--no-doc", action="store_true")
    ap.add_argument("--json", default=None, help="results file (default artifacts/modelarts_study[_poisson].json)")
    args = ap.parse_args(argv)

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    t0 = time.perf_counter()
    todo = cells(args)
    log(f"{len(todo)} runs on {args.jobs} processes")
    rows = []
    if args.jobs > 1:
        with ProcessPoolExecutor(max_workers=args.jobs) as ex:
            for r in ex.map(run_one, todo):
                rows.append(r)
                log(f"  {r['table']:13s} P={r['pool']:3d} {r['allocator']:12s} queue {r['mean_queue_s']:7.0f} s "
                    f"total {r['mean_jct_s']:7.0f} s completed {r['completed']} ({r['wall_s']:.0f} s)")
    else:
        for c in todo:
            r = run_one(c)
            rows.append(r)
            log(f"  {r['table']:13s} P={r['pool']:3d} {r['allocator']:12s} queue {r['mean_queue_s']:7.0f} s "
                f"total {r['mean_jct_s']:7.0f} s completed {r['completed']} ({r['wall_s']:.0f} s)")
    tabs = tables(rows)
    res = dict(date=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
               wall_s=time.perf_counter() - t0,
               params=dict(workload=args.workload, count=args.count, hours=args.hours, seed=args.seed,
                           horizon_steps=args.horizon_steps, step_min=args.step_min,
                           speed_rule=args.speed_rule, time_limit_s=args.time_limit, mip_gap=args.mip_gap,
                           scaling_delay_s=args.scaling_delay_s, spare_nodes=args.spare_nodes),
               solve_all=solve_stats(rows), solve_70=solve_stats(rows, min(r["pool"] for r in rows)),
               tables={k: v.to_dict(orient="records") for k, v in tabs.items()},
               runs=[{k: v for k, v in r.items() if not k.endswith("_list")} for r in rows])
    ART.mkdir(exist_ok=True)
    path = Path(args.json) if args.json else ART / (
        "modelarts_study.json" if args.workload == "philly" else f"modelarts_study_{args.workload}.json")
    path.write_text(json.dumps(res, indent=1, default=float))
    for v, t in tabs.items():
        print(f"\n[{v}]\n" + md_table(t))
    print(json.dumps({"solve_all": res["solve_all"], "solve_70": res["solve_70"],
                      "wall_s": res["wall_s"]}, indent=1))
    if not args.no_doc:
        pngs = write_figures(figures(tabs, rows), log)
        res["wall_s"] = time.perf_counter() - t0
        write_doc(section(res, tabs, pngs))
        log(f"wrote {DOC.relative_to(ROOT)} and {len(pngs)} figures")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
