"""`planner allocate`: one allocation decision for an instance file (see docs/allocators.md)."""

from __future__ import annotations

NAME = "allocate"
HELP = "run one allocator on an instance JSON (pool + Trainers) and print counts and objective"


def add_arguments(p):
    from planner.allocators import REGISTRY
    from planner.allocators.base import OBJECTIVES

    p.add_argument("--instance", required=True, help="instance JSON (format: examples/instance.json)")
    p.add_argument("--allocator", default="dp", choices=list(REGISTRY), help="allocator (default dp)")
    p.add_argument("--objective", choices=OBJECTIVES, default=None,
                   help="objective (default: the file's, else throughput)")
    p.add_argument("--tfwd", type=float, default=None, help="T_fwd in seconds (default: the file's, else 120)")
    p.add_argument("--time-limit", type=float, default=None, help="MILP time limit in seconds (default 10)")
    p.add_argument("--mip-gap", type=float, default=None, help="MILP relative gap (default 1e-6)")
    p.add_argument("--pow2", action="store_true", default=None, help="node counts 0 or powers of two")
    p.add_argument("--pj-max", type=int, default=None, help="at most this many Trainers run (FCFS)")
    p.add_argument("--map", action="store_true", help="also print the node map {trainer: [node ids]}")


def run(args):
    from planner.allocators import AllocOptions, allocate
    from planner.instances import load_instance, validate_options

    state, file_opts = load_instance(args.instance)
    kw = dict(file_opts)
    for key, val in (("objective", args.objective), ("tfwd_s", args.tfwd), ("time_limit_s", args.time_limit),
                     ("mip_gap", args.mip_gap), ("pow2", args.pow2), ("pj_max", args.pj_max)):
        if val is not None:
            kw[key] = val
    kw = validate_options(kw)  # finite, bounded numbers (flags and file alike)
    if "time_limit_s" in kw:
        kw["time_limit_s"] = float(kw["time_limit_s"])
    res = allocate(args.allocator, state, AllocOptions(**kw))
    out = res.to_json()
    if res.message:
        out["message"] = res.message
    if args.map:
        out["node_map"] = {k: list(v) for k, v in res.node_map.items()}
    return out
