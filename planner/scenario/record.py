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
from dataclasses import asdict, make_dataclass, replace
from dataclasses import field as _dc_field

from planner.allocators.base import AllocOptions
from planner.errors import InputError
from planner.idle import fragments
from planner.idle.window import Window
from planner.predict.replay_hooks import scenario_hooks
from planner.replay import bounds, clairvoyant
from planner.replay.config import ReplayConfig, ReplayHooks
from planner.replay.pool import fixed_pool
from planner.replay.simulator import simulate
from planner.scenario.schema import FIELDS, POOLS, SUBSETS, check, coerce_all
from planner.store import catalog, db
from planner.times import MAX_S, format_iso, parse_time
from planner.workload import mix, runtimes
from planner.workload.generators import choose_batches, make_workload, perturb_workload
from planner.workload.learning import CurveLearner

# decisions of one interval-cadence replay (a year at 5 min is 105,120)
MAX_INTERVAL_DECISIONS = 1_000_000

__all__ = ["Scenario", "run_scenario", "replay_scenario", "build_pool", "build_workload", "POOLS", "SUBSETS"]


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
        mix.parse(self.models)  # a bad model mix is refused before anything runs (field models)
        if self.bug_share + self.kill_share > 1:
            raise InputError("bug_share + kill_share must be at most 1", field="kill_share")
        if self.cadence == "interval" and self.hours * 60.0 / self.step_min > MAX_INTERVAL_DECISIONS:
            raise InputError(f"{self.hours:g} h at one decision every {self.step_min:g} min is "
                             f"{self.hours * 60.0 / self.step_min:,.0f} decisions (at most "
                             f"{MAX_INTERVAL_DECISIONS:,}); choose a longer step or a shorter window",
                             field="step_min")
        if self.pool == "fixed":  # a log window is clipped to the log; a fixed one must stay dated
            t0 = parse_time(self.start) if self.start is not None else 0.0
            if t0 + self.hours * 3600.0 >= MAX_S:
                raise InputError(f"the window would end after {format_iso(MAX_S)}", field="hours")

    def alloc_options(self) -> AllocOptions:
        """What the allocator is given. Pj_max and the step f are not here: they are the replay's
        (replay_config()), and the replay hands them to the allocator."""
        return AllocOptions(tfwd_s=float(self.tfwd), objective=self.objective,
                            time_limit_s=float(self.time_limit), mip_gap=float(self.mip_gap),
                            pow2=bool(self.pow2), horizon_steps=int(self.horizon_steps),
                            speed_rule=self.speed_rule,
                            extra={"early_finish": bool(self.early_finish),
                                   "min_every_step": bool(self.min_every_step)})

    def replay_config(self) -> ReplayConfig:
        return ReplayConfig.from_scenario(self)

    def window(self, log: str | None = None) -> Window:
        """The log window of a `log` pool (`log`: the store's name for sc.log, when resolved)."""
        return Window(log=log or self.log, start=self.start, hours=self.hours, pool_size=self.pool_size,
                      subset=self.pool_subset, seed=self.seed)


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
    if sc.pool == "fixed":
        t0 = parse_time(sc.start) if sc.start is not None else 0.0
        return fixed_pool(int(sc.pool_size), t0, t0 + sc.hours * 3600.0)

    with catalog.log_connection(sc.db, sc.log, con) as (con, log):
        # one knob, include_outages, for both: outages and warm-up (scenario.schema)
        return fragments.pool_trace(con, sc.window(log), include_outages=sc.include_outages,
                                    include_warmup=sc.include_outages)


def log_arrivals(sc: Scenario, pool=None, con=None):
    """Arrival "log": the submit times of the scenario's job log in its window, in seconds after
    the window start (the window of `pool` when given, else the scenario's own)."""
    with catalog.log_connection(sc.db, sc.log, con) as (con, log):
        row = db.log_row(con, log)
        if row["kind"] != "jobs":
            raise InputError(f"arrival 'log' replays a job log's submissions; {row['name']} is a node log "
                             "(no submissions): choose a job log or another arrival process", field="arrival")
        if pool is not None and pool.kind == "log":
            t0, t1 = float(pool.start_s), float(pool.end_s)
        else:
            t0 = parse_time(sc.start) if sc.start is not None else float(row["start_s"])
            t1 = t0 + sc.hours * 3600.0
        return db.job_submissions_between(con, int(row["log_id"]), t0, t1) - t0


def build_workload(sc: Scenario, pool=None, con=None):
    """The scenario's Trainers (arrival "log" reads the log's submissions in the window of `pool`)."""
    rup, rdw, _ = runtimes.costs(sc.runtime, sc.rup, sc.rdw)
    times = log_arrivals(sc, pool, con) if sc.arrival == "log" else None
    specs = make_workload(sc.workload, seed=sc.seed, count=sc.count, interarrival_s=sc.interarrival_s,
                          rup_s=rup, rdw_s=rdw, arrival=sc.arrival, log_times=times)
    specs = mix.apply(specs, mix.parse(sc.models))
    return choose_batches(specs, sc.batch_choice, seed=sc.seed)


def replay_hooks(sc: Scenario, pool, con=None) -> ReplayHooks:
    """The replay's hooks for the papers' options: the survival-model rules (tfwd_rule,
    node_choice) and the curve learner (learn_curves)."""
    learner = CurveLearner(seed=sc.seed) if sc.learn_curves else None
    return ReplayHooks(**scenario_hooks(sc, pool, con), learner=learner)


def attach_bounds(res, sc: Scenario, pool, specs, con=None) -> None:
    """summary["cost_free"] (and ["clairvoyant"]) as sc.bound asks (planner.replay.bounds)."""
    res.summary.update(cost_free_of(res.summary, sc, pool, specs, con))
    res.summary.update(clairvoyant_of(res.summary, sc, pool, specs))
    res.summary.update(survival_option_of(res.summary, sc, pool, specs, con))


def cost_free_of(summary: dict, sc: Scenario, pool, specs, con=None, hooks: ReplayHooks | None = None) -> dict:
    """{"cost_free": ...} of a replay's summary when sc.bound asks for it, else {} (hooks: fresh
    ones of the same rules, built here unless given)."""
    if sc.bound == "none":
        return {}
    hooks = replay_hooks(sc, pool, con) if hooks is None else hooks  # fresh hooks and learner
    return {"cost_free": bounds.cost_free(pool, specs, sc.allocator, sc.alloc_options(), sc.replay_config(),
                                          hooks, summary.get("static_samples"))}


def clairvoyant_of(summary: dict, sc: Scenario, pool, specs) -> dict:
    """{"clairvoyant": ...} when sc.bound is "clairvoyant", else {}."""
    if sc.bound != "clairvoyant":
        return {}
    return {"clairvoyant": clairvoyant.bound_summary(pool, specs, sc, summary.get("static_samples"))}


def survival_option_of(summary: dict, sc: Scenario, pool, specs, con=None) -> dict:
    """{"survival_option": survival_option_share(...)} for a replay with a survival-model option
    (tfwd_rule, node_choice) when sc.bound asks for limits, else {}."""
    if sc.bound == "none" or (sc.tfwd_rule == "fixed" and sc.node_choice == "lowest-id"):
        return {}
    return {"survival_option": survival_option_share(summary, sc, pool, specs, con)}


def survival_option_share(summary: dict, sc: Scenario, pool, specs, con=None) -> dict:
    """What a survival-model option (tfwd_rule, node_choice) recovers of the cost-free headroom:
    the same replay without the options (fixed T_fwd, lowest-id nodes) and its cost-free twin;
    share = (U with the options - U without) / (cost-free U without - U without) (issue 24;
    docs/windows.md section 3). None where there is no headroom or no U."""
    plain = replace(sc, tfwd_rule="fixed", node_choice="lowest-id")
    r = simulate(pool, specs, plain.allocator, plain.alloc_options(), plain.replay_config(),
                 hooks=replay_hooks(plain, pool, con))
    a_s = r.summary.get("static_samples")
    cf = bounds.cost_free(pool, specs, plain.allocator, plain.alloc_options(), plain.replay_config(),
                          replay_hooks(plain, pool, con), a_s)
    u, u0, cf0 = summary.get("utilization_efficiency"), r.summary.get("utilization_efficiency"), \
        cf.get("utilization_efficiency")
    share = (u - u0) / (cf0 - u0) if None not in (u, u0, cf0) and cf0 > u0 else None
    return {"options": {"tfwd_rule": sc.tfwd_rule, "node_choice": sc.node_choice},
            "plain_utilization_efficiency": u0, "plain_cost_free_utilization_efficiency": cf0,
            "headroom_share_recovered": share}


def scenario_inputs(sc: Scenario, con=None) -> tuple[list, object]:
    """(the Trainers, the pool) a replay of `sc` gets (the workload perturbed as sc asks)."""
    pool = build_pool(sc, con)
    specs = build_workload(sc, pool, con)
    if sc.eta_noise or sc.bug_share or sc.kill_share:
        try:
            specs = perturb_workload(specs, eta_noise=sc.eta_noise, bug_share=sc.bug_share,
                                     kill_share=sc.kill_share, seed=sc.seed)
        except ValueError as e:
            raise InputError(str(e), field="eta_noise" if "eta" in str(e) else "bug_share") from None
    return specs, pool


def scenario_bound(scenario: Scenario | dict, static_samples: float | None, con=None,
                   time_limit_s: float | None = None) -> dict:
    """The clairvoyant bound of a scenario's window on its own (the app's "compute the bound"
    after a replay; static_samples: the replay's A_s, for U). Refuses windows too large for the
    MILP in one line (planner.replay.clairvoyant)."""
    sc = scenario if isinstance(scenario, Scenario) else Scenario.from_dict(scenario)
    sc.validate()
    specs, pool = scenario_inputs(sc, con)
    kw = {} if time_limit_s is None else {"time_limit_s": float(time_limit_s)}
    return clairvoyant.bound_summary(pool, specs, sc, static_samples, **kw)


def replay_scenario(sc: Scenario, specs, pool, hooks: ReplayHooks | None = None,
                    progress: Callable[[float], None] | None = None, con=None):
    """The replay of run_scenario without its bounds (attach_bounds adds them afterwards):
    hooks are built here unless given (fresh ones: they may learn during a replay)."""
    hooks = replay_hooks(sc, pool, con) if hooks is None else hooks
    res = simulate(pool, specs, sc.allocator, sc.alloc_options(), sc.replay_config(),
                   hooks=hooks, progress=progress, scenario=sc.to_dict())
    s = res.summary
    head = {"allocator": sc.allocator, "workload": sc.workload, "pool": sc.pool,
            "pool_size": pool.nodes, "tfwd_s": sc.tfwd, "objective": sc.objective, "pj_max": sc.pj_max,
            "cadence": sc.cadence, "seed": sc.seed}
    if sc.tfwd_rule != "fixed" or sc.node_choice != "lowest-id":
        head.update(tfwd_rule=sc.tfwd_rule, node_choice=sc.node_choice)
    res.summary = {**head, **s}  # the bounds (attach_bounds) come after these keys, as before
    return res


def run_scenario(scenario: Scenario | dict, progress: Callable[[float], None] | None = None, con=None):
    """Run one replay; progress(fraction of simulated time) is called at least every 1 %."""
    sc = scenario if isinstance(scenario, Scenario) else Scenario.from_dict(scenario)
    sc.validate()
    specs, pool = scenario_inputs(sc, con)
    res = replay_scenario(sc, specs, pool, progress=progress, con=con)
    attach_bounds(res, sc, pool, specs, con)
    return res
