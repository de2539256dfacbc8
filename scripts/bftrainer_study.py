"""Reproduce the BFTrainer study (HPDC'21) on the shipped Summit log.

    python scripts/bftrainer_study.py [--db PATH] [--hours 12] [--pj-hours 24] [--no-milp]

Window as in BFTrainer's replayer: from 2021-02-10 20:21:15 UTC, the first 1024 nodes of the
log's opening snapshot. Parts:

1. U of the MILP (run as `dp`, the exact count-level equivalent of BFTrainer's MILP: same
   optimum, milliseconds per decision) vs equal share, T_fwd in {10, 30, 60, 120, 300} s,
   hpo workload, Pj_max 10; a sample of the recorded decisions is re-solved with `milp`
   (Pyomo + HiGHS, count level) and `milp-node` (BFTrainer's node-level model) to check
   that their optima equal the DP's, and the first hours are replayed with `milp` too.
2. rescaling cost per event vs T_fwd (same runs).
3. preemptions within T_fwd: share of decisions followed by a preemption within T_fwd, and
   share of pool events followed by a node leaving within T_fwd (the log alone).
4. runtime per model vs Pj_max 5..35 for the throughput and scaling-efficiency objectives,
   diverse workload (10 ImageNet epochs per Trainer, so that enough complete in the window).

Writes artifacts/bftrainer_study.json, docs/img/study_*.png (plotly figures rendered by
kaleido if installed, else by a headless Chromium if one is found; always also
docs/img/study_figures.html) and the generated section of docs/simulator.md between
`<!-- study:begin -->` and `<!-- study:end -->`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import study_figures  # noqa: E402  (scripts/study_figures.py)

from planner import allocators  # noqa: E402
from planner.allocators.base import AllocOptions, objective_of  # noqa: E402
from planner.replay.metrics import preemption_within_share  # noqa: E402
from planner.replay.simulator import simulate  # noqa: E402
from planner.store import catalog  # noqa: E402
from planner.workload.generators import make_workload  # noqa: E402

START = "2021-02-10 20:21:15"
POOL_SIZE = 1024
TFWDS = (10, 30, 60, 120, 300)
PJ_MAXES = (5, 10, 15, 20, 25, 30, 35)
OBJECTIVES = ("throughput", "scaling-efficiency")
IMG = ROOT / "docs" / "img"
DOC = ROOT / "docs" / "simulator.md"
ART = ROOT / "artifacts" / "bftrainer_study.json"
BEGIN, END = "<!-- study:begin -->", "<!-- study:end -->"
PNG_ORDER = ["study_u_vs_tfwd.png", "study_rescale_cost.png", "study_preemption_within_tfwd.png",
             "study_runtime_per_model.png", "study_timeline.png"]


def load_pool(db, hours):
    from planner.idle import fragments
    from planner.store import db as pdb

    con = pdb.connect(db)
    try:
        log = catalog.ensure_default(con)
        return fragments.pool_trace(con, log, start=START, hours=hours, pool_size=POOL_SIZE, subset="first")
    finally:
        con.close()


class Recorder:
    """Wraps an allocator and keeps every k-th decision's state for re-solving."""

    def __init__(self, name, every):
        self.fn = allocators.get(name)
        self.every = every
        self.n = 0
        self.kept = []
        self.__name__ = name

    def __call__(self, state, opts):
        res = self.fn(state, opts)
        if self.n % self.every == 0:
            self.kept.append((state, res))
        self.n += 1
        return res


def pool_leave_within(pool, tfwd):
    """Share of pool events followed by an event where a node leaves within tfwd seconds."""
    t = np.asarray(pool.times, float)
    if not len(t):
        return None
    leave_t = t[np.array([len(x) > 0 for x in pool.leaves])]
    return preemption_within_share(t, leave_t, tfwd)


def part1(pool, hours, milp_check, log):
    rows, timelines, checks = [], {}, []
    specs = make_workload("hpo")
    for tfwd in TFWDS:
        for alloc in ("dp", "equal-share"):
            rec = Recorder(alloc, 25) if (alloc == "dp" and milp_check) else alloc
            t0 = time.perf_counter()
            res = simulate(pool, specs, rec, AllocOptions(tfwd_s=float(tfwd)), pj_max=10)
            s = res.summary
            log(f"  T_fwd {tfwd:3d} {alloc:11s} U {s['utilization_efficiency']:.3f}  "
                f"{time.perf_counter() - t0:.1f} s")
            rows.append({
                "tfwd_s": tfwd, "allocator": alloc, "U": s["utilization_efficiency"],
                "samples": s["samples"], "static_samples": s["static_samples"],
                "allocated_share": s["allocated_share"], "events": s["events"],
                "pool_events": s["pool_events"], "decisions": s["decisions"],
                "trainers_completed": s["trainers_completed"],
                "rescales": s["rescales"],
                "rescale_cost_per_event_samples": s["rescale_cost_per_event_samples"],
                "rescale_cost_share": s["rescale_cost_incurred_samples"] / s["gross_samples"],
                "preemption_cost_share": s["preemption_cost_incurred_samples"] / s["gross_samples"],
                "preemptions": s["preemptions"],
                "preemption_within_tfwd_share": s["preemption_within_tfwd_share"],
                "pool_leave_within_tfwd_share": pool_leave_within(pool, tfwd),
                "rescale_roi": s["rescale_roi"],
                "solve_median_ms": 1000 * s["solve_s"]["median"] if s["solve_s"]["median"] else None,
                "solve_max_ms": 1000 * s["solve_s"]["max"] if s["solve_s"]["max"] else None,
                "mean_pool_nodes": s["mean_pool_nodes"], "resource_node_hours": s["resource_node_hours"],
            })
            if tfwd == 120:
                timelines[alloc] = res.timeline
            if isinstance(rec, Recorder) and tfwd in (30, 120):
                checks += verify(rec.kept[:12], AllocOptions(tfwd_s=float(tfwd)), log)
    return pd.DataFrame(rows), timelines, checks


def verify(kept, opts, log):
    """Re-solve recorded decisions with milp and milp-node; compare optima with the DP's."""
    out = []
    for state, res in kept:
        row = {"tfwd_s": opts.tfwd_s, "trainers": len(state.trainers), "pool_nodes": len(state.pool),
               "dp_objective": res.objective}
        for name in ("milp", "milp-node"):
            try:
                r = allocators.allocate(name, state, opts.with_(time_limit_s=30.0))
                row[f"{name}_objective"] = objective_of(state, r.counts, opts)
                row[f"{name}_status"] = r.status
                row[f"{name}_s"] = r.build_s + r.solve_s
            except Exception as e:  # noqa: BLE001 - recorded, not hidden
                row[f"{name}_objective"] = None
                row[f"{name}_status"] = f"error: {e}"
        out.append(row)
    ok = sum(1 for r in out if r.get("milp_objective") is not None
             and abs(r["milp_objective"] - r["dp_objective"]) <= 1e-6 * max(1.0, abs(r["dp_objective"])))
    log(f"  verified {len(out)} decisions at T_fwd {opts.tfwd_s:g}: milp equal to dp in {ok}")
    return out


def milp_replay(db, hours, log):
    """The first `hours` of the window replayed with milp and dp (T_fwd 120)."""
    pool = load_pool(db, hours)
    specs = make_workload("hpo")
    out = []
    for alloc in ("dp", "milp"):
        t0 = time.perf_counter()
        res = simulate(pool, specs, alloc, AllocOptions(tfwd_s=120.0, time_limit_s=10.0), pj_max=10)
        s = res.summary
        out.append({"allocator": alloc, "hours": hours, "U": s["utilization_efficiency"],
                    "samples": s["samples"], "decisions": s["decisions"],
                    "statuses": s["statuses"], "solve_median_ms": 1000 * s["solve_s"]["median"],
                    "solve_p95_ms": 1000 * s["solve_s"]["p95"], "wall_s": time.perf_counter() - t0})
        log(f"  milp check replay {alloc}: U {s['utilization_efficiency']:.4f}")
    return out


def reference_window(db, log, n_events=161):
    """The window of the reference replayer's run (its first 161 pool events): dp and equal
    share, U by our static replay and by BFTrainer's shortcut T * Pj_max * O(n_bar / Pj_max)."""
    from planner.replay.metrics import static_shortcut
    from planner.workload.trainers import imagenet_curves

    full = load_pool(db, 24.0)
    hours = (float(full.times[n_events - 1]) - full.start_s + 1.0) / 3600.0
    pool = load_pool(db, hours)
    sh = imagenet_curves()["shufflenet"]
    a_s = static_shortcut(sh, pool.mean_nodes(), pool.end_s - pool.start_s, 10)
    out = []
    for alloc in ("dp", "equal-share"):
        s = simulate(pool, make_workload("hpo"), alloc, AllocOptions(tfwd_s=120.0), pj_max=10).summary
        out.append({"allocator": alloc, "hours": hours, "pool_events": s["pool_events"],
                    "mean_pool_nodes": s["mean_pool_nodes"], "U": s["utilization_efficiency"],
                    "U_shortcut": s["samples"] / a_s, "allocated_share": s["allocated_share"]})
        log(f"  reference window ({hours:.2f} h) {alloc}: U {s['utilization_efficiency']:.3f}")
    return out


def part4(pool, log, epochs):
    rows = []
    specs = make_workload("diverse", seed=0, count=3000, epochs=epochs)
    for obj in OBJECTIVES:
        for pj in PJ_MAXES:
            t0 = time.perf_counter()
            res = simulate(pool, specs, "dp", AllocOptions(tfwd_s=120.0, objective=obj), pj_max=pj)
            tr = res.trainers
            done = tr[tr["completed"]]
            for model, g in done.groupby("model"):
                rows.append({"objective": obj, "pj_max": pj, "model": model, "completed": len(g),
                             "mean_run_s": g["run_s"].mean(), "median_run_s": g["run_s"].median(),
                             "mean_nodes": g["mean_nodes"].mean()})
            s = res.summary
            rows.append({"objective": obj, "pj_max": pj, "model": "(all)", "completed": s["trainers_completed"],
                         "mean_run_s": s["mean_run_s"], "median_run_s": None,
                         "mean_nodes": None, "samples": s["samples"], "U": s["utilization_efficiency"],
                         "mean_queue_s": s["mean_queue_s"]})
            log(f"  {obj:18s} Pj_max {pj:2d}: {s['trainers_completed']} done, "
                f"{time.perf_counter() - t0:.1f} s")
    return pd.DataFrame(rows)


# ------------------------------------------------------------------ figures


def figures(t1: pd.DataFrame, t4: pd.DataFrame, timelines: dict, start_s: float):
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    figs = {}
    names = {"dp": "MILP optimum (dp)", "equal-share": "equal share"}
    f = go.Figure()
    for alloc, g in t1.groupby("allocator", sort=False):
        f.add_trace(go.Scatter(x=g["tfwd_s"], y=g["U"], mode="lines+markers", name=names[alloc]))
    f.update_layout(title="Utilization efficiency U vs T_fwd (hpo, Pj_max 10, 1024 nodes)",
                    xaxis_title="T_fwd (s)", yaxis_title="U = A_e / A_s", xaxis_type="log")
    figs["study_u_vs_tfwd"] = f
    f = go.Figure()
    for alloc, g in t1.groupby("allocator", sort=False):
        f.add_trace(go.Scatter(x=g["tfwd_s"], y=g["rescale_cost_per_event_samples"] / 1e6,
                               mode="lines+markers", name=names[alloc]))
    f.update_layout(title="Rescaling cost per event vs T_fwd", xaxis_title="T_fwd (s)",
                    yaxis_title="million samples per event", xaxis_type="log")
    figs["study_rescale_cost"] = f
    f = go.Figure()
    g = t1[t1["allocator"] == "dp"]
    f.add_trace(go.Scatter(x=g["tfwd_s"], y=100 * g["preemption_within_tfwd_share"], mode="lines+markers",
                           name="decisions (dp) followed by a preemption"))
    f.add_trace(go.Scatter(x=g["tfwd_s"], y=100 * g["pool_leave_within_tfwd_share"], mode="lines+markers",
                           name="pool events followed by a node leaving"))
    f.update_layout(title="Preemption within T_fwd", xaxis_title="T_fwd (s)", yaxis_title="% within T_fwd",
                    xaxis_type="log")
    figs["study_preemption_within_tfwd"] = f
    f = make_subplots(rows=1, cols=2, subplot_titles=[f"objective: {o}" for o in OBJECTIVES], shared_yaxes=True)
    per = t4[t4["model"] != "(all)"]
    colors = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2"]
    for ci, obj in enumerate(OBJECTIVES):
        for mi, (model, g) in enumerate(per[per["objective"] == obj].groupby("model")):
            f.add_trace(go.Scatter(x=g["pj_max"], y=g["mean_run_s"] / 3600, mode="lines+markers", name=model,
                                   legendgroup=model, showlegend=ci == 0,
                                   line=dict(color=colors[mi % len(colors)])), row=1, col=ci + 1)
    f.update_xaxes(title_text="Pj_max")
    f.update_yaxes(title_text="mean runtime (h)", col=1)
    f.update_layout(title="Runtime per model vs Pj_max (diverse, 10 epochs each)")
    figs["study_runtime_per_model"] = f
    if "dp" in timelines:
        tl = timelines["dp"]
        f = go.Figure()
        x = pd.to_datetime(start_s + tl["t_s"], unit="s")
        f.add_trace(go.Scatter(x=x, y=tl["pool_nodes"], name="pool nodes (idle)", line_shape="hv",
                               fill="tozeroy", line=dict(color="#9ecae1", width=4)))
        f.add_trace(go.Scatter(x=x, y=tl["allocated_nodes"], name="allocated nodes (dp)", line_shape="hv",
                               line=dict(color="#d62728", width=1)))
        f.update_layout(title="Pool and allocated nodes (hpo, T_fwd 120 s, dp)", yaxis_title="nodes")
        figs["study_timeline"] = f
    for key in ("study_u_vs_tfwd", "study_rescale_cost", "study_preemption_within_tfwd"):
        figs[key].update_xaxes(tickvals=list(TFWDS), ticktext=[str(t) for t in TFWDS])
    for fig in figs.values():
        fig.update_layout(width=900, height=460, template="plotly_white", margin=dict(l=60, r=20, t=60, b=50))
    return figs


def write_figures(figs: dict, log) -> list[str]:
    return study_figures.write_figures(figs, IMG, "study_figures.html", "BFTrainer study", log)


# ------------------------------------------------------------------ tables


def md_table(df: pd.DataFrame, fmt: dict) -> str:
    cols = list(fmt)
    lines = ["| " + " | ".join(fmt[c][0] for c in cols) + " |",
             "|" + "|".join("---:" if fmt[c][1] != "s" else "---" for c in cols) + "|"]
    for _, r in df.iterrows():
        cells = []
        for c in cols:
            v = r[c]
            f = fmt[c][1]
            if v is None or (isinstance(v, float) and not np.isfinite(v)):
                cells.append("–")
            elif f == "s":
                cells.append(str(v))
            elif f == "d":
                cells.append(f"{int(v):,}")
            else:
                cells.append(format(v, f))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def section(res: dict, pngs: list[str]) -> str:
    t1 = pd.DataFrame(res["part1"])
    t4 = pd.DataFrame(res["part4"])
    p = res["params"]
    out = [BEGIN, "",
           f"_Generated by `python scripts/bftrainer_study.py` on {res['date']} in {res['wall_s']:.0f} s "
           f"(2-core machine). Window {p['start']} UTC + {p['hours']} h, first {POOL_SIZE} nodes: "
           f"mean pool {t1['mean_pool_nodes'].iloc[0]:.1f} nodes, "
           f"{t1['resource_node_hours'].iloc[0]:.0f} node-hours, {int(t1['pool_events'].iloc[0])} pool events._",
           "", "### 1. U of the MILP (exact, as `dp`) vs equal share, by T_fwd", "",
           "hpo workload (1000 ShuffleNet trials, one every 36 s), Pj_max 10, Rup 18 s, Rdw 12 s.", ""]
    wide = t1.pivot(index="tfwd_s", columns="allocator", values="U").reset_index()
    wide["gain"] = wide["dp"] / wide["equal-share"] - 1
    alloc = t1.pivot(index="tfwd_s", columns="allocator", values="allocated_share").reset_index()
    wide["alloc_dp"] = alloc["dp"]
    wide["alloc_es"] = alloc["equal-share"]
    dpr = t1[t1["allocator"] == "dp"].set_index("tfwd_s")
    wide["solve"] = wide["tfwd_s"].map(dpr["solve_median_ms"])
    out.append(md_table(wide, {"tfwd_s": ("T_fwd (s)", "d"), "dp": ("U, MILP optimum (dp)", ".3f"),
                               "equal-share": ("U, equal share", ".3f"), "gain": ("gain", "+.1%"),
                               "alloc_dp": ("allocated/available, dp", ".3f"),
                               "alloc_es": ("allocated/available, equal share", ".3f"),
                               "solve": ("dp solve median (ms)", ".2f")}))
    if res.get("milp_checks"):
        ch = pd.DataFrame(res["milp_checks"])
        eq = lambda a, b: (a - b).abs() <= 1e-6 * np.maximum(1.0, b.abs())  # noqa: E731
        n_m = int(eq(ch["milp_objective"].astype(float), ch["dp_objective"]).sum())
        has_node = "milp-node_objective" in ch and ch["milp-node_objective"].notna().any()
        n_n = int(eq(ch["milp-node_objective"].astype(float), ch["dp_objective"]).sum()) if has_node else 0
        out += ["", f"Check: {len(ch)} decisions recorded during the dp replays (T_fwd 30 and 120 s, "
                    f"{int(ch['trainers'].min())}-{int(ch['trainers'].max())} Trainers, "
                    f"{int(ch['pool_nodes'].min())}-{int(ch['pool_nodes'].max())} pool nodes) were re-solved: "
                    f"the count-level `milp` (Pyomo + HiGHS) reaches the DP's objective in {n_m} of "
                    f"{len(ch)}, BFTrainer's node-level `milp-node` in {n_n} of {len(ch)} "
                    f"(median {1000 * ch['milp_s'].median():.0f} ms and "
                    f"{1000 * ch['milp-node_s'].median() if 'milp-node_s' in ch else float('nan'):.0f} ms "
                    f"per decision)."]
    if res.get("milp_replay"):
        mr = pd.DataFrame(res["milp_replay"])
        out += ["", f"Replay of the first {mr['hours'].iloc[0]:g} h with each allocator (T_fwd 120 s):", "",
                md_table(mr.assign(statuses=mr["statuses"].map(lambda d: ", ".join(f"{k} {v}" for k, v in d.items()))),
                         {"allocator": ("allocator", "s"), "U": ("U", ".4f"), "samples": ("samples", ".4g"),
                          "decisions": ("decisions", "d"), "statuses": ("statuses", "s"),
                          "solve_median_ms": ("solve median (ms)", ".1f"),
                          "solve_p95_ms": ("solve p95 (ms)", ".1f")})]
    if res.get("reference"):
        rf = pd.DataFrame(res["reference"])
        out += ["", f"The reference replayer's window (its first {int(rf['pool_events'].iloc[0])} pool events, "
                    f"{rf['hours'].iloc[0]:.2f} h, mean pool {rf['mean_pool_nodes'].iloc[0]:.1f} nodes), "
                    "T_fwd 120 s, U by our static replay and by BFTrainer's shortcut:", "",
                md_table(rf, {"allocator": ("allocator", "s"), "U": ("U (static replay)", ".3f"),
                              "U_shortcut": ("U (T·Pj_max·O(n̄/Pj_max))", ".3f"),
                              "allocated_share": ("allocated/available", ".3f")})]
    out += ["", "### 2. Rescaling cost per event vs T_fwd", ""]
    t2 = t1.copy()
    t2["rc_m"] = t2["rescale_cost_per_event_samples"] / 1e6
    out.append(md_table(t2, {"tfwd_s": ("T_fwd (s)", "d"), "allocator": ("allocator", "s"),
                             "rc_m": ("rescale cost per event (M samples)", ".3f"),
                             "rescales": ("rescales", "d"), "rescale_cost_share": ("rescale cost / gross", ".2%"),
                             "preemption_cost_share": ("preemption cost / gross", ".2%"),
                             "rescale_roi": ("ROI", ".1f"), "trainers_completed": ("completed", "d")}))
    out += ["", "### 3. Preemptions within T_fwd", ""]
    t3 = t1[t1["allocator"] == "dp"]
    out.append(md_table(t3, {"tfwd_s": ("T_fwd (s)", "d"),
                             "preemption_within_tfwd_share": ("decisions (dp) followed by a preemption", ".1%"),
                             "pool_leave_within_tfwd_share": ("pool events followed by a node leaving", ".1%"),
                             "preemptions": ("preemptions (dp)", "d")}))
    out += ["", "### 4. Runtime per model vs Pj_max", "",
            f"diverse workload (Poisson arrivals, mean gap 60 s, the 7 models in turn, {p['epochs']} ImageNet "
            f"epochs each), {p['pj_hours']} h window, T_fwd 120 s, dp. Mean runtime (first nodes to end) of "
            "the completed Trainers in hours (completed count in brackets).", ""]
    per = t4[t4["model"] != "(all)"]
    for obj in OBJECTIVES:
        g = per[per["objective"] == obj]
        piv = g.pivot(index="model", columns="pj_max", values="mean_run_s") / 3600
        cnt = g.pivot(index="model", columns="pj_max", values="completed")
        tab = pd.DataFrame({"model": piv.index})
        for pj in PJ_MAXES:
            if pj in piv.columns:
                tab[f"Pj_max {pj}"] = [f"{piv.loc[m, pj]:.2f} ({int(cnt.loc[m, pj])})" if pd.notna(piv.loc[m, pj])
                                       else "–" for m in piv.index]
        al = t4[(t4["model"] == "(all)") & (t4["objective"] == obj)].set_index("pj_max")
        out += [f"Objective `{obj}`:", "",
                md_table(tab, {c: (c, "s") for c in tab.columns}), "",
                "All Trainers: " + ", ".join(f"Pj_max {pj}: {int(al.loc[pj, 'completed'])} done, "
                                              f"{al.loc[pj, 'samples'] / 1e9:.1f} G samples"
                                              for pj in PJ_MAXES if pj in al.index), ""]
    if pngs:
        out += ["### Figures", ""]
        for name in pngs:
            out.append(f"![{name[:-4].replace('_', ' ')}](img/{name})")
        out.append("")
    out += ["Interactive versions: [docs/img/study_figures.html](img/study_figures.html).", "", END]
    return "\n".join(out)


def write_doc(text: str):
    doc = DOC.read_text() if DOC.exists() else "# Simulator\n\n"
    if BEGIN in doc and END in doc:
        doc = doc[:doc.index(BEGIN)] + text + doc[doc.index(END) + len(END):]
    else:
        doc = doc.rstrip() + "\n\n## The BFTrainer study\n\n" + text + "\n"
    DOC.write_text(doc)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", default=os.environ.get("PLANNER_DB"))
    ap.add_argument("--hours", type=float, default=12.0, help="window for parts 1-3 (default 12)")
    ap.add_argument("--pj-hours", type=float, default=24.0, help="window for part 4 (default 24)")
    ap.add_argument("--epochs", type=float, default=10.0, help="ImageNet epochs per diverse Trainer")
    ap.add_argument("--milp-hours", type=float, default=2.0, help="hours replayed with milp (0: skip)")
    ap.add_argument("--no-milp", action="store_true", help="skip the milp checks")
    ap.add_argument("--no-doc", action="store_true", help="do not touch docs/simulator.md")
    ap.add_argument("--from-json", action="store_true",
                    help="rewrite the doc section from artifacts/bftrainer_study.json (no replay)")
    a = ap.parse_args(argv)
    t0 = time.perf_counter()
    log = lambda m: print(m, flush=True)  # noqa: E731
    if a.from_json:
        res = json.loads(ART.read_text())
        pngs = sorted(p.name for p in IMG.glob("study_*.png"))
        write_doc(section(res, [n for n in PNG_ORDER if n in pngs]))
        return
    pool = load_pool(a.db, a.hours)
    log(f"window {START} + {a.hours} h, {pool.nodes} nodes, {pool.events} pool events, "
        f"mean pool {pool.mean_nodes():.1f}")
    log("part 1-3: U, rescaling cost, preemptions vs T_fwd")
    t1, timelines, checks = part1(pool, a.hours, not a.no_milp, log)
    mr = milp_replay(a.db, a.milp_hours, log) if (not a.no_milp and a.milp_hours > 0) else []
    ref = reference_window(a.db, log)
    log("part 4: runtime per model vs Pj_max")
    pool4 = load_pool(a.db, a.pj_hours)
    t4 = part4(pool4, log, a.epochs)
    res = {"date": time.strftime("%Y-%m-%d", time.gmtime()),
           "params": {"start": START, "pool_size": POOL_SIZE, "hours": a.hours, "pj_hours": a.pj_hours,
                      "epochs": a.epochs, "milp_hours": a.milp_hours},
           "part1": t1.to_dict("records"), "milp_checks": checks, "milp_replay": mr, "reference": ref,
           "part4": t4.to_dict("records")}
    figs = figures(t1, t4, timelines, pool.start_s)
    pngs = write_figures(figs, log)
    res["wall_s"] = time.perf_counter() - t0
    ART.parent.mkdir(parents=True, exist_ok=True)
    ART.write_text(json.dumps(res, indent=1, default=lambda o: o.item() if hasattr(o, "item") else str(o)))
    ART.with_name("bftrainer_study_timeline.csv").write_text(timelines["dp"].to_csv(index=False))
    if not a.no_doc:
        write_doc(section(res, pngs))
    log(f"done in {res['wall_s']:.0f} s; wrote {ART.relative_to(ROOT)}, {len(pngs)} PNG under docs/img")


if __name__ == "__main__":
    main()
