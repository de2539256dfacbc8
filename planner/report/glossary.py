"""One definition and unit per headline metric: the tooltips (st.metric help=) of the Planner,
Compare and Idle pages, and which direction is better (the colour of a delta against the baseline).

Pure (no Streamlit). Keys are the summary keys of `planner simulate --json` (planner.replay.metrics),
`planner fragments --json` (planner.idle.fragments) and `planner profile --json` (planner.idle.views);
definitions follow those modules' docstrings (the one place each concept is defined).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Term:
    label: str
    unit: str
    definition: str
    better: str | None = None  # "higher" | "lower" | None (neither: a delta is not good or bad)
    scale: float = 1.0  # factor from the summary's value (seconds, samples) to `unit`
    fmt: str = ",.0f"  # how a value in `unit` is printed

    def show(self, value) -> str:
        """`value` (in the summary's unit) scaled to `unit` and formatted; "-" when missing."""
        if not isinstance(value, (int, float)) or not math.isfinite(value):
            return "-"
        return f"{value * self.scale:{self.fmt}}"

    def help(self) -> str:
        """The tooltip: definition, then unit (and which way is better when one is)."""
        way = " Higher is better." if self.better == "higher" else (
            " Lower is better." if self.better == "lower" else "")
        return f"{self.definition} Unit: {self.unit}.{way}"


GLOSSARY: dict[str, Term] = {
    # ---- a replay (Planner, Compare)
    "utilization_efficiency": Term(
        "U (A_e/A_s)", "ratio",
        "Utilization efficiency U = A_e / A_s. A_e: samples the Trainers trained in this replay on the "
        "harvested pool, net of rescaling and preemption costs. A_s: samples the same Trainers would train "
        "on a static pool of n-bar nodes (the time-averaged pool size) over the same window, sharing it "
        "equally with no costs. A_s is a reference, not a ceiling: U can exceed 1 when the allocator puts "
        "nodes where the throughput curves gain most (e.g. equal shares fall below a Trainer's Nmin or "
        "above its Nmax). Meaningful only when demand saturates the pool: read it beside the allocated share.",
        "higher", fmt=".3f"),
    "trainers_arrived": Term("Trainers arrived", "count",
                             "Trainers submitted within the window.", None),
    "trainers_started": Term("Trainers started", "count",
                             "Trainers that got nodes at least once within the window.", "higher"),
    "trainers_waiting_at_end": Term("Trainers still waiting", "count",
                                    "Trainers that arrived but never got nodes before the window's end.", "lower"),
    "trainers_dropped": Term("Trainers dropped", "count",
                             "Drop mode (IBM): Trainers rejected because they could not be admitted when they "
                             "arrived.", "lower"),
    "drop_ratio": Term("drop ratio", "ratio",
                       "Drop mode (IBM's job drop ratio): Trainers dropped / Trainers arrived.", "lower", fmt=".3f"),
    "trainers_completed": Term("Trainers completed", "count",
                               "Trainers that finished their work within the window.", "higher"),
    "mean_queue_s": Term(
        "mean queueing time", "min",
        "Mean time from a Trainer's submission to its first nodes, over the Trainers that started. "
        "Trainers still waiting at the window's end are not in it: see the queueing time incl. waiting.",
        "lower", scale=1 / 60, fmt=",.1f"),
    "mean_queue_incl_waiting_s": Term(
        "queueing, lower bound", "min",
        "Mean queueing time including the Trainers still waiting: over all Trainers that arrived, started "
        "ones count submit to first nodes, those still waiting at the window's end count their wait so far "
        "(so the figure is a lower bound: they wait longer).", "lower", scale=1 / 60, fmt=",.1f"),
    "allocated_share": Term(
        "allocated share", "ratio",
        "Allocated / available node-hours: node-hours held by Trainers divided by the pool's node-hours "
        "(the resource integral).", "higher", fmt=".3f"),
    "mean_jct_s": Term("mean job completion time", "h",
                       "Mean time from submission to completion, over the completed Trainers.", "lower",
                       scale=1 / 3600, fmt=",.2f"),
    "mean_run_s": Term("mean runtime", "h",
                       "Mean time from first nodes to completion, over the completed Trainers.", "lower",
                       scale=1 / 3600, fmt=",.2f"),
    "samples": Term("samples trained", "billion samples", "Samples trained by all Trainers (A_e).", "higher",
                    scale=1e-9, fmt=",.3f"),
    "resource_node_hours": Term("idle pool (resource integral)", "node-h",
                                "Integral of the pool size N(t) over the window.", None),
    "allocated_node_hours": Term("allocated", "node-h", "Node-hours held by Trainers.", "higher"),
    "rescale_cost_incurred_samples": Term(
        "rescaling cost", "million samples",
        "Samples lost to rescaling: Rup/Rdw seconds of the Trainer's throughput before each change.", "lower",
        scale=1e-6, fmt=",.2f"),
    "preemption_cost_incurred_samples": Term(
        "preemption cost", "million samples",
        "Samples lost when the scheduler took nodes back from a running Trainer.", "lower", scale=1e-6, fmt=",.2f"),
    "rescale_cost_per_event_samples": Term("rescaling cost per event", "thousand samples",
                                           "Rescaling cost divided by the number of events.", "lower",
                                           scale=1e-3, fmt=",.2f"),
    "preemptions": Term("preemptions", "count", "Nodes taken back from a running Trainer.", "lower"),
    "preemption_within_tfwd_share": Term(
        "preemptions within T_fwd of a decision", "share",
        "Share of decisions followed by a preemption within T_fwd seconds.", "lower", fmt=".3f"),
    "decisions": Term("allocator decisions", "count", "Times the allocator was called (one per event).", None),
    "solve_s.mean": Term("mean time per decision", "ms",
                         "Wall time of one allocator call (model build + solve + node map), mean.", "lower",
                         scale=1e3, fmt=",.2f"),
    "solve_s.max": Term("max time per decision", "ms", "The slowest allocator call.", "lower", scale=1e3, fmt=",.1f"),
    "fallback_decisions": Term("fallback decisions", "count",
                               "Decisions where the solver found nothing in time and the old map was kept.",
                               "lower"),
    "events": Term("events", "count", "Times the pool or the Trainer set changed.", None),
    "wall_s": Term("replay wall time", "s", "Wall time of the whole replay (a Compare cell's) on this machine.",
                   "lower", fmt=",.2f"),
    # ---- idle capacity (Idle page, planner fragments / profile)
    "idle_node_hours": Term("idle node-hours", "node-h",
                            "Integral of N(t), the number of idle nodes, over the window.", None),
    "eq_nodes": Term("equivalent nodes", "nodes",
                     "Idle node-hours divided by the window's hours: the time-averaged number of idle nodes.",
                     None),
    "idle_ratio": Term("idle ratio", "%", "Equivalent nodes divided by the pool's nodes.", None, scale=100.0,
                       fmt=".1f"),
    "events_per_h": Term("events per hour", "1/h",
                         "Times per hour the idle set changes (a node joins or leaves it).", None),
    "inc_per_h": Term("join events per hour", "1/h", "Times per hour a node joins the idle set.", None, fmt=",.2f"),
    "dec_per_h": Term("leave events per hour", "1/h", "Times per hour a node leaves the idle set.", None,
                      fmt=",.2f"),
    "tfwd_suggestion_s": Term(
        "T_fwd suggestion", "s",
        "Median time from an event to the next leave event: how long an allocation typically holds "
        "before the scheduler takes a node back.", None),
    "idle_while_waiting_node_hours": Term(
        "idle while jobs waited", "node-h",
        "Idle node-hours at moments when at least one job was waiting (submitted, not started): "
        "nodes held for larger jobs, or a scheduler delay. What backfill and harvesting compete for.", None),
    "idle_no_wait_node_hours": Term("idle with no job waiting", "node-h",
                                    "Idle node-hours at moments when no job was waiting: nothing to run.", None),
    # ---- the limits of a replay (planner.replay.bounds, planner.replay.clairvoyant)
    "cost_free_utilization_efficiency": Term(
        "U, cost-free replay", "ratio",
        "U of the same allocator, pool and Trainers when rescaling and preemption cost nothing: the "
        "headroom a cheaper runtime or better foresight could recover. Not bounded by the clairvoyant "
        "bound (which charges the real costs) nor by 1 (A_s is a reference, not a ceiling).", "higher", fmt=".3f"),
    "clairvoyant_utilization_efficiency": Term(
        "U, clairvoyant bound", "ratio",
        "U of the best plan any allocator could make in this window knowing its whole future, with the "
        "real rescale and preemption costs (an upper bound; relaxations in planner/replay/clairvoyant.py).",
        "higher", fmt=".3f"),
    "bound_share": Term("share of the clairvoyant bound", "ratio",
                        "U / U of the clairvoyant bound: how close the allocator came to the best possible "
                        "plan with costs.", "higher", fmt=".3f"),
}

# the one-line reading of cost-free U beside U and the bound, wherever they are shown together
LIMITS_NOTE = ("Why a limit can pass 1.0 or the bound: U divides by A_s (an equal share of a static pool of the "
               "window's average size, a reference, not a ceiling), so any U can exceed 1; the clairvoyant bound "
               "charges the real rescale and preemption costs while the cost-free replay pays none, so cost-free "
               "U can exceed the bound: the bound limits allocators on this runtime, the cost-free U what a "
               "free runtime would reach.")


# other spellings of the same metric (the sweep's flat result columns)
ALIASES = {"solve_s_mean": "solve_s.mean", "solve_s_max": "solve_s.max"}


def term(key: str) -> Term | None:
    return GLOSSARY.get(ALIASES.get(key, key))


def help_for(key: str) -> str | None:
    t = term(key)
    return t.help() if t else None


def definition(key: str) -> str:
    """The definition alone (for a caption that already names label and unit)."""
    t = term(key)
    return t.definition if t else ""


def delta(key: str, value, base, fmt: str, base_label: str) -> tuple[str | None, str, str]:
    """(delta text, delta_color, delta_arrow) of value against the baseline for st.metric.

    A change that prints as zero in `fmt` reads "no change vs <baseline>" (grey, no arrow), never
    "-0.000"; otherwise the signed change, green when better and red when worse for this metric
    (grey when neither way is better)."""
    if value is None or base is None or not all(math.isfinite(float(v)) for v in (value, base)):
        return None, "off", "off"
    d = float(value) - float(base)
    text = f"{d:+{fmt}}"
    if float(f"{d:{fmt}}".replace(",", "")) == 0.0:
        return f"no change vs {base_label}", "off", "off"
    t = term(key)
    better = t.better if t else None
    color = {"higher": "normal", "lower": "inverse"}.get(better, "off")
    return f"{text} vs {base_label}", color, "auto"


# A GPU trace counts GPUs, not nodes (planner.logs.UNITS): every label about its capacity reads in
# GPUs. One rule for every page, chart and table: node-hours -> GPU-hours, nodes -> GPUs, node -> GPU.
_UNIT_WORDS = (("node-hours", "GPU-hours"), ("Node-hours", "GPU-hours"), ("node-time", "GPU-time"), ("nodes", "GPUs"),
               ("Nodes", "GPUs"), ("node", "GPU"), ("Node", "GPU"))
# not inside a command-line option (--node-choice) or an identifier (node_identity)
_UNIT_RE = re.compile(r"(?<![\w])(?<!--)(" + "|".join(re.escape(a) for a, _ in _UNIT_WORDS) + r")(?![\w])")


def in_units(text, unit: str):
    """`text` worded in a log's unit ("node" or "GPU"); other values (None, numbers) pass unchanged.

    Whole words only: "node identity" becomes "GPU identity", "nodes/s" "GPUs/s", but "Nmin" or a
    node's name inside a longer word is left alone, and so is code: a `...` span or a --option
    (`--node-choice predicted` is the CLI's flag on any log).
    """
    if unit != "GPU" or not isinstance(text, str):
        return text
    words = dict(_UNIT_WORDS)
    parts = text.split("`")  # odd parts are inside backticks: code, left as written
    return "`".join(p if i % 2 else _UNIT_RE.sub(lambda m: words[m.group(1)], p) for i, p in enumerate(parts))
