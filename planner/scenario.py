"""A Scenario: every knob of one replay, named as the `planner simulate` options.

    Scenario.from_dict({"allocator": "dp", "pj_max": 10, ...})  # validates, InputError on bad input
    run_scenario(scenario, progress=None, con=None) -> planner.simulator.SimResult

Field names are the CLI option names with dashes as underscores; the app and the sweep
engine build Scenarios from dicts of exactly these names.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from datetime import datetime, timezone
from typing import Callable

from planner.errors import InputError

POOLS = ("log", "fixed")
SUBSETS = ("first", "random")
CADENCES = ("events", "interval")
SPEED_RULES = ("curve", "modelarts")


@dataclass(frozen=True)
class Scenario:
    db: str | None = None                # DuckDB file (None: planner.paths.default_db())
    log: str | None = None               # log name (None: the shipped Summit log)
    start: str | None = None             # window start, ISO (None: the log's start)
    hours: float = 24.0                  # window length
    pool: str = "log"                    # log | fixed
    pool_size: int | None = None         # log: harvest K nodes (None: all); fixed: P (required)
    pool_subset: str = "first"           # which K nodes of a log: first | random (seeded)
    workload: str = "hpo"                # hpo | diverse | philly | path of a Trainer CSV
    count: int | None = None             # number of Trainers (None: the workload's default)
    interarrival_s: float | None = None  # hpo: spacing; diverse: mean Poisson gap (None: default)
    allocator: str = "dp"
    tfwd: float = 120.0                  # T_fwd seconds
    objective: str = "throughput"
    pj_max: int = 10
    seed: int = 0
    cadence: str = "events"              # events (BFTrainer) | interval (every step_min minutes)
    time_limit: float = 10.0             # solver seconds per decision
    mip_gap: float = 1e-6                # relative MIP gap of the MILP allocators
    rup: float | None = None             # override every Trainer's scale-up cost (s)
    rdw: float | None = None             # override every Trainer's scale-down cost (s)
    horizon_steps: int = 5               # horizon-milp look-ahead steps
    step_min: float = 5.0                # decision step (interval cadence, horizon-milp)
    speed_rule: str = "curve"            # horizon-milp progress model: curve | modelarts
    eta_noise: float = 0.0               # relative error of ETAs given to the allocator
    bug_share: float = 0.0               # share of Trainers that fail early (ModelArts study)
    kill_share: float = 0.0              # share of Trainers killed by their users
    scaling_delay_s: float = 0.0         # extra delay when a Trainer is rescaled
    idle_during_solve: bool = False      # nodes a decision moves stay idle for its wall time
    pow2: bool = False                   # node counts restricted to 0 and powers of two

    @classmethod
    def from_dict(cls, d: dict | None) -> "Scenario":
        d = dict(d or {})
        known = {f.name: f for f in fields(cls)}
        for k in d:
            if k not in known:
                raise InputError(f"unknown scenario field (known: {', '.join(known)})", field=k)
        out = {}
        for name, value in d.items():
            out[name] = _coerce(name, value)
        sc = cls(**out)
        sc.validate()
        return sc

    def to_dict(self) -> dict:
        return asdict(self)

    def validate(self):
        from planner import allocators
        from planner.allocators.base import OBJECTIVES

        def bad(field, msg):
            raise InputError(msg, field=field)

        if not (self.hours > 0 and math.isfinite(self.hours)):
            bad("hours", f"must be > 0, got {self.hours}")
        if self.pool not in POOLS:
            bad("pool", f"choose one of {', '.join(POOLS)}, got {self.pool!r}")
        if self.pool_subset not in SUBSETS:
            bad("pool_subset", f"choose one of {', '.join(SUBSETS)}, got {self.pool_subset!r}")
        if self.pool_size is not None and self.pool_size < 1:
            bad("pool_size", f"must be >= 1, got {self.pool_size}")
        if self.pool == "fixed" and self.pool_size is None:
            bad("pool_size", "a fixed pool needs its size P")
        if self.count is not None and self.count < 0:
            bad("count", f"must be >= 0, got {self.count}")
        if self.interarrival_s is not None and not self.interarrival_s >= 0:
            bad("interarrival_s", f"must be >= 0, got {self.interarrival_s}")
        if self.allocator not in allocators.names():
            bad("allocator", f"choose one of {', '.join(allocators.names())}, got {self.allocator!r}")
        if self.objective not in OBJECTIVES:
            bad("objective", f"choose one of {', '.join(OBJECTIVES)}, got {self.objective!r}")
        if not self.tfwd > 0:
            bad("tfwd", f"must be > 0, got {self.tfwd}")
        if self.pj_max < 1:
            bad("pj_max", f"must be >= 1, got {self.pj_max}")
        if self.cadence not in CADENCES:
            bad("cadence", f"choose one of {', '.join(CADENCES)}, got {self.cadence!r}")
        if not self.time_limit > 0:
            bad("time_limit", f"must be > 0, got {self.time_limit}")
        if not 0 <= self.mip_gap < 1:
            bad("mip_gap", f"must be within 0..1, got {self.mip_gap}")
        for f in ("rup", "rdw"):
            v = getattr(self, f)
            if v is not None and not (v >= 0 and math.isfinite(v)):
                bad(f, f"must be >= 0, got {v}")
        if self.horizon_steps < 1:
            bad("horizon_steps", f"must be >= 1, got {self.horizon_steps}")
        if not self.step_min > 0:
            bad("step_min", f"must be > 0, got {self.step_min}")
        if self.speed_rule not in SPEED_RULES:
            bad("speed_rule", f"choose one of {', '.join(SPEED_RULES)}, got {self.speed_rule!r}")
        if not 0 <= self.eta_noise < 1:
            bad("eta_noise", f"must be within 0..1 (exclusive), got {self.eta_noise}")
        for f in ("bug_share", "kill_share"):
            v = getattr(self, f)
            if not 0 <= v <= 1:
                bad(f, f"must be within 0..1, got {v}")
        if self.bug_share + self.kill_share > 1:
            bad("kill_share", "bug_share + kill_share must be at most 1")
        if not self.scaling_delay_s >= 0:
            bad("scaling_delay_s", f"must be >= 0, got {self.scaling_delay_s}")
        if self.start is not None:
            parse_start(self.start)

    def alloc_options(self):
        from planner.allocators.base import AllocOptions

        return AllocOptions(tfwd_s=float(self.tfwd), objective=self.objective,
                            time_limit_s=float(self.time_limit),
                            mip_gap=float(self.mip_gap), pow2=bool(self.pow2),
                            pj_max=int(self.pj_max), horizon_steps=int(self.horizon_steps),
                            step_min=float(self.step_min), speed_rule=self.speed_rule,
                            extra={"eta_noise": float(self.eta_noise), "bug_share": float(self.bug_share),
                                   "kill_share": float(self.kill_share),
                                   "scaling_delay_s": float(self.scaling_delay_s), "seed": int(self.seed)})


_INT = {"pool_size", "count", "pj_max", "seed", "horizon_steps"}
_FLOAT = {"hours", "interarrival_s", "tfwd", "time_limit", "mip_gap", "rup", "rdw", "step_min", "eta_noise",
          "bug_share", "kill_share", "scaling_delay_s"}
_BOOL = {"idle_during_solve", "pow2"}
_OPTIONAL = {"db", "log", "start", "pool_size", "count", "interarrival_s", "rup", "rdw"}


def _coerce(name: str, value):
    if value is None or (isinstance(value, str) and value.strip() == "" and name in _OPTIONAL):
        if name in _OPTIONAL:
            return None
        raise InputError("a value is required", field=name)
    if isinstance(value, float) and math.isnan(value) and name in _OPTIONAL:
        return None
    try:
        if name in _INT:
            if isinstance(value, bool):
                raise ValueError
            f = float(value)
            if f != int(f):
                raise ValueError
            return int(f)
        if name in _FLOAT:
            if isinstance(value, bool):
                raise ValueError
            f = float(value)
            if math.isnan(f):
                raise ValueError
            return f
        if name in _BOOL:
            if isinstance(value, str):
                v = value.strip().lower()
                if v in ("1", "true", "yes", "on"):
                    return True
                if v in ("0", "false", "no", "off"):
                    return False
                raise ValueError
            return bool(value)
    except (TypeError, ValueError, OverflowError):
        kind = "a whole number" if name in _INT else "a number" if name in _FLOAT else "true/false"
        raise InputError(f"must be {kind}, got {value!r}", field=name) from None
    return str(value)


def parse_start(start) -> float:
    """An ISO time (UTC unless it says otherwise) or epoch seconds -> epoch seconds."""
    if isinstance(start, (int, float)):
        return float(start)
    text = str(start).strip()
    try:
        return float(text)
    except ValueError:
        pass
    try:
        dt = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise InputError(f"not an ISO time: {start!r}", field="start") from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.timestamp()


def build_pool(sc: Scenario, con=None):
    """The PoolTrace of a scenario (opens sc.db only for a `log` pool).

    Without `con`, the database is opened read-only when it already holds what the scenario
    needs (so that parallel replays, e.g. a sweep, can share one file), read-write otherwise
    (to load the shipped Summit log the first time).
    """
    from planner.pool import fixed_pool

    if sc.pool == "fixed":
        t0 = parse_start(sc.start) if sc.start is not None else 0.0
        return fixed_pool(int(sc.pool_size), t0, t0 + sc.hours * 3600.0)
    from planner import fragments, logs

    own = con is None
    if own:
        con = _open_db(sc.db, need_default=sc.log is None)
    try:
        log = sc.log or logs.ensure_default(con)
        return fragments.pool_trace(con, log, start=sc.start, hours=sc.hours, pool_size=sc.pool_size,
                                    subset=sc.pool_subset, seed=sc.seed)
    finally:
        if own:
            con.close()


def _open_db(path, need_default: bool):
    from pathlib import Path

    import duckdb

    from planner import db, logs, paths

    path = paths.default_db() if path is None else path
    if str(path) != ":memory:" and Path(path).exists():
        try:
            con = db.connect(path, read_only=True)
        except duckdb.Error:
            con = None
        if con is not None:
            try:
                ok = not need_default or con.execute(
                    "SELECT 1 FROM logs WHERE name = ?", [logs.DEFAULT_LOG]).fetchone() is not None
            except duckdb.Error:
                ok = False
            if ok:
                return con
            con.close()
    return db.connect(path)


def build_workload(sc: Scenario):
    from planner.workloads import make_workload

    return make_workload(sc.workload, seed=sc.seed, count=sc.count, interarrival_s=sc.interarrival_s,
                         rup_s=sc.rup, rdw_s=sc.rdw)


def run_scenario(scenario: Scenario | dict, progress: Callable[[float], None] | None = None, con=None):
    """Run one replay; progress(fraction of simulated time) is called at least every 1 %."""
    from planner.simulator import simulate

    sc = scenario if isinstance(scenario, Scenario) else Scenario.from_dict(scenario)
    sc.validate()
    specs = build_workload(sc)
    if sc.eta_noise or sc.bug_share or sc.kill_share:
        from planner.allocators.horizon_milp import perturb_workload

        try:
            specs = perturb_workload(specs, eta_noise=sc.eta_noise, bug_share=sc.bug_share,
                                     kill_share=sc.kill_share, seed=sc.seed)
        except ValueError as e:
            raise InputError(str(e), field="eta_noise" if "eta" in str(e) else "bug_share") from None
    pool = build_pool(sc, con)
    res = simulate(pool, specs, allocator=sc.allocator, opts=sc.alloc_options(), pj_max=sc.pj_max,
                   cadence=sc.cadence, step_min=sc.step_min, idle_during_solve=sc.idle_during_solve,
                   scaling_delay_s=sc.scaling_delay_s, progress=progress, scenario=sc.to_dict())
    s = res.summary
    head = {"allocator": sc.allocator, "workload": sc.workload, "pool": sc.pool,
            "pool_size": pool.nodes, "tfwd_s": sc.tfwd, "objective": sc.objective, "pj_max": sc.pj_max,
            "cadence": sc.cadence, "seed": sc.seed}
    res.summary = {**head, **s}
    return res
