"""Benchmark: the survival model's fit time and its cost inside a replay (issue 15).

    python benchmarks/bench_survival.py [--db PATH] [--out artifacts/bench_survival.json]

1. Fit on the whole Summit log (4,734 nodes, 14.9 days): characterizing the fragments, then the
   landmark rows and the Cox + Kaplan-Meier fits (planner.predict.survival.fit).
2. The 14.9-day replay of bench_replay (all nodes, hpo, Pj_max 10, T_fwd 120 s, `dp`, events
   cadence) twice in this one process: today's rules, then `--tfwd adaptive --node-choice
   predicted` with that model. (The window starts at the log's start, so there is no history
   before it: the model fit on the whole log stands in. This measures cost only; the study,
   scripts/survival_study.py, fits on the past only.) Cost per decision = the predictor's own
   time (T_fwd + node map calls) / decisions.
Target (issue 15): the replay with the predictor <= 2x the replay without.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
OUT = ROOT / "artifacts" / "bench_survival.json"
TARGET_RATIO = 2.0


def run(db: str | None = None, out: str | Path | None = OUT) -> dict:
    from planner.allocators.base import AllocOptions
    from planner.idle import fragments
    from planner.idle.window import Window
    from planner.predict.replay_hooks import AdaptiveTfwd, IdlePredictor, PredictedNodes
    from planner.predict.survival import Fragments, fit
    from planner.replay.simulator import simulate
    from planner.store import catalog
    from planner.store import db as pdb
    from planner.workload.generators import make_workload

    con = pdb.connect(db)
    log = catalog.ensure_default(con)
    t0 = time.perf_counter()
    fr = Fragments.of(fragments.characterize(con, Window(log)))
    t1 = time.perf_counter()
    model = fit(fr, seed=0)
    t2 = time.perf_counter()
    pool = fragments.pool_trace(con, Window(log))
    con.close()
    specs = make_workload("hpo", seed=0)
    opts = AllocOptions(tfwd_s=120.0)

    c0 = time.perf_counter()
    base = simulate(pool, specs, allocator="dp", opts=opts, pj_max=10)
    c1 = time.perf_counter()
    pred = IdlePredictor(model, pool)
    withp = simulate(pool, specs, allocator="dp", opts=opts, pj_max=10,
                     tfwd_rule=AdaptiveTfwd(pred), node_mapper=PredictedNodes(pred))
    c2 = time.perf_counter()
    dec = withp.summary["decisions"]
    res = {
        "load_avg_1min": os.getloadavg()[0],
        "fragments": len(fr.node),
        "characterize_s": t1 - t0,
        "fit_s": t2 - t1,
        "fit_rows": model.info["rows"],
        "replay_s": c1 - c0,
        "replay_with_predictor_s": c2 - c1,
        "ratio": (c2 - c1) / (c1 - c0),
        "target_ratio": TARGET_RATIO,
        "decisions": dec,
        "predictor_s": pred.busy_s,
        "predictor_calls": pred.calls,
        "per_decision_us": 1e6 * pred.busy_s / max(dec, 1),
        "U": base.summary["utilization_efficiency"],
        "U_with_predictor": withp.summary["utilization_efficiency"],
    }
    res["meets_target"] = res["ratio"] <= TARGET_RATIO
    res["headline"] = {"fit on whole Summit log s": round(res["fit_s"], 2),
                       "predictor us per decision": round(res["per_decision_us"], 1),
                       "replay with / without predictor": round(res["ratio"], 2)}
    if out:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        Path(out).write_text(json.dumps(res, indent=1))
    return res


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", default=None)
    ap.add_argument("--out", default=str(OUT))
    a = ap.parse_args(argv)
    r = run(a.db, a.out)
    print(f"fit on the whole Summit log: {r['fit_s']:.2f} s ({r['fit_rows']} landmark rows; characterize "
          f"{r['characterize_s']:.2f} s); replay {r['replay_s']:.2f} s -> {r['replay_with_predictor_s']:.2f} s "
          f"with the predictor (x{r['ratio']:.2f}, target <= x{TARGET_RATIO:g}); predictor "
          f"{r['per_decision_us']:.0f} us per decision over {r['decisions']} decisions; load {r['load_avg_1min']:.1f}")
    return r


if __name__ == "__main__":
    main()
