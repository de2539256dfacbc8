"""Allocators behind one call: allocate(name, state, opts) -> AllocResult.

Each lives in its own module exposing `allocate(state, opts)`; modules load on first use so
that importing the package stays cheap (Pyomo is only imported by the MILP allocators).
"""

from __future__ import annotations

import importlib

from planner.allocators.base import (  # noqa: F401  (re-exported)
    AllocOptions,
    AllocResult,
    AllocState,
    TrainerState,
)

# CLI name -> module under planner.allocators
REGISTRY: dict[str, str] = {
    "milp-node": "milp_node",     # BFTrainer's node-level MILP as published (reference)
    "milp": "milp_count",         # exact count-level MILP (Pyomo + HiGHS)
    "dp": "dp",                   # exact multiple-choice knapsack DP
    "hull": "hull",               # exact for large instances: LP bound + repair, certificate
    "auto": "auto",               # exact: dp for small decisions, hull for large ones
    "equal-share": "equal_share", # BFTrainer's heuristic baseline
    "greedy": "greedy",           # ModelArts' four rules
    "marginal-gain": "marginal_gain",  # Optimus
    "horizon-milp": "horizon_milp",    # ModelArts' rolling-horizon MILP
}

DESCRIPTIONS: dict[str, str] = {
    "milp-node": "BFTrainer's node-level MILP (x[j,n] binaries), Pyomo + HiGHS",
    "milp": "exact count-level MILP, Pyomo + HiGHS",
    "dp": "exact dynamic program over node counts (fast)",
    "hull": "exact at scale: concave-hull LP bound, reduced-cost repair, proof or gap",
    "auto": "exact: dp for small decisions, hull when dp's table would be large",
    "equal-share": "N // J each, clipped to Nmin..Nmax (BFTrainer's baseline)",
    "greedy": "ModelArts' greedy rules",
    "marginal-gain": "Optimus: one node at a time to the largest marginal gain",
    "horizon-milp": "ModelArts' rolling-horizon MILP over T steps of f minutes",
}


def names() -> list[str]:
    return list(REGISTRY)


def get(name: str):
    """The allocate function of allocator `name`."""
    try:
        mod = REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown allocator {name!r}; choose one of {', '.join(REGISTRY)}") from None
    return importlib.import_module(f"planner.allocators.{mod}").allocate


def allocate(name: str, state: AllocState, opts: AllocOptions | None = None) -> AllocResult:
    return get(name)(state, opts or AllocOptions())
