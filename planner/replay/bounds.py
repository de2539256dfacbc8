"""The limits a replay is measured against: the cost-free replay and the clairvoyant bound.

    cost_free(pool, specs, allocator, opts, config, hooks, static_samples) -> {"samples", "utilization_efficiency", ...}
    (planner.scenario.record.attach_bounds adds summary["cost_free"] and ["clairvoyant"] to a replay)

- cost-free replay: the same allocator, pool, Trainers, T_fwd and hooks, with every rescale and
  preemption cost zero (Rup = Rdw = 0, no scaling delay, no idle-during-solve, migration free).
  The allocator also *sees* zero costs, so it decides as it would on a free runtime. Its U minus
  the replay's U is the headroom a cheaper runtime (or better foresight about which nodes stay)
  could recover. U uses the same A_s (costs do not enter A_s).
- clairvoyant bound: planner.replay.clairvoyant (a time-expanded MILP over the window's whole
  future; an upper bound on any online allocator, relaxations stated there).

The scenario knob `bound` (planner.scenario.schema) chooses: "cost-free" (default: every replay
also runs its cost-free twin), "clairvoyant" (both), "none" (neither: half the time).
"""

from __future__ import annotations

from dataclasses import replace

from planner.replay.config import ReplayConfig
from planner.replay.simulator import simulate
from planner.scenario.schema import FIELD

BOUNDS = FIELD["bound"].allowed()  # declared once, in the scenario schema


def free_specs(specs) -> list:
    """The Trainers with zero rescale and preemption costs (everything else unchanged)."""
    return [replace(s, rup_s=0.0, rdw_s=0.0) for s in specs]


def cost_free(pool, specs, allocator, opts, config, hooks, static_samples: float | None) -> dict:
    """Replay `pool` with the cost-free twins of `specs` (config: the costly replay's ReplayConfig,
    hooks: fresh ReplayHooks of the same rules). Returns samples, U and completions."""
    config = (config or ReplayConfig()).with_(
        scaling_delay_s=0.0, idle_during_solve=False, check=False,
        migrate_s=None if config is None or config.migrate_s is None else 0.0)
    opts = opts.with_(extra={**opts.extra, "scaling_delay_s": 0.0}) if opts is not None else None
    res = simulate(pool, free_specs(specs), allocator, opts, config, hooks=hooks)
    samples = float(res.summary["samples"])
    u = samples / static_samples if static_samples else None
    return {"samples": samples, "utilization_efficiency": u,
            "trainers_completed": int(res.summary["trainers_completed"])}


def headroom(summary: dict) -> dict | None:
    """What the replay reaches of its limits: U, cost-free U, their gap; clairvoyant U and the
    share of the bound reached (U / U_bound) when present."""
    u = summary.get("utilization_efficiency")
    cf = (summary.get("cost_free") or {}).get("utilization_efficiency")
    cv = (summary.get("clairvoyant") or {}).get("utilization_efficiency")
    if u is None:
        return None
    out = {"utilization_efficiency": u, "cost_free": cf,
           "cost_free_gap": (cf - u) if cf is not None else None}
    if cv is not None:
        out.update(clairvoyant=cv, bound_share=(u / cv) if cv > 0 else None)
    return out


def limit_lines(summaries: dict, clairvoyant: dict | None = None) -> list[str]:
    """One sentence per run (summaries: {allocator: replay summary}) on its limits: its U, its
    cost-free twin's and the headroom; with a clairvoyant block (a replay's, or `clairvoyant`
    computed for the window afterwards), the share of the bound it reaches and how the bound was
    proven."""
    lines = []
    for label, s in summaries.items():
        cv = s.get("clairvoyant") or clairvoyant
        h = headroom({**s, "clairvoyant": cv} if cv else s)
        if h is None:  # no A_s (an empty pool): samples instead of U
            cf = (s.get("cost_free") or {}).get("samples")
            if s.get("samples") is not None:
                lines.append(f"{label}: {s['samples']:,.0f} samples with the rescale and preemption costs"
                             + (f"; {cf:,.0f} when they cost nothing" if cf is not None else "")
                             + " (no U: the window's static reference A_s is 0).")
            continue
        text = f"{label}: U {h['utilization_efficiency']:.3f} with the rescale and preemption costs"
        if h["cost_free"] is not None:
            text += (f"; {h['cost_free']:.3f} when they cost nothing (headroom {h['cost_free_gap']:+.3f}, what a "
                     "cheaper runtime or better foresight could recover)")
        if h.get("bound_share") is not None:
            text += (f". {label} reaches {100 * h['bound_share']:.0f} % of the clairvoyant bound "
                     f"(U {h['clairvoyant']:.3f})")
        so = s.get("survival_option") or {}
        if so.get("plain_utilization_efficiency") is not None:
            plain = {"tfwd_rule": "fixed", "node_choice": "lowest-id"}
            opts = " and ".join(f"{k} {v} (not {plain[k]})" for k, v in so["options"].items() if v != plain.get(k))
            share = so.get("headroom_share_recovered")
            text += (f". With {opts}: without them U {so['plain_utilization_efficiency']:.3f}, cost-free "
                     f"{so['plain_cost_free_utilization_efficiency']:.3f}; the option recovers "
                     + (f"{100 * share:+.1f} % of that headroom" if share is not None else "nothing measurable (no "
                        "headroom)"))
        lines.append(text + ".")
    return lines


def bound_note(cv: dict) -> str:
    """How the clairvoyant bound was obtained, in one line."""
    gap = cv.get("mip_gap")
    how = (f"proven optimal by HiGHS in {cv['solve_s']:.1f} s" if cv.get("status") == "optimal" else
           f"HiGHS stopped at its time limit ({cv['solve_s']:.0f} s): the bound is its dual bound, "
           + (f"{100 * gap:.1f} % above its best plan" if gap is not None else "no plan found yet")
           + " (a valid upper bound, possibly loose)")
    return (f"Clairvoyant bound over {cv.get('intervals')} intervals and {cv.get('trainers')} Trainers, {how}. "
            f"Relaxed: {cv.get('relaxation', '')}.")
