"""The scenario schema: every knob of one replay declared once (type, default, bounds, choices,
unit, help, URL key). Everything else is derived from FIELDS:

- planner.scenario.record.Scenario (the dataclass, its coercion and validation),
- the `planner simulate` options and their help (planner.commands.simulate),
- the app's URL parameters, their coercion and the widgets' bounds (appkit.state),
- the SQL column types of sweep results (column_types()).

    check("pj_max", "12") -> 12                # one field: coerced value, or InputError naming it
    coerce_all({"hours": "3"}) -> {"hours": 3.0}
    column_types() -> {"db": "VARCHAR", ..., "pow2": "BOOLEAN"}

Field names are the CLI option names with dashes as underscores. A default of None means "from
elsewhere" (the log's start, the workload's count, ...), as each help text says.

DEFAULT_TFWD_S, DEFAULT_RUP_S, DEFAULT_RDW_S: planner.scenario.defaults (re-exported).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from planner import allocators
from planner.allocators.base import OBJECTIVES, SPEED_RULES
from planner.errors import InputError
from planner.replay.hooks import ADMISSIONS, CADENCES
from planner.scenario.defaults import DEFAULT_RDW_S, DEFAULT_RUP_S, DEFAULT_TFWD_S
from planner.times import parse_time
from planner.workload.runtimes import RUNTIMES

# BFTrainer's T_fwd (the `tfwd` field below) and a Trainer's rescale costs Rup/Rdw (the `rup`/`rdw`
# fields override them per scenario): in the leaf planner.scenario.defaults, re-exported here,
# because the allocators and workloads read them too and the schema reads their registries.

POOLS = ("log", "fixed")
SUBSETS = ("first", "random")
MAX_TEXT_CHARS = 4096  # longest text value (a path, a log name)
_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


# The choices below come from the registries, imported when first asked for (at the top they
# would load every allocator and the replay whenever the schema is read).


def _allocator_names() -> list[str]:
    return allocators.names()


def _cadences() -> tuple[str, ...]:
    return tuple(CADENCES)


def _speed_rules() -> tuple[str, ...]:
    return SPEED_RULES


def _runtimes() -> tuple[str, ...]:
    return tuple(RUNTIMES)


def _admissions() -> tuple[str, ...]:
    return tuple(ADMISSIONS)


def _objectives() -> tuple[str, ...]:
    return OBJECTIVES


@dataclass(frozen=True)
class Field:
    """One scenario knob. lo/hi: inclusive bounds unless lo_open/hi_open; choices: the allowed
    values (a tuple, or a function giving them, for registries filled at import time)."""
    name: str
    kind: type  # str | int | float | bool
    default: object
    help: str
    unit: str = ""
    optional: bool = False  # None is allowed (the help says what it means)
    lo: float | None = None
    hi: float | None = None
    lo_open: bool = False
    hi_open: bool = False
    choices: tuple | Callable[[], Sequence[str]] | None = None
    url: bool = False  # an app URL parameter (key = name)
    time: bool = False  # a time: planner.times.parse_time checks it

    @property
    def option(self) -> str:
        return "--" + self.name.replace("_", "-")

    @property
    def annotation(self) -> str:
        base = self.kind.__name__
        return f"{base} | None" if self.optional else base

    def allowed(self) -> tuple | None:
        if self.choices is None:
            return None
        return tuple(self.choices() if callable(self.choices) else self.choices)

    def check(self, value):
        """The value coerced to the field's type and checked; InputError naming the field."""
        return check(self.name, value)

    def bounds_text(self) -> str:
        parts = []
        if self.lo is not None:
            parts.append(f"{'>' if self.lo_open else '>='} {_num(self.lo)}")
        if self.hi is not None:
            parts.append(f"{'<' if self.hi_open else '<='} {_num(self.hi)}")
        return " and ".join(parts)

    def cli_help(self) -> str:
        text = self.help
        if self.allowed() is not None and self.name != "allocator":
            text += f": {' | '.join(self.allowed())}"
        if self.kind in (int, float) and (self.lo is not None or self.hi is not None):
            text += f"; {self.bounds_text()}" + (f" {self.unit}" if self.unit else "")
        elif self.unit:
            text += f"; {self.unit}"
        if self.default is not None and self.kind is not bool:
            text += f" (default {_num(self.default) if self.kind is float else self.default})"
        return text.replace("%", "%%")  # argparse formats help with %


def _num(x) -> str:
    """A bound or default for help texts: 1000000 -> '1,000,000', 1e-06 -> '1e-06'."""
    x = float(x)
    return f"{int(x):,}" if x == int(x) and abs(x) >= 1000 else f"{x:g}"


def _f(name, kind, default, help, **kw) -> Field:
    return Field(name, kind, default, help, **kw)


FIELDS: tuple[Field, ...] = (
    _f("db", str, None, "DuckDB file (default: $PLANNER_DB, else the per-user planner.duckdb)", optional=True),
    _f("log", str, None, "log name in the database (default: the shipped Summit log, loaded if missing)",
       optional=True, url=True),
    _f("start", str, None, "window start: ISO time (naive = UTC) or epoch seconds (default: the log's "
       "start, after a job log's warm-up unless --include-outages)", optional=True, url=True, time=True),
    _f("hours", float, 24.0, "window length (a log window ends at the log's end)", unit="h", lo=0.05,
       hi=24 * 365 * 290, url=True),
    _f("pool", str, "log", "log: the log's idle nodes; fixed: P nodes always there", choices=POOLS, url=True),
    _f("pool_size", int, None, "log: harvest only K nodes (default: all); fixed: P (required)",
       unit="nodes", optional=True, lo=1, hi=1_000_000, url=True),
    _f("pool_subset", str, "first", "which K nodes of a log: first (BFTrainer's) or random (seeded)",
       choices=SUBSETS),
    _f("workload", str, "hpo", "hpo | diverse | philly | path of a Trainer CSV", url=True),
    _f("count", int, None, "number of Trainers (default: the workload's)", optional=True, lo=0,
       hi=1_000_000, url=True),
    _f("interarrival_s", float, None, "hpo: seconds between submissions; diverse and --arrival poisson: "
       "mean Poisson gap (default: the workload's)", unit="s", optional=True, lo=0, hi=366 * 86400, url=True),
    _f("arrival", str, "workload", "arrival process: workload (its own: hpo a fixed gap, diverse Poisson), "
       "start (all at the window start), "
       "poisson (mean gap --interarrival-s), log (the job log's own submissions in the window, in order; "
       "Trainers beyond them are not submitted)", choices=("workload", "start", "poisson", "log"), url=True),
    _f("models", str, None, "model mix: comma-separated model[:weight][:Nmin-Nmax], e.g. resnet18:3:4-32,shufflenet "
       "(ImageNet models of the scaling table; default: the workload's models and Nmin/Nmax; "
       "planner.workload.mix)", optional=True, url=True),
    _f("include_outages", bool, False, "log pool: count the log's outages (machine-wide, no job running for "
       "2 h or more) and warm-up as harvestable (default: excluded; planner.idle.split)", url=True),
    _f("allocator", str, "dp", "allocator name (planner allocate --list)", choices=_allocator_names, url=True),
    _f("tfwd", float, DEFAULT_TFWD_S, "T_fwd, the look-ahead of a decision (or 'adaptive': --tfwd-rule adaptive)",
       unit="s", lo=1, hi=7 * 86400,
       url=True),
    _f("tfwd_rule", str, "fixed", "fixed: T_fwd is --tfwd at every decision; adaptive: T_fwd follows the "
       "predicted time until the pool's next node is reclaimed (planner.predict.replay_hooks); node-survival "
       "(study only: recovers no headroom, docs/windows.md): each idle node's own predicted idle time",
       choices=("fixed", "adaptive", "node-survival")),
    _f("node_choice", str, "lowest-id", "which idle nodes Trainers take and give up (counts unchanged): "
       "lowest-id, or predicted (by a survival model of idle time, planner.predict.replay_hooks)",
       choices=("lowest-id", "predicted")),
    _f("objective", str, "throughput", "what the allocator maximizes", choices=_objectives, url=True),
    _f("pj_max", int, 10, "most Trainers admitted at once", lo=1, hi=10_000, url=True),
    _f("seed", int, 0, "random seed (workload, random pool subset)", lo=0, hi=2**31 - 1, url=True),
    _f("cadence", str, "events", "events: decide at every event (BFTrainer); interval: every --step-min "
       "minutes, for any allocator (IBM's 10-15 min, ModelArts' 5 min decision interval)", choices=_cadences,
       url=True),
    _f("time_limit", float, 10.0, "solver time per decision", unit="s", lo=0, lo_open=True, hi=86400),
    _f("mip_gap", float, 1e-6, "relative MIP gap of the MILP allocators", lo=0, hi=1, hi_open=True),
    _f("rup", float, None, "override every Trainer's scale-up cost (default: the workload's)", unit="s",
       optional=True, lo=0, hi=86400, url=True),
    _f("rdw", float, None, "override every Trainer's scale-down cost (default: the workload's)", unit="s",
       optional=True, lo=0, hi=86400, url=True),
    _f("horizon_steps", int, 5, "horizon-milp: look-ahead steps T", lo=1, hi=1000),
    _f("step_min", float, 5.0, "decision step f (interval cadence, horizon-milp)", unit="min", lo=1e-3,
       hi=7 * 1440, url=True),
    _f("speed_rule", str, "curve", "horizon-milp progress model", choices=_speed_rules),
    _f("early_finish", bool, False, "horizon-milp: also reward finishing a job earlier inside the first step "
       "(the share of the step left), not only progress at step ends"),
    _f("eta_noise", float, 0.0, "relative error of the ETAs the allocator sees", lo=0, hi=1, hi_open=True),
    _f("bug_share", float, 0.0, "share of Trainers that fail early (ModelArts study)", lo=0, hi=1),
    _f("kill_share", float, 0.0, "share of Trainers killed by their users", lo=0, hi=1),
    _f("scaling_delay_s", float, 0.0, "delay of a start or scale-up (it trains on its old nodes meanwhile); "
       "a scale-down has none", unit="s", lo=0, hi=86400),
    _f("idle_during_solve", bool, False, "nodes a decision moves stay idle for the decision's wall time"),
    _f("pow2", bool, False, "node counts restricted to 0 and powers of two"),
    _f("runtime", str, None, "elastic runtime preset: every Trainer's Rup/Rdw and migration cost from "
       "its measured source (rup/rdw still override; default: the workload's costs)", optional=True,
       choices=_runtimes, url=True),
    _f("allow_migration", bool, False, "a Trainer whose nodes leave the pool moves to free idle nodes at "
       "the runtime's migration cost instead of shrinking (default runtime elastic-horovod)", url=True),
    _f("admission", str, "fcfs", "fcfs: admit while fewer than pj_max run; min-fits: also only while every "
       "admitted Trainer's Nmin fits the pool (IBM, Elan)", choices=_admissions, url=True),
    _f("min_every_step", bool, False, "horizon-milp: ModelArts' constraint (15): every admitted job holds at "
       "least its minimum at every step of the horizon (FCFS while the minima fit)", url=True),
    _f("batch_choice", str, "elastic", "Trainers with batch-size choices: elastic (the allocator picks the batch "
       "with the node count, IBM's method); random (IBM's Random-BS: one total batch per job drawn once, "
       "seeded, uniformly between its min and max, then elastic in nodes only); max (Max-BS); min (Min-BS)",
       choices=("elastic", "random", "max", "min"), url=True),
    _f("drop", bool, False, "drop mode (IBM): a Trainer that cannot be admitted when it arrives is rejected and "
       "counted (summary: trainers_dropped, drop_ratio) instead of queued", url=True),
    _f("bound", str, "cost-free", "the limits reported beside the replay: cost-free (the same allocator "
       "with zero rescale and preemption costs), clairvoyant (also the time-expanded MILP bound over the "
       "window's whole future; small windows only), none. The bound charges the costs and the cost-free "
       "replay does not, so cost-free U can exceed the bound; U (either) can exceed 1: A_s is a reference, "
       "not a ceiling", choices=("cost-free", "clairvoyant", "none")),
    _f("learn_curves", bool, False, "allocators see speed curves learned from probes at 1, 2, 4 nodes and "
       "refitted from the rates Trainers reach (Optimus); the replay credits the true ones", url=True),
)
FIELD: dict[str, Field] = {f.name: f for f in FIELDS}
NAMES: tuple[str, ...] = tuple(FIELD)
DEFAULTS: dict[str, object] = {f.name: f.default for f in FIELDS}

# The window of BFTrainer's replays on the shipped Summit log (its paper's setting): the app's
# Planner page opens on it (every other knob at its default above).
BFTRAINER_REPLAY: dict[str, object] = {"log": "summit-2021", "start": "2021-02-10T20:21:15",
                                       "pool_size": 1024, "rup": DEFAULT_RUP_S, "rdw": DEFAULT_RDW_S}


def field(name: str) -> Field:
    try:
        return FIELD[name]
    except KeyError:
        raise InputError(f"unknown scenario field (known: {', '.join(NAMES)})", field=name) from None


def _kind_word(f: Field) -> str:
    return {int: "a whole number", float: "a number", bool: "true/false"}.get(f.kind, "text")


def _to_number(f: Field, value):
    if isinstance(value, bool):
        raise ValueError
    if isinstance(value, str):
        value = value.strip()
    x = float(value)
    if math.isnan(x):
        raise ValueError
    if f.kind is int:
        if not math.isfinite(x) or x != int(x):
            raise ValueError
        return int(x) if not isinstance(value, int) else int(value)
    return x


def _to_bool(value) -> bool:
    if isinstance(value, str):
        v = value.strip().lower()
        if v in _TRUE:
            return True
        if v in _FALSE:
            return False
        raise ValueError
    if isinstance(value, float) and math.isnan(value):
        raise ValueError
    return bool(value)


def _is_missing(value) -> bool:
    return (value is None or (isinstance(value, str) and not value.strip())
            or (isinstance(value, float) and math.isnan(value)))


def check(name: str, value):
    """One field's value, coerced to its type and checked against its bounds and choices.

    Text such as "12", "yes" or "" (None for an optional field) is accepted, as in URLs, CSV
    cells and CLI options. Raises InputError naming the field (one line) otherwise."""
    f = field(name)
    if _is_missing(value):
        if f.optional:
            return None
        raise InputError("a value is required", field=name)
    if isinstance(value, (list, tuple, dict, set)):
        raise InputError(f"must be {_kind_word(f)}, got a {type(value).__name__}", field=name)
    try:
        if f.kind in (int, float):
            value = _to_number(f, value)
        elif f.kind is bool:
            value = _to_bool(value)
    except (TypeError, ValueError, OverflowError):
        raise InputError(f"must be {_kind_word(f)}, got {short_repr(value)}", field=name) from None
    if f.kind is str:
        value = str(value)
        if len(value) > MAX_TEXT_CHARS:
            raise InputError(f"longer than {MAX_TEXT_CHARS} characters", field=name)
        allowed = f.allowed()
        if allowed is not None and value not in allowed:
            raise InputError(f"choose one of {', '.join(allowed)}, got {short_repr(value)}", field=name)
        if f.time:
            parse_time(value, field=name)
    elif f.kind in (int, float):
        _check_bounds(f, value)
    return value


def _check_bounds(f: Field, v) -> None:
    lo_bad = f.lo is not None and (v <= f.lo if f.lo_open else v < f.lo)
    hi_bad = f.hi is not None and (v >= f.hi if f.hi_open else v > f.hi)
    if lo_bad or hi_bad or (isinstance(v, float) and not math.isfinite(v)):
        unit = f" {f.unit}" if f.unit else ""
        raise InputError(f"must be {f.bounds_text()}{unit}, got {v:g}", field=f.name)


def short_repr(value) -> str:
    """repr(value), cut to 60 characters (for messages that quote user input)."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def coerce_all(d: Mapping | None) -> dict:
    """check() of every item; InputError for an unknown name (listing the known ones)."""
    return {str(k): check(str(k), v) for k, v in dict(d or {}).items()}


def column_types() -> dict[str, str]:
    """SQL type of each field (sweep result columns; the same for every grid)."""
    sql = {bool: "BOOLEAN", int: "BIGINT", float: "DOUBLE", str: "VARCHAR"}
    return {f.name: sql[f.kind] for f in FIELDS}


def url_fields() -> tuple[Field, ...]:
    """The fields an app link carries, in URL order."""
    return tuple(f for f in FIELDS if f.url)
