"""`planner allocate`: one allocation decision for an instance file (see docs/allocators.md)."""

from __future__ import annotations

from planner.allocators import ALLOCATORS, AllocOptions, allocate, names
from planner.allocators.base import OBJECTIVES, SPEED_RULES
from planner.allocators.instances import load_instance, validate_options
from planner.scenario.defaults import DEFAULT_TFWD_S

NAME = "allocate"
HELP = "run one allocator on an instance JSON (pool + Trainers) and print counts and objective"


def _allocator_help() -> str:
    """One entry per allocator record: name (exact or not): description [the options it reads]."""
    parts = []
    for a in ALLOCATORS:
        opts = ", ".join((o[:-2] if o.endswith("_s") else o).replace("_", "-")
                         for o in a.options if not o.startswith("extra."))
        parts.append(f"{a.name} ({'exact' if a.exact else 'not exact'}): {a.description}"
                     + (f" [{opts}]" if opts else ""))
    return "allocator (default dp). " + "; ".join(parts).replace("%", "%%")


def add_arguments(p):
    p.add_argument("--instance", required=True, help="instance JSON (format: examples/instance.json)")
    p.add_argument("--allocator", default="dp", choices=names(), help=_allocator_help())
    p.add_argument("--objective", choices=OBJECTIVES, default=None,
                   help="objective (default: the file's, else throughput)")
    p.add_argument("--tfwd", type=float, default=None,
                   help=f"T_fwd in seconds (default: the file's, else {DEFAULT_TFWD_S:g})")
    p.add_argument("--time-limit", type=float, default=None, help="MILP time limit in seconds (default 10)")
    p.add_argument("--mip-gap", type=float, default=None, help="MILP relative gap (default 1e-6)")
    p.add_argument("--pow2", action="store_true", default=None, help="node counts 0 or powers of two")
    p.add_argument("--pj-max", type=int, default=None, help="at most this many Trainers run (FCFS)")
    p.add_argument("--horizon-steps", type=int, default=None, help="horizon-milp: look-ahead steps (default 5)")
    p.add_argument("--step-min", type=float, default=None, help="horizon-milp: step length, minutes (default 5)")
    p.add_argument("--speed-rule", choices=SPEED_RULES, default=None,
                   help="horizon-milp: progress per step from the curve or ModelArts' rule (default curve)")
    p.add_argument("--map", action="store_true", help="also print the node map {trainer: [node ids]}")


def run(args):
    state, file_opts = load_instance(args.instance)
    kw = dict(file_opts)
    for key, val in (("objective", args.objective), ("tfwd_s", args.tfwd), ("time_limit_s", args.time_limit),
                     ("mip_gap", args.mip_gap), ("pow2", args.pow2), ("pj_max", args.pj_max),
                     ("horizon_steps", args.horizon_steps), ("step_min", args.step_min),
                     ("speed_rule", args.speed_rule)):
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
