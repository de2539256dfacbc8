"""ModelArts' decision time (issue 22): the same MILPs solved by HiGHS (ours) and by CBC (the paper's
solver: "We use the open-source optimization solver CBC [17]", Sec. 4.4).

The study's row "Decisions take 0.4 s on average, median 0.24 s, p95 1.49 s, max 2.48 s (70 nodes)"
measures ours as the CPU seconds of a whole decision (model build + HiGHS with the greedy MIP start
and a 200-node limit). This script isolates the solver: it replays the study's 70-node run (the
base variant with constraint (15), as `planner study modelarts` runs it), keeps every k-th
decision's model (written by Pyomo, converted to MPS by HiGHS so that CBC reads the integrality
markers), and solves each model cold, one thread, relative gap 1e-3 (the study's), with

  - HiGHS (highspy, in process): CPU seconds;
  - CBC (Debian's `coinor-cbc`, one process per model as PuLP runs it): the child's CPU seconds and
    the wall time from the process start to its exit (the paper reports wall time).

It writes docs/studies/modelarts_solver_speed.json; `planner study modelarts --rewhy` puts its
figures on the decision row as experiments. Needs the `cbc` program (apt install coinor-cbc).

    python scripts/modelarts_solver_speed.py [--every 10] [--out docs/studies/modelarts_solver_speed.json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from planner.studies import common  # noqa: E402

OUT = common.STUDIES_DIR / "modelarts_solver_speed.json"
GAP = 1e-3
LIMIT_S = 60.0


def capture(folder: Path, every: int) -> dict:
    """Replay the 70-node base run (c15) and write every `every`-th decision's model as MPS."""
    import highspy  # lazy: heavy

    from planner.allocators import horizon_milp as hm
    from planner.studies import modelarts as ma

    orig, n = hm._solve, {"seen": 0, "kept": 0}

    def solve(m, opts, warm, out):  # the allocator's own solve, after a copy of the model is written
        n["seen"] += 1
        if n["seen"] % every == 0:
            lp = folder / f"d{n['seen']:05d}.lp"
            m.write(str(lp), io_options={"symbolic_solver_labels": False})
            h = highspy.Highs()
            h.setOptionValue("output_flag", False)
            h.readModel(str(lp))
            h.writeModel(str(lp.with_suffix(".mps")))  # MPS with INTORG markers: CBC reads them
            lp.unlink()
            n["kept"] += 1
        return orig(m, opts, warm, out)

    hm._solve = solve
    try:
        cell = {"variant": "base", "pool": 70, "allocator": "horizon-milp", "span_h": ma.CAL_SPAN_H, "c15": True}
        r = ma.run_cell(cell)
    finally:
        hm._solve = orig
    return {"cell": cell, "decisions": r["decisions"], "decision_cpu_mean_s": r["decision_mean_s"],
            "models": n["kept"], "every": every}


def _children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def solve_all(folder: Path, cbc: str) -> list[dict]:
    import highspy  # lazy: heavy

    rows = []
    for p in sorted(folder.glob("d*.mps")):
        h = highspy.Highs()
        for k, v in (("output_flag", False), ("mip_rel_gap", GAP), ("time_limit", LIMIT_S), ("threads", 1)):
            h.setOptionValue(k, v)
        h.readModel(str(p))
        c0 = time.process_time()
        h.run()
        row = {"model": p.stem, "highs_cpu_s": time.process_time() - c0,
               "highs_objective": h.getInfo().objective_function_value,
               "highs_status": h.modelStatusToString(h.getModelStatus())}
        sol = p.with_suffix(".sol")
        c0, w0 = _children_cpu(), time.perf_counter()
        subprocess.run([cbc, str(p), "maximize", "ratio", str(GAP), "sec", str(LIMIT_S), "threads", "1",
                        "solve", "solution", str(sol)], check=True, capture_output=True)
        row["cbc_cpu_s"], row["cbc_wall_s"] = _children_cpu() - c0, time.perf_counter() - w0
        first = sol.read_text().splitlines()[0]
        row["cbc_status"] = first.split(" - ")[0].strip()
        row["cbc_objective"] = float(first.rsplit("value", 1)[-1]) if "value" in first else None
        rows.append(row)
    return rows


def _stats(xs) -> dict:
    a = np.asarray(xs, float)
    return {"mean_s": round(float(a.mean()), 4), "median_s": round(float(np.median(a)), 4),
            "p95_s": round(float(np.percentile(a, 95)), 4), "max_s": round(float(a.max()), 3)}


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--every", type=int, default=10, help="keep every k-th decision's model (default 10)")
    ap.add_argument("--out", type=Path, default=OUT)
    a = ap.parse_args(argv)
    cbc = shutil.which("cbc")
    if not cbc:
        raise SystemExit("modelarts_solver_speed: the `cbc` program is missing (apt install coinor-cbc)")
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as d:
        run = capture(Path(d), a.every)
        rows = solve_all(Path(d), cbc)
    objs = [(r["highs_objective"], r["cbc_objective"]) for r in rows if r["cbc_objective"] is not None]
    agree = max(abs(x - y) / max(abs(x), 1e-9) for x, y in objs) if objs else None
    out = {"what": "the same decisions' MILPs (70 nodes, base, constraint (15)) solved cold, one thread, "
                   f"gap {GAP:g}: HiGHS in process and CBC in a process per model",
           "run": run, "models": len(rows), "objectives_max_rel_diff": agree,
           "highs_cpu": _stats([r["highs_cpu_s"] for r in rows]),
           "cbc_cpu": _stats([r["cbc_cpu_s"] for r in rows]),
           "cbc_wall": _stats([r["cbc_wall_s"] for r in rows]),
           "cbc_version": subprocess.run([cbc, "-quit"], capture_output=True, text=True).stdout.split("Version:")[-1]
           .split("\n")[0].strip(),
           "load_average": [round(x, 1) for x in os.getloadavg()], "wall_s": round(time.perf_counter() - t0, 1),
           "per_model": rows}
    a.out.write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps({k: v for k, v in out.items() if k != "per_model"}, indent=1))
    return out


if __name__ == "__main__":
    main()
