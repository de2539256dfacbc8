"""The node-state vocabulary of the idle split (sreport's categories), shared by every log kind and
by the live-Slurm reader (issue 26). A leaf module: it imports nothing of the planner, so the log
readers can use it.

The six states, in this order (their index is the code a node-state log is stored with):

- allocated     running a job (Slurm ALLOCATED, MIXED, COMPLETING; a binary node log's "busy")
- idle          idle and usable: the harvestable capacity
- down          unavailable, not planned (Slurm DOWN, FAIL, NOT_RESPONDING, failed boot)
- planned_down  planned down / maintenance (Slurm MAINT, PLANNED, a maintenance reservation)
- reserved      held by a reservation, not running a job (Slurm RESERVED / RESV)
- drained       taken out of service by an administrator (Slurm DRAINED, DRAIN on an idle node)

Only `idle` is harvestable. sreport's cluster utilization reports Allocated, Down, Planned Down,
Reserved and Idle; drained is kept apart because an operator drains nodes on purpose (Slurm
counts a drained idle node as Down in sreport).
"""

from __future__ import annotations

ALLOCATED = "allocated"
IDLE = "idle"
DOWN = "down"
PLANNED_DOWN = "planned_down"
RESERVED = "reserved"
DRAINED = "drained"

STATES = (ALLOCATED, IDLE, DOWN, PLANNED_DOWN, RESERVED, DRAINED)  # index = stored code
CODE = {s: i for i, s in enumerate(STATES)}
HARVESTABLE = (IDLE,)
UNAVAILABLE = (DOWN, PLANNED_DOWN, RESERVED, DRAINED)

# Display labels (one place; the pages and the glossary use these)
LABEL = {
    ALLOCATED: "allocated",
    IDLE: "idle, harvestable",
    DOWN: "down",
    PLANNED_DOWN: "planned down / maintenance",
    RESERVED: "reserved",
    DRAINED: "drained",
}

# Words a node-state log (or `sinfo -h -o %T`, lower-cased, flags like '*' '~' '#' '$' '@' '^'
# '-' '!' '%' removed) may use for each state.
ALIASES = {
    ALLOCATED: ("allocated", "alloc", "mixed", "mix", "busy", "completing", "comp", "draining", "drng",
                "running", "0"),
    IDLE: ("idle", "1", "free", "harvestable"),
    DOWN: ("down", "fail", "failing", "failg", "not_responding", "no_respond", "unknown", "unk",
           "boot_fail", "power_down", "powered_down", "powering_down", "future", "futr", "inval", "invalid"),
    PLANNED_DOWN: ("planned_down", "planned", "plnd", "maint", "maintenance", "reboot", "reboot_issued",
                   "reboot_requested", "boot", "powering_up", "planned down"),
    RESERVED: ("reserved", "resv", "reservation"),
    DRAINED: ("drained", "drain", "drng_idle"),
}
_WORD = {w: s for s, words in ALIASES.items() for w in words}
_FLAGS = "*~#$@^-!%+"


def state_of(text) -> str | None:
    """The state a word means ('IDLE', 'drain*', 'maint', '1' ...), None when unknown. Slurm's
    compound states ('IDLE+DRAIN', 'MIXED+MAINT') take, in this order: down; allocated (a
    node still running jobs is allocated, draining or not); planned down; drained; reserved; idle."""
    w = str(text).strip().lower().rstrip(_FLAGS).strip()
    if w in _WORD:
        return _WORD[w]
    parts = [p.strip().rstrip(_FLAGS) for p in w.replace("|", "+").split("+") if p.strip()]
    found = [_WORD.get(p) for p in parts]
    if not parts or any(f is None for f in found):
        return None
    for s in (DOWN, ALLOCATED, PLANNED_DOWN, DRAINED, RESERVED, IDLE):
        if s in found:
            return s
    return None
