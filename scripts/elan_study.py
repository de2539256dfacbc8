"""Elan's scheduling study on the planner: elastic vs static, and what rescaling speed buys.

    python scripts/elan_study.py            # writes docs/papers.md's Elan section + docs/img/elan_*.png
    python scripts/elan_study.py --no-doc   # print and write artifacts/elan_study.json only

Elan (ICDCS'20, ../shared/papers/elan.txt, Sec. VI-C) replays a down-sampled two-day trace of a
128-GPU cluster under static FIFO and Backfill and their elastic variants (admit a job when its
min_res fits, give every running job min_res, then workers by marginal gain), and reports
"JPT is reduced by 43%+, JCT is reduced by 25%+, and makespan is reduced by 21%+" (Fig. 20), and
that stop-and-restart rescaling raises JCT by 6 % over an ideal system while Elan matches it
(Fig. 22). Its trace is not public; the closest shipped one is Microsoft's Philly log.

Setting here (every choice is a flag):
- pool: fixed, 21 nodes (Elan's 128 GPUs / 6 GPUs per Summit node, the philly mapping);
- jobs: the first `--count` Philly jobs (planner.workload.generators 'philly'): requested nodes
  r = ceil(GPUs/6) clipped to the pool, Nmin 1, Nmax 4r; arrivals times `--time-scale`
  (Elan compressed its trace: two days into ten hours, about 0.2);
- static: `static` (FIFO) and `static-backfill`, every job at r or waiting, no Pj_max cap;
- elastic: admission `min-fits` and an exact allocator (`dp`) or Optimus' `marginal-gain`, with
  the `progress` objective (fraction of remaining work per second: the JCT-oriented gain Elan
  takes from Optimus) and the `throughput` objective for contrast;
- rescaling costs from planner.workload.runtimes presets (`--runtime`, default `elan`); the runtime
  comparison runs the elastic dp policy under ideal / elan / elastic-horovod / stop-restart.
Metrics: JPT = mean(first nodes - submit) over all jobs; JCT = mean(completion - submit) over
completed jobs; makespan = last completion - first submit. The window is long enough for every
job to finish (checked).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import study_figures  # noqa: E402  (scripts/study_figures.py)

from planner.allocators import get  # noqa: E402
from planner.allocators.base import AllocOptions  # noqa: E402
from planner.allocators.static import allocate as static_fifo  # noqa: E402
from planner.allocators.static import allocate_backfill as static_bf  # noqa: E402
from planner.replay.pool import fixed_pool  # noqa: E402
from planner.replay.simulator import simulate  # noqa: E402
from planner.workload import runtimes  # noqa: E402
from planner.workload.generators import make_workload  # noqa: E402

DOC = ROOT / "docs" / "papers.md"
PAPER = {"jpt": -43.0, "jct": -25.0, "makespan": -21.0, "sr_jct": 6.0}


def workload(count: int, time_scale: float, pool: int, runtime: str):
    rup, rdw, _ = runtimes.costs(runtime)
    specs = make_workload("philly", count=count, time_scale=time_scale, rup_s=rup, rdw_s=rdw)
    return [replace(s, request_nodes=min(s.request_nodes or s.nmax, pool)) for s in specs]


def cost_blind(fn):
    """The allocator deciding as if rescaling were free (Elan's policy ignores its cost); the
    replay still charges every Trainer's real Rup/Rdw."""
    def blind(state, opts):
        free = replace(state, trainers=tuple(replace(t, rup_s=0.0, rdw_s=0.0) for t in state.trainers))
        return fn(free, opts)
    return blind


def run(policy: str, specs, pool: int, hours: float) -> dict:
    static = {"static-fifo": static_fifo, "static-backfill": static_bf}
    if policy in static:
        fn, adm, obj = static[policy], "fcfs", "throughput"
    else:
        alloc, obj, *blind = policy.split(":")
        fn, adm = get(alloc), "min-fits"
        fn = cost_blind(fn) if blind else fn
    t0 = time.perf_counter()
    res = simulate(fixed_pool(pool, 0.0, hours * 3600.0), specs, allocator=fn,
                   opts=AllocOptions(tfwd_s=120.0, objective=obj), pj_max=10**6, admission=adm)
    tr = res.trainers
    done = tr[tr["completed"]]
    return {"policy": policy, "jobs": int(len(tr)), "completed": int(len(done)),
            "jpt_s": float(tr["queue_s"].mean()), "jct_s": float(done["jct_s"].mean()),
            "makespan_h": float((done["end_s"].max() - tr["submit_s"].min()) / 3600.0),
            "rescales": int(tr["rescales"].sum()),
            "busy_share": float(res.summary["allocated_node_hours"]
                                / (pool * (done["end_s"].max() - tr["submit_s"].min()) / 3600.0)),
            "rescale_cost_samples": float(res.summary["rescale_cost_samples"]),
            "wall_s": time.perf_counter() - t0}


def pct(new: float, old: float) -> float:
    return 100.0 * (new - old) / old


def study(args) -> dict:
    specs = workload(args.count, args.time_scale, args.pool, args.runtime)
    policies = ["static-fifo", "static-backfill", "dp:progress", "marginal-gain:progress",
                "dp:throughput", "marginal-gain:throughput"]
    rows = [run(p, specs, args.pool, args.hours) for p in policies]
    by = {r["policy"]: r for r in rows}
    for r in rows:
        if r["completed"] != r["jobs"]:
            raise SystemExit(f"{r['policy']}: only {r['completed']} of {r['jobs']} jobs finished; raise --hours")
    rt_rows = []
    for name in ("ideal", "elan", "elastic-horovod", "stop-restart"):
        specs_rt = workload(args.count, args.time_scale, args.pool, name)
        for policy in ("dp:progress", "dp:progress:blind"):
            r = run(policy, specs_rt, args.pool, args.hours)
            r["runtime"] = name
            rt_rows.append(r)
    return {"setting": vars(args), "policies": rows, "runtimes": rt_rows,
            "elastic_vs_static": {
                base: {"jpt_pct": pct(by["dp:progress"]["jpt_s"], by[base]["jpt_s"]),
                       "jct_pct": pct(by["dp:progress"]["jct_s"], by[base]["jct_s"]),
                       "makespan_pct": pct(by["dp:progress"]["makespan_h"], by[base]["makespan_h"])}
                for base in ("static-fifo", "static-backfill")}}


def table(out: dict) -> str:
    lines = ["| policy | jobs done | mean JPT (s) | mean JCT (s) | makespan (h) | nodes busy until makespan "
             "| rescales |",
             "|---|---|---|---|---|---|---|"]
    for r in out["policies"]:
        lines.append(f"| {r['policy']} | {r['completed']:,}/{r['jobs']:,} | {r['jpt_s']:,.0f} | {r['jct_s']:,.0f} | "
                     f"{r['makespan_h']:,.1f} | {100 * r['busy_share']:.1f} % | {r['rescales']:,} |")
    lines += ["", "| elastic (dp, progress) vs | JPT | JCT | makespan |", "|---|---|---|---|",
              f"| Elan's paper (E-FIFO/E-BF vs FIFO/BF) | {PAPER['jpt']:+.0f} %+ | {PAPER['jct']:+.0f} %+ | "
              f"{PAPER['makespan']:+.0f} %+ |"]
    for base, d in out["elastic_vs_static"].items():
        lines.append(f"| planner, vs {base} | {d['jpt_pct']:+.0f} % | {d['jct_pct']:+.0f} % | "
                     f"{d['makespan_pct']:+.0f} % |")
    ideal = {r["policy"]: r["jct_s"] for r in out["runtimes"] if r["runtime"] == "ideal"}
    lines += ["", "| runtime preset | Rup/Rdw (s) | allocator sees costs | mean JCT (s) | JCT vs ideal | rescales |",
              "|---|---|---|---|---|---|"]
    for r in out["runtimes"]:
        rt = runtimes.get(r["runtime"])
        sees = "no (Elan's policy)" if r["policy"].endswith(":blind") else "yes (BFTrainer's objective)"
        lines.append(f"| {r['runtime']} | {rt.rup_s:g}/{rt.rdw_s:g} | {sees} | {r['jct_s']:,.0f} | "
                     f"{pct(r['jct_s'], ideal[r['policy']]):+.1f} % | {r['rescales']:,} |")
    lines.append(f"\nElan's paper: stop-and-restart {PAPER['sr_jct']:+.0f} % JCT over the ideal system, "
                 "Elan about equal.")
    return "\n".join(lines)


def figures(out: dict) -> dict:
    """JPT, JCT and makespan per policy (bars); JCT vs ideal per runtime preset."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    rows = out["policies"]
    fig = make_subplots(rows=1, cols=3, subplot_titles=("mean pending time (h)", "mean JCT (h)", "makespan (h)"))
    names = [r["policy"] for r in rows]
    for i, (key, scale) in enumerate((("jpt_s", 3600.0), ("jct_s", 3600.0), ("makespan_h", 1.0))):
        fig.add_bar(x=names, y=[r[key] / scale for r in rows], showlegend=False, row=1, col=i + 1,
                    marker_color=["#888" if n.startswith("static") else "#1f77b4" for n in names])
    fig.update_layout(width=1100, height=420, title="Elan's study on the planner: static (grey) vs elastic (blue)",
                      margin=dict(t=80, b=140))
    rt = out["runtimes"]
    fig2 = go.Figure()
    for pol, label in (("dp:progress", "allocator sees the costs"),
                       ("dp:progress:blind", "cost-blind (Elan's policy)")):
        pts = [r for r in rt if r["policy"] == pol]
        fig2.add_bar(x=[r["runtime"] for r in pts], y=[r["jct_s"] / 3600.0 for r in pts], name=label)
    fig2.update_layout(width=800, height=420, title="Mean JCT (h) by rescaling runtime", barmode="group",
                       legend=dict(orientation="h", y=-0.2), yaxis_title="mean JCT (h)")
    return {"elan_policies": fig, "elan_runtimes": fig2}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pool", type=int, default=21)
    ap.add_argument("--count", type=int, default=300)
    ap.add_argument("--time-scale", type=float, default=0.2)
    ap.add_argument("--hours", type=float, default=600.0)
    ap.add_argument("--runtime", default="elan", choices=list(runtimes.RUNTIMES))
    ap.add_argument("--no-doc", action="store_true")
    ap.add_argument("--from-json", default=None, help="tables and figures from a saved artifacts/elan_study.json")
    args = ap.parse_args(argv)
    out = json.loads(Path(args.from_json).read_text()) if args.from_json else study(args)
    study_figures.publish("elan_study", out, table(out), figures, DOC, "ELAN", "Elan study", args.no_doc)

if __name__ == "__main__":
    main()
