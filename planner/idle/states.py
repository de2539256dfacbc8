"""The node-state vocabulary of the idle split (sreport's categories) and THE harvestable rule,
shared by every log kind that carries states (node-state logs, the live Slurm reader, Slurm JSON;
issues 25 and 26). A leaf module: it imports nothing of the planner, so the log readers can use it.

The six states, in this order (their index is the code a node-state log is stored with):

- allocated     running a job (Slurm ALLOCATED, MIXED, COMPLETING, DRAINING; a binary log's "busy")
- idle          idle and usable: the harvestable capacity
- down          unavailable, not planned (Slurm DOWN, FAIL, NOT_RESPONDING, UNKNOWN, failed boot,
                POWERED_DOWN / POWERING_DOWN / power-save: a sleeping node is not there to harvest)
- planned_down  planned down / maintenance (Slurm MAINTENANCE, a maintenance reservation, PLANNED,
                REBOOT_REQUESTED / REBOOT_ISSUED, POWERING_UP)
- reserved      held by a reservation, not running a job (Slurm RESERVED / RESV)
- drained       taken out of service by an administrator (Slurm DRAINED, DRAIN on an idle node)

The rule (`classify`): a node's words (base state and flags, e.g. {'IDLE', 'DRAIN'}) give its
state by this precedence: down; allocated (a node still running jobs is allocated, draining or
not, as sreport counts it); planned down; drained; reserved; idle. A node is HARVESTABLE only when
its state is idle AND it is in a partition the operator offers (all partitions when none are
named). A word the rule does not know is ignored beside a known one; a node with no known word is
down (never harvestable).

Texts (`words_of` / `state_of`): a node-state log's state column and `sinfo -h -o %t/%T` use one
word per row ('idle', 'IDLE+DRAIN', 'mix', 'drng', 'maint', 0/1, ...) and sinfo's suffix flags,
which are part of the rule: '*' not responding, '~' powered down (power save), '%' powering down,
'!' power down pending, '#' powering up, '$' maintenance reservation, '@' reboot requested,
'^' reboot issued, '-' planned by the backfill scheduler. So 'idle*' and 'idle~' are down, not idle.

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
PRECEDENCE = (DOWN, ALLOCATED, PLANNED_DOWN, DRAINED, RESERVED, IDLE)

# Display labels (one place; the pages and the glossary use these)
LABEL = {
    ALLOCATED: "allocated",
    IDLE: "idle, harvestable",
    DOWN: "down",
    PLANNED_DOWN: "planned down / maintenance",
    RESERVED: "reserved",
    DRAINED: "drained",
}

# Slurm's base states and flags (upper case, as `sinfo --json`, slurmrestd and scontrol name them)
SLURM_WORDS = {
    DOWN: ("DOWN", "FAIL", "FAILING", "NOT_RESPONDING", "NO_RESPOND", "UNKNOWN", "FUTURE", "BOOT_FAIL",
           "POWERED_DOWN", "POWER_DOWN", "POWERING_DOWN", "POWER_SAVE", "POWER_DOWN_PENDING", "INVALID",
           "INVALID_REG"),
    ALLOCATED: ("ALLOCATED", "ALLOC", "MIXED", "MIX", "COMPLETING", "COMP", "DRAINING"),
    PLANNED_DOWN: ("MAINTENANCE", "MAINT", "PLANNED", "REBOOT_REQUESTED", "REBOOT_ISSUED", "REBOOT",
                   "POWERING_UP", "POWER_UP"),
    DRAINED: ("DRAIN", "DRAINED"),
    RESERVED: ("RESERVED", "RESV"),
    IDLE: ("IDLE",),
}
_STATE_OF_WORD = {w: s for s, ws in SLURM_WORDS.items() for w in ws}

# sinfo's suffix flags (man sinfo, NODE STATE CODES) as the Slurm flag each stands for
SUFFIX = {"*": "NOT_RESPONDING", "~": "POWERED_DOWN", "%": "POWERING_DOWN", "!": "POWER_DOWN_PENDING",
          "#": "POWERING_UP", "$": "MAINTENANCE", "@": "REBOOT_REQUESTED", "^": "REBOOT_ISSUED", "-": "PLANNED"}

# Words a node-state log (or `sinfo -h -o %t / %T`, any case) may use for each state, beside
# Slurm's own names above; each stands for the first Slurm word of its state.
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
_ALIAS = {w: SLURM_WORDS[s][0] for s, words in ALIASES.items() for w in words}
_ALIAS.update({"draining": "DRAINING", "drng": "DRAINING", "not_responding": "NOT_RESPONDING",
               "powered_down": "POWERED_DOWN", "power_down": "POWER_DOWN", "powering_down": "POWERING_DOWN",
               "powering_up": "POWERING_UP", "reboot_requested": "REBOOT_REQUESTED",
               "reboot_issued": "REBOOT_ISSUED", "drain": "DRAIN"})


def classify(words, partitions=(), harvest_partitions=None) -> tuple[str, bool]:
    """(state, harvestable) of a node from its Slurm words (base state and flags, any case) and
    its partitions; harvest_partitions None = every partition is offered."""
    found = {_STATE_OF_WORD.get(str(x).upper()) for x in words}
    state = next((s for s in PRECEDENCE if s in found), DOWN)  # nothing known: never harvestable
    if state != IDLE:
        return state, False
    if harvest_partitions is not None and not (set(partitions) & set(harvest_partitions)):
        return IDLE, False  # idle, but not in a partition offered to Trainers
    return IDLE, True


def words_of(text) -> frozenset | None:
    """The Slurm words a state text means ('IDLE+DRAIN', 'idle*', 'mix-', 'maint', '1' ...), None
    when a part of it is unknown."""
    t = str(text).strip()
    if t.lower() in _ALIAS:
        return frozenset({_ALIAS[t.lower()]})
    out = set()
    parts = [p.strip() for p in t.replace("|", "+").split("+") if p.strip()]
    for p in parts:
        while p and p[-1] in SUFFIX:
            out.add(SUFFIX[p[-1]])
            p = p[:-1].strip()
        if p.lower() in _ALIAS:
            out.add(_ALIAS[p.lower()])
        elif p.upper() in _STATE_OF_WORD:
            out.add(p.upper())
        else:
            return None
    return frozenset(out) or None


def state_of(text) -> str | None:
    """The state a text means (by `classify`, partitions aside), None when unknown."""
    w = words_of(text)
    return None if w is None else classify(w)[0]


def harvestable(text, partitions=(), harvest_partitions=None) -> bool | None:
    """Whether a node in this state text, in these partitions, is harvestable (None: unknown text)."""
    w = words_of(text)
    return None if w is None else classify(w, partitions, harvest_partitions)[1]
