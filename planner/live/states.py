"""Harvestable, not just idle: the state of a Slurm node as the idle split names it.

The vocabulary is the idle split's (issue 25: allocated, idle, down, planned_down, reserved,
drained; only `idle` is harvestable). It is defined here until issue 25's planner/idle/states.py
lands on main; then these names come from there (the strings are the same).

`classify(node, harvest_partitions)` reads one normalized node (planner.logs.slurm_json.NodeRow)
and returns (state, harvestable, free_cpus, free_gpus):

- down: DOWN, FAIL, NOT_RESPONDING (the `*` of sinfo), UNKNOWN, FUTURE, POWERED_DOWN / POWER_DOWN /
  POWERING_DOWN / power-save (the `~` of sinfo: a sleeping node is not there to harvest)
- planned_down: MAINTENANCE, PLANNED, REBOOT_REQUESTED / REBOOT_ISSUED, POWERING_UP
- drained: DRAIN (an idle node being or already drained)
- reserved: RESERVED (inside an active reservation)
- allocated: ALLOCATED, MIXED, COMPLETING
- idle: IDLE with none of the flags above, and in a partition the operator marks harvestable
  (all partitions when none are given); an idle node outside them is `idle` but not harvestable

A MIXED node is `allocated` for the node-state events (a node is harvestable whole or not at all),
and its free CPUs / GPUs are counted beside (`free_cpus`, `free_gpus`) for the per-partition
figures, where the log gives them.
"""

from __future__ import annotations

ALLOCATED = "allocated"
IDLE = "idle"
DOWN = "down"
PLANNED_DOWN = "planned_down"
RESERVED = "reserved"
DRAINED = "drained"
STATES = (ALLOCATED, IDLE, DOWN, PLANNED_DOWN, RESERVED, DRAINED)
HARVESTABLE = (IDLE,)

_DOWN = {"DOWN", "FAIL", "FAILING", "NOT_RESPONDING", "NO_RESPOND", "UNKNOWN", "FUTURE", "POWERED_DOWN",
         "POWER_DOWN", "POWERING_DOWN", "POWER_SAVE", "INVALID", "INVALID_REG", "CLOUD"}
_PLANNED = {"MAINTENANCE", "MAINT", "PLANNED", "REBOOT_REQUESTED", "REBOOT_ISSUED", "REBOOT", "POWERING_UP",
            "POWER_UP", "REBOOT_CANCELED"}
_DRAIN = {"DRAIN", "DRAINING", "DRAINED"}
_RESERVED = {"RESERVED", "RESV"}
_ALLOC = {"ALLOCATED", "ALLOC", "MIXED", "MIX", "COMPLETING", "COMP"}


def classify(words: set[str] | frozenset[str], partitions=(), harvest_partitions=None) -> tuple[str, bool]:
    """(state, harvestable) of a node from its upper-case base state and flags (one set)."""
    w = {str(x).upper() for x in words}
    if w & _DOWN:
        return DOWN, False
    if w & _PLANNED:
        return PLANNED_DOWN, False
    busy = bool(w & _ALLOC)
    if busy:  # a node still running jobs is allocated, draining or not
        return ALLOCATED, False
    if w & _DRAIN:
        return DRAINED, False
    if w & _RESERVED:
        return RESERVED, False
    if "IDLE" in w:
        if harvest_partitions is not None and not (set(partitions) & set(harvest_partitions)):
            return IDLE, False  # idle, but not offered to Trainers
        return IDLE, True
    return DOWN, False  # a state we do not know is not harvestable
