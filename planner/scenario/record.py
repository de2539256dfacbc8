"""A Scenario: every knob of one replay, named as the `planner simulate` options.

    Scenario.from_dict({"allocator": "dp", "pj_max": 10, ...})  # validates, InputError on bad input
    run_scenario(scenario, progress=None, con=None) -> planner.replay.simulator.SimResult

Field names are the CLI option names with dashes as underscores; the app and the sweep
engine build Scenarios from dicts of exactly these names. Each field (type, default, bounds,
choices, unit, help) is declared once, in planner.scenario.schema.FIELDS; the dataclass is made
from it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, make_dataclass
from dataclasses import field as _dc_field

from planner.errors import InputError
from planner.scenario.schema import FIELDS, POOLS, SUBSETS, check, coerce_all
from planner.store import catalog
from planner.times import MAX_S, format_iso, parse_time

__all__ = ["Scenario", "run_scenario", "build_pool", "build_workload", "POOLS", "SUBSETS"]


class _ScenarioMethods:
    """The behaviour of Scenario; its fields come from planner.scenario.schema.FIELDS."""

    @classmethod
    def from_dict(cls, d: dict | None) -> "Scenario":
        if d and str(d.get("tfwd", "")).strip().lower() == "adaptive":  # `--tfwd adaptive`
            d = {**{k: v for k, v in d.items() if k != "tfwd"}, "tfwd_rule": "adaptive"}
        sc = cls(**coerce_all(d))  # unknown names and bad values: InputError naming the field
        sc.validate()
        return sc

    def to_dict(self) -> dict:
        return asdict(self)

    def validate(self):
        """Every field against the schema, then the rules that tie fields together."""
        for f in FIELDS:
            check(f.name, getattr(self, f.name))
        if self.pool == "fixed" and self.pool_size is None:
            raise InputError("a fixed pool needs its size P", field="pool_size")
        if self.bug_share + self.kill_share > 1:
            raise InputError("bug_share + kill_share must be at most 1", field="kill_share")
        if self.pool == "fixed":  # a log window is clipped to the log; a fixed one must stay dated
            t0 = parse_time(self.start) if self.start is not None else 0.0
            if t0 + self.hours * 3600.0 >= MAX_S:
                raise InputError(f"the window would end after {format_iso(MAX_S)}", field="hours")

    def alloc_options(self):
        from planner.allocators.base import AllocOptions

        return AllocOptions(tfwd_s=float(self.tfwd), objective=self.objective,
                            time_limit_s=float(self.time_limit),
                            mip_gap=float(self.mip_gap), pow2=bool(self.pow2),
                            pj_max=int(self.pj_max), horizon_steps=int(self.horizon_steps),
                            step_min=float(self.step_min), speed_rule=self.speed_rule,
                            extra={"eta_noise": float(self.eta_noise), "bug_share": float(self.bug_share),
                                   "kill_share": float(self.kill_share),
                                   "scaling_delay_s": float(self.scaling_delay_s), "seed": int(self.seed),
                                   "early_finish": bool(self.early_finish),
                                   "min_every_step": bool(self.min_every_step)})


Scenario = make_dataclass(
    "Scenario", [(f.name, f.annotation, _dc_field(default=f.default)) for f in FIELDS],
    bases=(_ScenarioMethods,), frozen=True)
Scenario.__module__ = __name__  # pickles (sweep workers) as planner.scenario.record.Scenario
Scenario.__doc__ = ("Every knob of one replay; fields, types, defaults and bounds: "
                    "planner.scenario.schema.FIELDS.")


def build_pool(sc: Scenario, con=None):
    """The PoolTrace of a scenario (opens sc.db only for a `log` pool).

    Without `con`, the database is opened read-only when it already holds what the scenario
    needs (so that parallel replays, e.g. a sweep, can share one file), read-write otherwise
    (to load the shipped Summit log the first time).
    """
    from planner.replay.pool import fixed_pool

    if sc.pool == "fixed":
        t0 = parse_time(sc.start) if sc.start is not None else 0.0
        return fixed_pool(int(sc.pool_size), t0, t0 + sc.hours * 3600.0)
    from planner.idle import fragments

    with catalog.log_connection(sc.db, sc.log, con) as (con, log):
        return fragments.pool_trace(con, log, start=sc.start, hours=sc.hours, pool_size=sc.pool_size,
                                    subset=sc.pool_subset, seed=sc.seed)


def build_workload(sc: Scenario):
    from planner.workload import runtimes
    from planner.workload.generators import choose_batches, make_workload

    rup, rdw, _ = runtimes.costs(sc.runtime, sc.rup, sc.rdw)
    specs = make_workload(sc.workload, seed=sc.seed, count=sc.count, interarrival_s=sc.interarrival_s,
                          rup_s=rup, rdw_s=rdw)
    return choose_batches(specs, sc.batch_choice, seed=sc.seed)


def replay_options(sc: Scenario) -> dict:
    """simulate() keywords of the papers' options: migration cost, admission rule, curve learner."""
    from planner.workload import runtimes

    out: dict = {"admission": sc.admission, "drop": bool(sc.drop)}
    if sc.allow_migration:
        out["migrate_s"] = runtimes.get(sc.runtime or runtimes.DEFAULT).migrate_s
    if sc.learn_curves:
        from planner.workload.learning import CurveLearner

        out["learner"] = CurveLearner(seed=sc.seed)
    return out


def run_scenario(scenario: Scenario | dict, progress: Callable[[float], None] | None = None, con=None):
    """Run one replay; progress(fraction of simulated time) is called at least every 1 %."""
    from planner.replay.simulator import simulate

    sc = scenario if isinstance(scenario, Scenario) else Scenario.from_dict(scenario)
    sc.validate()
    specs = build_workload(sc)
    if sc.eta_noise or sc.bug_share or sc.kill_share:
        from planner.workload.generators import perturb_workload

        try:
            specs = perturb_workload(specs, eta_noise=sc.eta_noise, bug_share=sc.bug_share,
                                     kill_share=sc.kill_share, seed=sc.seed)
        except ValueError as e:
            raise InputError(str(e), field="eta_noise" if "eta" in str(e) else "bug_share") from None
    pool = build_pool(sc, con)
    from planner.predict.replay_hooks import scenario_hooks

    res = simulate(pool, specs, allocator=sc.allocator, opts=sc.alloc_options(), pj_max=sc.pj_max,
                   cadence=sc.cadence, step_min=sc.step_min, idle_during_solve=sc.idle_during_solve,
                   scaling_delay_s=sc.scaling_delay_s, progress=progress, scenario=sc.to_dict(),
                   **replay_options(sc), **scenario_hooks(sc, pool, con))
    s = res.summary
    head = {"allocator": sc.allocator, "workload": sc.workload, "pool": sc.pool,
            "pool_size": pool.nodes, "tfwd_s": sc.tfwd, "objective": sc.objective, "pj_max": sc.pj_max,
            "cadence": sc.cadence, "seed": sc.seed}
    if sc.tfwd_rule != "fixed" or sc.node_choice != "lowest-id":
        head.update(tfwd_rule=sc.tfwd_rule, node_choice=sc.node_choice)
    res.summary = {**head, **s}
    return res
