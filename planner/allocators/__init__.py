"""Allocators behind one call: allocate(name, state, opts) -> AllocResult.

Each lives in its own module exposing `allocate(state, opts)`; the records below hold the
functions themselves. Pyomo loads on first use only: the MILP modules import it inside their
functions, and horizon-milp (which builds its model with pyomo.environ at module level) is
reached through a small wrapper that imports it on the first call, so `planner --help` and the
app start without Pyomo.

ALLOCATORS holds one record per allocator (name, function, description, exact or not, the
AllocOptions it reads, ...); the CLI (`planner allocate`, `planner bench`), the benchmark
(planner.bench.suite), the app and the tests read it. REGISTRY (name -> function) and
DESCRIPTIONS (name -> description) are views of it. To add an allocator: a module with
`allocate`, one AllocatorInfo line below.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from planner.allocators import (
    auto,
    dp,
    dp_reduced,
    drf,
    elan,
    equal_share,
    greedy,
    hull,
    marginal_gain,
    milp,
    milp_node,
    optimus,
    static,
)
from planner.allocators.base import (  # noqa: F401  (re-exported)
    AllocOptions,
    AllocResult,
    AllocState,
    TrainerState,
)


def _horizon_milp(state: AllocState, opts: AllocOptions) -> AllocResult:
    """horizon_milp.allocate, imported on the first call (it imports Pyomo at module level)."""
    from planner.allocators import horizon_milp  # lazy: heavy (planner.allocators.horizon_milp loads pyomo)

    return horizon_milp.allocate(state, opts)


_horizon_milp.target = ("horizon_milp", "allocate")  # what the wrapper calls (AllocatorInfo.module)

# AllocOptions fields every allocator honours: the objective (and T_fwd) of the reported
# AllocResult.objective, and Pj_max (base.fcfs_eligible)
COMMON_OPTIONS = ("objective", "tfwd_s", "pj_max")
_MILP = ("time_limit_s", "mip_gap")


@dataclass(frozen=True)
class AllocatorInfo:
    name: str  # CLI name
    allocate: Callable[[AllocState, AllocOptions], AllocResult]
    description: str  # one line, for help texts and the app
    exact: bool  # proves the optimum of BFTrainer's objective (within opts.mip_gap for MILPs)
    options: tuple[str, ...]  # AllocOptions fields it reads beyond COMMON_OPTIONS ("extra.k": opts.extra[k])
    node_level: bool = False  # picks node ids itself (else the map is base.counts_to_map of its counts)
    bench: bool = True  # in the default set of `planner bench allocators` (BFTrainer's Fig. 5 grid)
    source: str = ""  # where the method comes from

    @property
    def module(self) -> str:
        """The module under planner.allocators whose function the record holds."""
        return getattr(self.allocate, "target", (self.allocate.__module__.rsplit(".", 1)[-1],))[0]

    @property
    def function(self) -> str:
        """That function's name in its module (one module may hold variants)."""
        return getattr(self.allocate, "target", (None, self.allocate.__name__))[1]


ALLOCATORS: tuple[AllocatorInfo, ...] = (
    AllocatorInfo("milp-node", milp_node.allocate, "BFTrainer's node-level MILP (x[j,n] binaries), Pyomo + HiGHS",
                  exact=True, options=("pow2", *_MILP), node_level=True, source="BFTrainer (reference)"),
    AllocatorInfo("milp", milp.allocate, "exact count-level MILP, Pyomo + HiGHS",
                  exact=True, options=("pow2", *_MILP, "extra.warm_start")),
    AllocatorInfo("dp", dp.allocate, "exact dynamic program over node counts (fast)", exact=True, options=("pow2",)),
    AllocatorInfo("hull", hull.allocate, "exact at scale: concave-hull LP bound, reduced-cost repair, proof or gap",
                  exact=True, options=("pow2",)),
    AllocatorInfo("dp-reduced", dp_reduced.allocate,
                  "exact dp over the levels a Lagrangian price keeps (fast mid-size)",
                  exact=True, options=("pow2",)),
    AllocatorInfo("auto", auto.allocate, "exact, the fastest for the size: dp, dp-reduced or hull",
                  exact=True, options=("pow2",)),
    AllocatorInfo("equal-share", equal_share.allocate, "N // J each, clipped to Nmin..Nmax (BFTrainer's baseline)",
                  exact=False, options=("pow2",), source="BFTrainer"),
    AllocatorInfo("greedy", greedy.allocate, "ModelArts' greedy rules", exact=False, options=("pow2",),
                  source="ModelArts (Hu et al. 2021)"),
    AllocatorInfo("marginal-gain", marginal_gain.allocate,
                  "greedy on the chosen objective: one node at a time to the largest objective gain per node",
                  exact=False, options=("pow2",), source="greedy on BFTrainer's objective (not Optimus' gain)"),
    AllocatorInfo("optimus", optimus.allocate, "Optimus: all at Nmin, then one node at a time to the largest "
                  "drop in estimated completion time", exact=False, options=("pow2",), bench=False,
                  source="Optimus (Peng et al. 2018)"),
    AllocatorInfo("elan", elan.allocate, "Elan's E-FIFO: admit FIFO while Nmin < free nodes, all at Nmin, then "
                  "Optimus' gain", exact=False, options=("pow2",), bench=False, source="Elan (Xie et al. 2020)"),
    AllocatorInfo("elan-backfill", elan.allocate_backfill,
                  "Elan's E-BF: as elan, later jobs admitted past a blocked one",
                  exact=False, options=("pow2",), bench=False, source="Elan (Xie et al. 2020)"),
    AllocatorInfo("drf", drf.allocate, "DRF (one resource: max-min fair): FIFO at Nmin, then one node at a time "
                  "to the smallest", exact=False, options=("pow2",), bench=False,
                  source="Optimus' fairness baseline (Ghodsi et al. 2011)"),
    AllocatorInfo("horizon-milp", _horizon_milp, "ModelArts' rolling-horizon MILP over T steps of f minutes",
                  exact=False, options=("horizon_steps", "step_min", "speed_rule", *_MILP, "extra.spare_nodes",
                                        "extra.aggregate", "extra.warm_start", "extra.highs_options",
                                        "extra.early_finish", "extra.min_every_step"),
                  bench=False, source="ModelArts (Hu et al. 2021)"),
    AllocatorInfo("static", static.allocate, "rigid: each Trainer at its requested size or waiting, FIFO",
                  exact=False, options=("pow2",), bench=False, source="Elan (Xie et al. 2020): static FIFO"),
    AllocatorInfo("static-backfill", static.allocate_backfill,
                  "rigid: each Trainer at its requested size or waiting, backfill",
                  exact=False, options=("pow2",), bench=False, source="Elan (Xie et al. 2020): static Backfill"),
)

_BY_NAME: dict[str, AllocatorInfo] = {a.name: a for a in ALLOCATORS}

# views of ALLOCATORS (kept for the callers that index them by name)
REGISTRY: dict[str, Callable] = {a.name: a.allocate for a in ALLOCATORS}
DESCRIPTIONS: dict[str, str] = {a.name: a.description for a in ALLOCATORS}


def names(exact: bool | None = None, bench: bool | None = None) -> list[str]:
    """Allocator names in registry order; exact/bench filter on the records' flags."""
    return [a.name for a in ALLOCATORS
            if (exact is None or a.exact == exact) and (bench is None or a.bench == bench)]


def info(name: str) -> AllocatorInfo:
    """The record of allocator `name` (ValueError naming the choices when unknown)."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise ValueError(f"unknown allocator {name!r}; choose one of {', '.join(_BY_NAME)}") from None


def get(name: str):
    """The allocate function of allocator `name`."""
    rec = info(name)
    return rec.allocate


def allocate(name: str, state: AllocState, opts: AllocOptions | None = None) -> AllocResult:
    return get(name)(state, opts or AllocOptions())
