"""Benchmark: one `planner live` cycle (poll + store + decision) on a real 256-node Slurm test cluster
and on a replayed 4,734-node Summit snapshot stream.

    python benchmarks/bench_live.py [--nodes 256] [--cycles 30] [--summit-snapshots 60] [--jobs 8]

1. cluster: scripts/slurm_cluster.py starts 256 slurmd (one slurmctld) in a temp dir; between cycles
   a driver submits and cancels exclusive jobs so node states change; each cycle is Poller.cycle()
   (sinfo --json + squeue --json, one DuckDB transaction, the `auto` allocator for --jobs elastic
   jobs, scoring). The cluster is stopped at the end.
2. summit: the shipped Summit node-state log (4,734 nodes) replayed as snapshots, one per change
   time from its start (`--summit-snapshots` of them), each a full node list as sinfo would give it;
   each cycle is Poller.apply() (store + decision; no Slurm call).
Prints the medians and writes artifacts/bench_live.json.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from planner.live import runner  # noqa: E402
from planner.live.advisor import Advisor, load_jobs  # noqa: E402
from planner.live.source import CliSource, Snapshot  # noqa: E402
from planner.logs.slurm_json import NodeRow  # noqa: E402

OUT = ROOT / "artifacts" / "bench_live.json"


def _jobs_file(d: Path, n: int) -> Path:
    models = ["resnet18", "vgg16", "AlexNet", "shufflenet"]
    f = d / "jobs.json"
    f.write_text(json.dumps({"tfwd_s": 600, "trainers": [
        {"id": f"e{k}", "slurm_job": str(900000 + k), "model": models[k % len(models)], "nmin": 1, "nmax": 64,
         "rup_s": 18, "rdw_s": 12} for k in range(n)]}))
    return f


def _med(rows, key):
    return round(statistics.median(r[key] for r in rows), 4)


def _summary(rows) -> dict:
    return {"cycles": len(rows), **{f"median_{k}": _med(rows, k) for k in ("poll_s", "store_s", "decide_s", "total_s")},
            "max_total_s": round(max(r["total_s"] for r in rows), 4)}


def bench_cluster(nodes: int, cycles: int, n_jobs: int) -> dict:
    spec = importlib.util.spec_from_file_location("slurm_cluster", ROOT / "scripts" / "slurm_cluster.py")
    sc = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sc)
    with tempfile.TemporaryDirectory(prefix="bench-live-") as td:
        d = Path(td)
        t0 = time.perf_counter()
        info = sc.start(d / "cluster", nodes, f"batch:1-{nodes}")
        start_s = time.perf_counter() - t0
        try:
            drv = sc.Driver(d / "cluster")
            jobs, opts = load_jobs(_jobs_file(d, n_jobs))
            poller = runner.Poller(d / "live.duckdb", "bench", CliSource(info["env"]), ["batch"],
                                   Advisor(jobs, "auto", opts), warn=lambda m: None)
            rng = random.Random(0)
            running, rows = [], []
            for _ in range(cycles):
                if running and rng.random() < 0.4:
                    drv.cancel(running.pop(rng.randrange(len(running))))
                else:
                    running.append(drv.submit(rng.randint(1, max(nodes // 16, 1)), seconds=3600))
                time.sleep(0.5)  # let the controller place it
                c0 = time.perf_counter()
                out = poller.cycle()
                total = time.perf_counter() - c0
                rows.append({"poll_s": out["poll_s"], "store_s": out["store_s"], "decide_s": out["decide_s"],
                             "total_s": total, "harvestable": out["harvestable"], "events": out["events"],
                             "recommendations": len(out["recommendations"])})
            rss = {}
            for stem, pid in sc.pids(d / "cluster").items():
                try:
                    rss[stem] = int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * 4096
                except OSError:
                    pass
        finally:
            sc.stop(d / "cluster")
    slurmd = [v for k, v in rss.items() if k.startswith("slurmd")]
    return {"nodes": nodes, "elastic_jobs": n_jobs, "cluster_start_s": round(start_s, 2),
            "slurmd_rss_mb_median": round(statistics.median(slurmd) / 2**20, 2) if slurmd else None,
            **_summary(rows), "events_total": sum(r["events"] for r in rows),
            "recommendations_total": sum(r["recommendations"] for r in rows)}


def summit_snapshots(n: int):
    """The first n change times of the shipped Summit log as full snapshots (NodeRow lists)."""
    import numpy as np

    from planner.store import catalog, db

    with tempfile.TemporaryDirectory() as td:
        con = db.connect(Path(td) / "s.duckdb")
        name = catalog.ensure_default(con)
        lid = db.log_row(con, name)["log_id"]
        names = [r[0] for r in con.execute("SELECT name FROM nodes WHERE log_id = ? ORDER BY node_idx",
                                           [lid]).fetchall()]
        times = [r[0] for r in con.execute("SELECT DISTINCT t_s FROM node_events WHERE log_id = ? ORDER BY t_s "
                                           "LIMIT ?", [lid, n]).fetchall()]
        ev = con.execute("SELECT t_s, node_idx, idle FROM node_events WHERE log_id = ? AND t_s <= ? ORDER BY t_s",
                         [lid, times[-1]]).fetchnumpy()
        con.close()
    state = np.zeros(len(names), bool)
    t, node, idle = ev["t_s"], ev["node_idx"], ev["idle"]
    i = 0
    idle_w, busy_w = frozenset({"IDLE"}), frozenset({"ALLOCATED"})
    for tt in times:
        while i < len(t) and t[i] <= tt:
            state[node[i]] = idle[i]
            i += 1
        yield float(tt), [NodeRow(name=names[k], words=idle_w if state[k] else busy_w, partitions=("batch",))
                          for k in range(len(names))]


def bench_summit(n_snap: int, n_jobs: int) -> dict:
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-live-summit-") as td:
        d = Path(td)
        jobs, opts = load_jobs(_jobs_file(d, n_jobs))
        poller = runner.Poller(d / "live.duckdb", "summit-live", None, ["batch"], Advisor(jobs, "auto", opts),
                               warn=lambda m: None)
        n_nodes = 0
        for t, nodes in summit_snapshots(n_snap):
            n_nodes = len(nodes)
            c0 = time.perf_counter()
            out = poller.apply(Snapshot(t_s=t, nodes=nodes, jobs=[]))
            rows.append({"poll_s": 0.0, "store_s": out["store_s"], "decide_s": out["decide_s"],
                         "total_s": time.perf_counter() - c0, "harvestable": out["harvestable"],
                         "events": out["events"], "recommendations": len(out["recommendations"])})
    return {"nodes": n_nodes, "elastic_jobs": n_jobs, **_summary(rows[1:] or rows),
            "first_cycle_s": round(rows[0]["total_s"], 4), "events_total": sum(r["events"] for r in rows),
            "recommendations_total": sum(r["recommendations"] for r in rows)}


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=256)
    ap.add_argument("--cycles", type=int, default=30)
    ap.add_argument("--summit-snapshots", type=int, default=60)
    ap.add_argument("--jobs", type=int, default=8)
    ap.add_argument("--skip-cluster", action="store_true")
    a = ap.parse_args(argv)
    res = {"when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "cpus": __import__("os").cpu_count()}
    if not a.skip_cluster:
        res["cluster"] = bench_cluster(a.nodes, a.cycles, a.jobs)
    res["summit"] = bench_summit(a.summit_snapshots, a.jobs)
    res["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(res, indent=2))
    print(json.dumps(res, indent=2))
    return res


if __name__ == "__main__":
    main()
