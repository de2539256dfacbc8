"""Rescale-cost presets of elastic runtimes: what growing, shrinking and moving a Trainer costs.

A preset gives Rup (scale out), Rdw (scale in) and the migration cost, in seconds of the
Trainer's pre-change throughput (the unit of BFTrainer's objective and of the simulator's cost
accounting). `--runtime NAME` on the CLI / the Planner's runtime selector sets every Trainer's
costs from one preset; `--rup` / `--rdw` still override.

Sources (the papers in ../shared/papers/, numbers as printed there):
- `elastic-horovod`: BFTrainer's HPO scenario on Summit (Elastic Horovod + PyTorch): scale-up
  18 s, scale-down 12 s (shared/data/README.md, the paper's Table 2 setting). Migration is not
  part of BFTrainer; modelled here as a scale-out onto the new nodes (Rup), the old ones being
  released at no extra cost.
- `stop-restart`: checkpoint, shut down, restart (Elan's S&R baseline). Elan measures its own
  scaling at ~1 s and "10~80x faster on scaling in or out than S&R" (Fig. 15), i.e. S&R scaling
  takes 10-80 s: the preset takes 28 s, the geometric mean of that range; Elan is "up to 4x
  faster on migration", so S&R migration ~4 s (it can overlap the new workers' start-up).
- `elan`: Elan's state replication and asynchronous coordination: "high performance (~1 s) on
  migration, scaling in and scaling out on all the scales and models" (Fig. 15).
- `ideal`: no cost at all (Elan's "ideal system" of Fig. 22): the upper bound of elasticity.
"""

from __future__ import annotations

from dataclasses import dataclass

from planner.errors import InputError
from planner.scenario.defaults import DEFAULT_RDW_S, DEFAULT_RUP_S


@dataclass(frozen=True)
class Runtime:
    name: str
    rup_s: float
    rdw_s: float
    migrate_s: float
    source: str


RUNTIMES: dict[str, Runtime] = {r.name: r for r in (
    Runtime("elastic-horovod", DEFAULT_RUP_S, DEFAULT_RDW_S, 18.0,
            "BFTrainer (HPDC'21) HPO scenario: Elastic Horovod on Summit, scale-up 18 s, scale-down 12 s"),
    Runtime("stop-restart", 28.0, 28.0, 4.0,
            "Elan (ICDCS'20) Fig. 15: stop-and-restart scaling 10-80x Elan's ~1 s (geometric mean 28 s), "
            "migration up to 4x Elan's"),
    Runtime("elan", 1.0, 1.0, 1.0, "Elan (ICDCS'20) Fig. 15: ~1 s migration, scale-in and scale-out"),
    Runtime("ideal", 0.0, 0.0, 0.0, "Elan (ICDCS'20) Fig. 22: the ideal system, no rescaling cost"),
)}

DEFAULT = "elastic-horovod"


def get(name: str) -> Runtime:
    try:
        return RUNTIMES[name]
    except KeyError:
        raise InputError(f"unknown runtime {name!r}; choose one of {', '.join(RUNTIMES)}",
                         field="runtime") from None


def costs(name: str | None, rup_s: float | None = None, rdw_s: float | None = None,
          migrate_s: float | None = None) -> tuple[float | None, float | None, float | None]:
    """(Rup, Rdw, migration) seconds: the preset's, each overridden where given; all None (keep
    every Trainer's own costs) when no runtime is named."""
    if name is None:
        return rup_s, rdw_s, migrate_s
    r = get(name)
    return (r.rup_s if rup_s is None else rup_s, r.rdw_s if rdw_s is None else rdw_s,
            r.migrate_s if migrate_s is None else migrate_s)
