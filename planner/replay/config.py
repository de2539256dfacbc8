"""The configuration of one replay: one frozen record (ReplayConfig) for the rules' settings and
one (ReplayHooks) for the replaceable steps, so simulate() takes a handful of arguments.

    cfg = ReplayConfig(pj_max=4, cadence="interval", step_min=1.0)
    simulate(pool, specs, "dp", opts, cfg, hooks=ReplayHooks(node_mapper=CountsToMap()))
    ReplayConfig.from_scenario(sc)         # the replay settings of a planner.scenario.record.Scenario
    ReplayConfig().with_(pj_max=4)         # a copy with some fields changed

Every default is the scenario schema's (planner.scenario.schema.DEFAULTS): a field here has the
name of the schema field it comes from. `pj_max` and `step_min` are the replay's, and the replay
hands them to the allocator (AllocOptions.pj_max / step_min): one channel, not two.

simulate() also accepts these fields and the hooks as keywords (`simulate(..., pj_max=4,
node_mapper=m)`): they are folded into the two records (`split_options`), so older callers keep
working; an unknown keyword is a TypeError naming it.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

from planner.replay.hooks import ADMISSIONS, CADENCES, Admission, Cadence, NodeMapper, TfwdRule
from planner.scenario.schema import DEFAULTS
from planner.workload import runtimes

DECIDE_ON = ("events", "pool")  # which events are events (ReplayConfig.decide_on)


@dataclass(frozen=True)
class ReplayConfig:
    """The settings of one replay (rules: planner.replay.simulator's docstring).

    pj_max            most Trainers admitted at once (also the allocator's Pj_max)
    cadence           a planner.replay.hooks.CADENCES name: "events" or "interval"
    step_min          the interval cadence's tick (minutes; also horizon-milp's step f)
    admission         a planner.replay.hooks.ADMISSIONS name: "fcfs" or "min-fits"
    idle_during_solve nodes a decision moves stay idle for the decision's wall time
    scaling_delay_s   a start on k nodes also costs this many seconds of O(k), a scale-up from c to k
                      nodes this many of O(k) - O(c) (it trains on its c nodes meanwhile), a scale-down
                      nothing (ModelArts, Sec. 5.5)
    migrate_s         None: never migrate; else a Trainer whose lost nodes can all be replaced
                      moves onto free idle nodes at migrate_s seconds of O(c)
    drop              IBM's drop mode: Trainers not admitted on arrival are rejected
    decide_on         "events" (default): every event is one (pool change, arrival, completion, tick);
                      "pool": only the pool's events (and the window's start) are, as in the authors'
                      published BFTrainer replayer: a Trainer that reaches its work keeps its nodes
                      (producing nothing more) until the next pool event, and arrivals are admitted
                      only then (cadence "events" only)
    check             verify every decision's node map (a violation raises RuntimeError)
    """

    pj_max: int = DEFAULTS["pj_max"]
    cadence: str = DEFAULTS["cadence"]
    step_min: float = DEFAULTS["step_min"]
    admission: str = DEFAULTS["admission"]
    idle_during_solve: bool = DEFAULTS["idle_during_solve"]
    scaling_delay_s: float = DEFAULTS["scaling_delay_s"]
    migrate_s: float | None = None
    drop: bool = DEFAULTS["drop"]
    decide_on: str = "events"
    check: bool = True

    def __post_init__(self):
        if self.cadence not in CADENCES:
            raise ValueError(f"unknown cadence {self.cadence!r}; choose one of {', '.join(CADENCES)}")
        if self.admission not in ADMISSIONS:
            raise ValueError(f"unknown admission {self.admission!r}; choose one of {', '.join(ADMISSIONS)}")
        if self.decide_on not in DECIDE_ON:
            raise ValueError(f"unknown decide_on {self.decide_on!r}; choose one of {', '.join(DECIDE_ON)}")
        if self.decide_on == "pool" and self.cadence != "events":
            raise ValueError("decide_on 'pool' needs cadence 'events'")
        if self.pj_max < 1:
            raise ValueError("pj_max must be >= 1")
        if self.migrate_s is not None:
            object.__setattr__(self, "migrate_s", float(self.migrate_s))

    def with_(self, **kw) -> "ReplayConfig":
        return replace(self, **kw)

    @classmethod
    def from_scenario(cls, sc) -> "ReplayConfig":
        """The replay settings of a Scenario (migration: the runtime's cost when allowed)."""
        migrate_s = runtimes.get(sc.runtime or runtimes.DEFAULT).migrate_s if sc.allow_migration else None
        return cls(pj_max=int(sc.pj_max), cadence=sc.cadence, step_min=float(sc.step_min),
                   admission=sc.admission, idle_during_solve=bool(sc.idle_during_solve),
                   scaling_delay_s=float(sc.scaling_delay_s), migrate_s=migrate_s, drop=bool(sc.drop))


@dataclass(frozen=True)
class ReplayHooks:
    """The replaceable steps of a replay (planner.replay.hooks); None: the rule the config names.

    node_mapper  counts -> node ids (default LowestId)
    tfwd_rule    T_fwd per decision (default ConstantTfwd(opts.tfwd_s))
    admission    which queued Trainers are admitted (default: ADMISSIONS[config.admission])
    cadence      which events are decisions (default: CADENCES[config.cadence])
    learner      a planner.workload.learning.CurveLearner: the allocator sees learned curves
    """

    node_mapper: NodeMapper | None = None
    tfwd_rule: TfwdRule | None = None
    admission: Admission | None = None
    cadence: Cadence | None = None
    learner: object | None = None

    def with_(self, **kw) -> "ReplayHooks":
        return replace(self, **kw)


CONFIG_FIELDS = tuple(f.name for f in fields(ReplayConfig))
HOOK_FIELDS = tuple(f.name for f in fields(ReplayHooks))


def split_options(config: ReplayConfig | None, hooks: ReplayHooks | None, options: dict
                  ) -> tuple[ReplayConfig, ReplayHooks]:
    """Fold simulate()'s keywords into the two records (a keyword wins over the record's field).

    `admission` / `cadence` given as a name set the config; given as an object, the hook."""
    config, hooks = config or ReplayConfig(), hooks or ReplayHooks()
    cfg, hk = {}, {}
    for k, v in options.items():
        if k in ("admission", "cadence") and not isinstance(v, str):
            hk[k] = v
        elif k in CONFIG_FIELDS:
            cfg[k] = v
        elif k in HOOK_FIELDS:
            hk[k] = v
        else:
            raise TypeError(f"simulate() got an unexpected keyword argument {k!r} "
                            f"(replay settings: {', '.join(CONFIG_FIELDS + HOOK_FIELDS)})")
    return (config.with_(**cfg) if cfg else config), (hooks.with_(**hk) if hk else hooks)
