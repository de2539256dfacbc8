"""Study of issue 15: does a survival model of idle fragments help a replay?

    python scripts/survival_study.py [--db PATH] [--windows 4] [--hours 24] [--quick]

1. The model (planner.predict.survival / planner.predict.evaluate): fit on the first 70 % of each log,
   tested on the rest: concordance index and calibration of the Cox model vs the Kaplan-Meier
   baseline and the naive rule (remaining = time already idle).
2. Replays on test windows after the training span (windows of --hours spread evenly over the
   last 30 %), hpo workload, Pj_max 10, `dp`: U, preemption and rescale cost, Trainers
   completed for fixed T_fwd in {10, 30, 60, 120, 300, 600} s, adaptive T_fwd, and predicted vs
   lowest-id node choice. Each window's predictor is fit on the log before that window only.

Logs: the shipped Summit node-state log (exact node identity, the first 1024 nodes as in
BFTrainer), and the KTH SP2 SWF job log (no node identity: ids by the stack rule of
planner.replay.pool.from_counts). No Slurm dump with node lists is shipped.

Writes artifacts/survival_study.json, docs/img/survival_*.png (+ survival_figures.html) and
the generated part of docs/survival.md between `<!-- study:begin -->` and `<!-- study:end -->`.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import study_figures  # noqa: E402  (scripts/study_figures.py)

from planner import logs, paths  # noqa: E402
from planner.allocators.base import AllocOptions  # noqa: E402
from planner.idle import fragments as F  # noqa: E402
from planner.idle.window import Window  # noqa: E402
from planner.predict import evaluate, replay_hooks  # noqa: E402
from planner.predict.survival import Fragments, SurvivalModel, curves  # noqa: E402
from planner.replay.simulator import simulate  # noqa: E402
from planner.store import catalog  # noqa: E402
from planner.store import db as pdb  # noqa: E402
from planner.workload.generators import make_workload  # noqa: E402

TFWDS = (10, 30, 60, 120, 300, 600)
TRAIN_FRAC = 0.7
IMG = ROOT / "docs" / "img"
DOC = ROOT / "docs" / "survival.md"
ART = ROOT / "artifacts" / "survival_study.json"
BEGIN, END = "<!-- study:begin -->", "<!-- study:end -->"
LOGS = {  # name -> (file under datasets/ or None for the default, pool size, test windows)
    "summit-2021": (None, 1024, 4),
    "kth-sp2": ("KTH-SP2-1996-2.1-cln.swf.gz", None, 6),
}
CONFIGS = ([(f"fixed {t} s", t, "fixed", "lowest-id") for t in TFWDS] +
           [("adaptive", 120, "adaptive", "lowest-id"), ("predicted nodes, 120 s", 120, "fixed", "predicted"),
            ("adaptive + predicted", 120, "adaptive", "predicted")])


def load(con, name: str) -> str:
    f = LOGS[name][0]
    if f is None:
        return catalog.ensure_default(con)
    logs.ingest(con, paths.DATASETS / f, name=name)
    return name


def model_part(con, log, pool_size) -> tuple[dict, pd.DataFrame, SurvivalModel]:
    fr = Fragments.of(F.characterize(con, Window(log, pool_size=pool_size)))
    figs, cal, model = evaluate.evaluate_model(fr, train_frac=TRAIN_FRAC, seed=0)
    figs["derived_identity"] = fr.derived
    return figs, cal, model


def replay_rows(con, log, pool_size, start_s, hours, label) -> list[dict]:
    pool = F.pool_trace(con, Window(log, start=start_s, hours=hours, pool_size=pool_size))
    t0 = time.perf_counter()
    base = replay_hooks.for_window(con, Window(log, pool_size=pool_size), pool)
    setup_s = time.perf_counter() - t0
    specs = make_workload("hpo", seed=0)
    rows = []
    for name, tfwd, rule, choice in CONFIGS:
        win = Window(log, pool_size=pool_size)
        hooks = replay_hooks.hooks(con, win, pool, rule, choice, predictor=copy.deepcopy(base))
        res = simulate(pool, specs, allocator="dp", opts=AllocOptions(tfwd_s=float(tfwd)), pj_max=10, **hooks)
        s, d = res.summary, res.decisions
        rows.append({"log": log, "window": label, "config": name, "tfwd_rule": rule, "node_choice": choice,
                     "U": s["utilization_efficiency"], "completed": s["trainers_completed"],
                     "preemptions": s["preemptions"],
                     "preemption_cost_Gsamples": s["preemption_cost_incurred_samples"] / 1e9,
                     "rescale_cost_Gsamples": s["rescale_cost_incurred_samples"] / 1e9,
                     "samples_G": s["samples"] / 1e9, "mean_pool_nodes": s["mean_pool_nodes"],
                     "tfwd_median_s": float(np.median(d["tfwd_s"])) if len(d) else None,
                     "wall_s": s["wall_s"], "predictor_setup_s": setup_s})
    return rows


def windows(con, log, n, hours):
    row = F._log_row(con, log)
    lo, hi = float(row["start_s"]), float(row["end_s"])
    cut = lo + TRAIN_FRAC * (hi - lo)
    step = hours * 3600.0
    n = max(1, min(int(n), int((hi - cut) // step)))
    stride = (hi - cut - step) / (n - 1) if n > 1 else 0.0  # spread over the test span
    out = []
    for i in range(n):
        s = cut + i * max(stride, step)
        out.append((s, pd.Timestamp(s, unit="s", tz="UTC").strftime("%Y-%m-%d %H:%M")))
    return out


def summarize(df: pd.DataFrame) -> pd.DataFrame:
    """Per log and config: totals over the windows, and how often it is the window's best fixed."""
    g = df.groupby(["log", "config"], sort=False)
    out = g.agg(windows=("window", "count"), U_mean=("U", "mean"), completed=("completed", "sum"),
                samples_G=("samples_G", "sum"), preemption_cost_Gsamples=("preemption_cost_Gsamples", "sum"),
                rescale_cost_Gsamples=("rescale_cost_Gsamples", "sum"),
                tfwd_median_s=("tfwd_median_s", "median")).reset_index()
    fixed = df[df.config.str.startswith("fixed")]
    best = fixed.loc[fixed.groupby(["log", "window"]).samples_G.idxmax()]
    hind = best.groupby("log").agg(samples_G=("samples_G", "sum"), completed=("completed", "sum"),
                                   U_mean=("U", "mean"),
                                   preemption_cost_Gsamples=("preemption_cost_Gsamples", "sum"),
                                   rescale_cost_Gsamples=("rescale_cost_Gsamples", "sum")).reset_index()
    hind["config"] = "best fixed in hindsight (per window)"
    hind["windows"] = best.groupby("log").size().to_numpy()
    return pd.concat([out, hind], ignore_index=True)


def _bars(summ: pd.DataFrame, col: str, title: str, unit: str):
    import plotly.graph_objects as go

    from appkit.charts import _layout

    fig = go.Figure()
    for log, g in summ.groupby("log", sort=False):
        fig.add_trace(go.Bar(x=g.config, y=g[col], name=log, hovertemplate="%{x}: %{y:,.3g} " + unit))
    fig = _layout(fig, title, "", f"change ({unit})" if col == "rel" else f"{col} ({unit})", hovermode="closest",
                  height=420)
    fig.update_layout(width=900, barmode="group")
    return fig


def _vs_ref(summ: pd.DataFrame, col: str, ref: str = "fixed 120 s") -> pd.DataFrame:
    """summ with column `rel`: col in % above (below) the same log's `ref` config."""
    base = summ[summ.config == ref].set_index("log")[col]
    out = summ.copy()
    out["rel"] = 100.0 * (out[col] / out.log.map(base) - 1.0)
    return out


def figures(models: dict, summ: pd.DataFrame) -> dict:
    from appkit import survival_view as V

    figs = {
        "survival_curves": V.curves_figure({k: v["curves"] for k, v in models.items()},
                                           "Remaining idle time by time already idle (training span)"),
        "survival_calibration": V.calibration_figure({k: v["cal"] for k, v in models.items()},
                                                     "Calibration on the test span (last 30 %)"),
        "survival_replay_samples": _bars(_vs_ref(summ, "samples_G"), "rel",
                                         "Samples trained over the test windows, vs fixed 120 s", "%"),
        "survival_replay_preemption": _bars(_vs_ref(summ, "preemption_cost_Gsamples"), "rel",
                                            "Preemption cost over the test windows, vs fixed 120 s", "%"),
    }
    for f in figs.values():  # many traces: the legend goes below the plot
        f.update_layout(width=f.layout.width or 900, height=600, margin={"t": 60, "b": 200},
                        legend={"orientation": "h", "yanchor": "top", "y": -0.25, "xanchor": "left", "x": 0})
    return figs


def _md_table(df: pd.DataFrame, floats: int = 3) -> str:
    cols = list(df.columns)
    out = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for _, r in df.iterrows():
        cells = []
        for c in cols:
            v = r[c]
            if isinstance(v, (float, np.floating)):
                cells.append("-" if not np.isfinite(v) else f"{v:,.{floats}f}" if abs(v) < 1000 else f"{v:,.0f}")
            else:
                cells.append(str(v))
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


def model_table(models: dict) -> pd.DataFrame:
    rows = []
    for log, m in models.items():
        f = m["figures"]
        for k in evaluate.MODELS:
            rows.append({"log": log, "predictor": k, "c-index": f["concordance"][k],
                         "share idle at predicted median": f["share_idle_at_predicted_median"][k],
                         "median abs log2 error": f["median_abs_log2_error"][k],
                         "train rows": f["train"]["rows"], "test rows": f["test_rows"]})
    return pd.DataFrame(rows)


def paired(df: pd.DataFrame) -> list[str]:
    """One line per log and comparison: in how many windows A beats B."""
    out = []
    fixed = df[df.config.str.startswith("fixed")]
    best = fixed.loc[fixed.groupby(["log", "window"]).samples_G.idxmax()].set_index(["log", "window"])
    for (a, b) in (("predicted nodes, 120 s", "fixed 120 s"), ("adaptive", "fixed 120 s"),
                   ("adaptive", "best fixed"), ("adaptive + predicted", "best fixed")):
        for log, g in df.groupby("log", sort=False):
            x = g[g.config == a].set_index("window")
            y = best.loc[log] if b == "best fixed" else g[g.config == b].set_index("window")
            y = y.loc[x.index]
            more = int((x.samples_G > y.samples_G + 1e-12).sum())
            less_pre = int((x.preemption_cost_Gsamples < y.preemption_cost_Gsamples - 1e-12).sum())
            d = 100 * (x.samples_G.sum() / y.samples_G.sum() - 1)
            dp = 100 * (x.preemption_cost_Gsamples.sum() / y.preemption_cost_Gsamples.sum() - 1)
            out.append(f"- {log}: **{a}** vs {b}{' in hindsight' if b == 'best fixed' else ''}: more samples in "
                       f"{more} of {len(x)} windows ({d:+.2f} % in total), lower preemption cost in {less_pre} "
                       f"of {len(x)} ({dp:+.1f} %)")
    return out


def write_doc(models: dict, summ: pd.DataFrame, per_window: pd.DataFrame, pngs: list[str], meta: dict):
    coef = {log: m["figures"]["train"]["coef"] for log, m in models.items()}
    parts = [BEGIN, f"Generated by `python scripts/survival_study.py` ({meta['when']}, {meta['wall_s']:.0f} s on "
             f"a shared 2-core machine).", "", "### The model on the test span (last 30 % of each log)", "",
             _md_table(model_table(models)), "",
             "Cox coefficients (standardized covariates; > 0 = reclaimed sooner):", ""]
    parts += [f"- {log}: " + ", ".join(f"{k} {v:+.3f}" for k, v in c.items()) for log, c in coef.items()]
    nw = ", ".join(f"{k} {v}" for k, v in meta["windows"].items())
    parts += ["", f"### Replays on test windows of {meta['hours']:g} h ({nw}; hpo, Pj_max 10, dp)",
              "", "Totals over the windows (U: mean over windows):", "",
              _md_table(summ[["log", "config", "windows", "U_mean", "completed", "samples_G",
                              "preemption_cost_Gsamples", "rescale_cost_Gsamples", "tfwd_median_s"]]), "",
              "Per window:", "",
              _md_table(per_window[["log", "window", "config", "U", "completed", "preemptions",
                                    "preemption_cost_Gsamples", "rescale_cost_Gsamples", "tfwd_median_s"]]), ""]
    parts += ["Paired by window (samples trained; preemption cost):", ""] + paired(per_window) + [""]
    parts += [f"![{p}](img/{p})" for p in pngs] + ["", END]
    text = DOC.read_text() if DOC.exists() else f"# Predicting idle capacity\n\n{BEGIN}\n{END}\n"
    a, b = text.index(BEGIN), text.index(END) + len(END)
    DOC.write_text(text[:a] + "\n".join(parts) + text[b:])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", default=None, help="DuckDB file (default: a temporary one)")
    ap.add_argument("--windows", type=int, default=None, help="test windows per log (default: 4 Summit, 6 KTH)")
    ap.add_argument("--hours", type=float, default=24.0)
    ap.add_argument("--quick", action="store_true", help="one 6-hour window per log, no doc")
    a = ap.parse_args(argv)
    if a.quick:
        a.windows, a.hours = 1, 6.0
    wall0 = time.perf_counter()
    import tempfile

    tmp = tempfile.TemporaryDirectory()
    con = pdb.connect(a.db or str(Path(tmp.name) / "survival.duckdb"))
    models, rows = {}, []
    for name, (_, pool_size, n_win) in LOGS.items():
        log = load(con, name)
        figs, cal, model = model_part(con, log, pool_size)
        models[name] = {"figures": figs, "cal": cal, "curves": curves(model)}
        print(f"{name}: c-index {figs['concordance']}", flush=True)
        for s, label in windows(con, log, n_win if a.windows is None else a.windows, a.hours):
            rows += replay_rows(con, log, pool_size, s, a.hours, label)
            print(f"  window {label}: {len(rows)} replays, {time.perf_counter() - wall0:.0f} s", flush=True)
    per_window = pd.DataFrame(rows)
    summ = summarize(per_window)
    print(summ.to_string())
    meta = {"when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "hours": a.hours,
            "windows": {k: int((per_window.log == k).sum() // len(CONFIGS)) for k in LOGS},
            "wall_s": time.perf_counter() - wall0}
    ART.parent.mkdir(parents=True, exist_ok=True)
    ART.write_text(json.dumps({"meta": meta, "models": {k: v["figures"] for k, v in models.items()},
                               "calibration": {k: v["cal"].to_dict("records") for k, v in models.items()},
                               "summary": summ.to_dict("records"), "replays": rows}, indent=1, default=float))
    if a.quick:
        return
    pngs = study_figures.write_figures(figures(models, summ), IMG, "survival_figures.html",
                                       "Survival study figures", print)
    write_doc(models, summ, per_window, pngs, meta)


if __name__ == "__main__":
    main()
