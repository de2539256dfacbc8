"""Learned vs known speed curves (Optimus' idea): how much does knowing the speed curve matter?

    python scripts/learned_curves_study.py            # writes docs/papers.md's learned-curves table
    python scripts/learned_curves_study.py --no-doc

(Optimus' own headline against DRF is `planner study optimus`, planner/studies/optimus.py.)

Optimus (EuroSys'18, ../shared/papers/optimus-summary.txt) learns each job's speed from "about 10
samples" of short runs and keeps refining it online; the planner's allocators are normally told
the measured curve. Here the same replay runs with the curve known and with it learned
(planner.workload.learning.CurveLearner: probes at 1, 2 and 4 nodes with +-`--noise` relative error,
Optimus' model fitted by NNLS, refitted from every node count a Trainer then runs on), under the
exact allocator (`dp`) and the greedy `marginal-gain` (on BFTrainer's objective; Optimus' own rule is `optimus`).
Setting: the `diverse` workload (BFTrainer's: Poisson arrivals cycling its 7 measured ImageNet
curves, Nmin 1, Nmax 64), a fixed pool of `--pool` nodes, `--hours` hours, Pj_max 10, T_fwd 120 s,
throughput objective, `--seeds` seeds. Metrics: samples processed (A_e), Trainers completed,
mean JCT of completed ones, and the belief's error at the end (mean |believed - true| / true over
each Trainer's 1..Nmax).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import study_figures  # noqa: E402  (scripts/study_figures.py)

from planner.allocators.base import AllocOptions  # noqa: E402
from planner.replay.pool import fixed_pool  # noqa: E402
from planner.replay.simulator import simulate  # noqa: E402
from planner.workload.generators import make_workload  # noqa: E402
from planner.workload.learning import CurveLearner  # noqa: E402

DOC = ROOT / "docs" / "papers.md"


def run(alloc: str, learned: bool, seed: int, args) -> dict:
    specs = make_workload("diverse", seed=seed, count=args.count)
    learner = CurveLearner(noise=args.noise, seed=seed) if learned else None
    res = simulate(fixed_pool(args.pool, 0.0, args.hours * 3600.0), specs, allocator=alloc,
                   opts=AllocOptions(tfwd_s=120.0), pj_max=10, learner=learner)
    s = res.summary
    err = None
    if learner is not None:
        errs = []
        for sp in specs:
            c = learner.curves.get(sp.id)
            if c is not None and c is not sp.curve:
                k = np.arange(1, sp.nmax + 1)
                t = np.array([sp.curve(x) for x in k])
                errs.append(float(np.mean(np.abs(np.array([c(x) for x in k]) - t) / t)))
        err = float(np.mean(errs)) if errs else None
    return {"allocator": alloc, "curve": "learned" if learned else "known", "seed": seed,
            "samples": s["samples"], "completed": s["trainers_completed"], "mean_jct_s": s["mean_jct_s"],
            "gross_samples": float(res.trainers["samples"].sum() + s["rescale_cost_samples"]
                                   + s["preemption_cost_samples"]),
            "rescale_cost_samples": s["rescale_cost_samples"], "decisions_changed": int(res.decisions["changed"].sum()),
            "belief_error": err, "refits": learner.refits if learner else 0}


def study(args) -> dict:
    rows = [run(a, lrn, s, args) for s in range(args.seeds) for a in ("dp", "marginal-gain") for lrn in (False, True)]
    df = pd.DataFrame(rows)
    agg = df.groupby(["allocator", "curve"]).agg(samples=("samples", "mean"), completed=("completed", "mean"),
                                                 mean_jct_s=("mean_jct_s", "mean"),
                                                 rescale_cost_samples=("rescale_cost_samples", "mean"),
                                                 changed=("decisions_changed", "mean"),
                                                 belief_error=("belief_error", "mean")).reset_index()
    return {"setting": vars(args), "runs": rows, "mean": agg.to_dict("records")}


def table(out: dict) -> str:
    m = {(r["allocator"], r["curve"]): r for r in out["mean"]}
    base = m[("dp", "known")]["samples"]
    lines = ["| allocator | curve | samples (A_e) | vs dp, known | rescale cost (samples) | Trainer changes | "
             "Trainers completed | mean JCT (h) | belief error at end |",
             "|---|---|---|---|---|---|---|---|---|"]
    for a in ("dp", "marginal-gain"):
        for c in ("known", "learned"):
            r = m[(a, c)]
            err = ("-" if r["belief_error"] is None or r["belief_error"] != r["belief_error"]
                   else f"{100 * r['belief_error']:.1f} %")
            lines.append(f"| {a} | {c} | {r['samples']:.4g} | {100 * (r['samples'] / base - 1):+.2f} % | "
                         f"{r['rescale_cost_samples']:.3g} | {r['changed']:,.0f} | {r['completed']:.1f} | "
                         f"{r['mean_jct_s'] / 3600:.2f} | {err} |")
    s = out["setting"]
    lines.append(f"\nMeans over {s['seeds']} seeds; fixed pool {s['pool']} nodes, {s['hours']:g} h, "
                 f"{s['count']} Trainers, probe noise +-{100 * s['noise']:g} %.")
    return "\n".join(lines)


def figures(out: dict) -> dict:
    """The seven measured Summit curves and the model fitted from 1, 2, 4, 8 nodes and from all points."""
    import numpy as np
    from plotly.subplots import make_subplots

    from planner.workload.fitcurve import fit
    from planner.workload.trainers import imagenet_curves

    curves = imagenet_curves()
    fig = make_subplots(rows=2, cols=4, subplot_titles=list(curves))
    k = np.arange(1, 65)
    for i, (_name, c) in enumerate(curves.items()):
        r, col = divmod(i, 4)
        pts = [n for n in c.nodes if n > 0]
        few = fit([1, 2, 4, 8], [c(n) for n in (1, 2, 4, 8)])
        full = fit(pts, [c(n) for n in pts])
        first = i == 0
        fig.add_scatter(x=pts, y=[c(n) for n in pts], mode="markers", name="measured (Table 2)", marker_color="black",
                        showlegend=first, row=r + 1, col=col + 1)
        fig.add_scatter(x=k, y=full.samples_per_s(k), name="fitted to all points", line_color="#1f77b4",
                        showlegend=first, row=r + 1, col=col + 1)
        fig.add_scatter(x=k, y=few.samples_per_s(k), name="fitted to 1, 2, 4, 8 nodes", line_color="#d62728",
                        line_dash="dash", showlegend=first, row=r + 1, col=col + 1)
    fig.update_xaxes(title_text="nodes")
    fig.update_layout(width=1200, height=650, title="Optimus' speed model 1/O(n) = a/n + b + c n (samples/s)",
                      legend=dict(orientation="h", y=-0.12))
    return {"optimus_fits": fig}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pool", type=int, default=128)
    ap.add_argument("--hours", type=float, default=12.0)
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--noise", type=float, default=0.05)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--no-doc", action="store_true")
    ap.add_argument("--from-json", default=None,
                    help="tables and figures from a saved artifacts/learned_curves_study.json")
    args = ap.parse_args(argv)
    out = json.loads(Path(args.from_json).read_text()) if args.from_json else study(args)
    study_figures.publish("learned_curves_study", out, table(out), figures, DOC, "LEARNED", "Learned-curves study",
                          args.no_doc)

if __name__ == "__main__":
    main()
