"""A window of a log: the one value that says which log, which span of it and which pool of nodes.

Every figure of planner.idle (fragments, the idle split, the operator views) and the pool a
replay consumes is for one Window:

    Window(log="summit-2021", start="2021-02-10T20:21:15Z", hours=24, pool_size=1024)

- log: the log's name in the store (None: the shipped default, planner.store.catalog);
- start: the window start in any form planner.times.parse_time accepts (None: the log's start);
- hours: the window's length (None: to the log's end; a longer window is clipped to it);
- pool_size: K harvested nodes (None: the whole machine, M nodes; 1..M, checked against the log);
- subset: which K nodes, "first" (the log's node order, BFTrainer's subset) or "random";
- seed: the random subset's seed.

The value checks itself when made (an InputError naming the field, one line); what depends on
the log (start inside it, K <= M) is checked when a function reads the log (planner.idle.fragments).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, replace

from planner.errors import InputError
from planner.times import parse_time

SUBSETS = ("first", "random")


@dataclass(frozen=True)
class Window:
    log: str | None = None
    start: object = None  # str | float | datetime | None: kept as given (links and JSON echo it)
    hours: float | None = None
    pool_size: int | None = None
    subset: str = "first"
    seed: int = 0

    def __post_init__(self):
        if self.start is not None:
            parse_time(self.start, field="start")
        if self.hours is not None:
            try:
                h = float(self.hours)
            except (TypeError, ValueError):
                h = float("nan")
            if not math.isfinite(h) or h <= 0 or isinstance(self.hours, bool):
                raise InputError(f"hours must be a positive number, got {self.hours!r}", field="hours")
        if self.pool_size is not None:
            k = self.pool_size
            try:
                ok = not isinstance(k, bool) and int(k) == k
            except (TypeError, ValueError, OverflowError):
                ok = False
            if not ok:
                raise InputError(f"pool size must be a whole number, got {k!r}", field="pool-size")
        if self.subset not in SUBSETS:
            raise InputError(f"subset must be 'first' or 'random', got {self.subset!r}", field="subset")
        if isinstance(self.seed, bool) or not isinstance(self.seed, numbers.Integral) or self.seed < 0:
            raise InputError(f"seed must be a whole number >= 0, got {self.seed!r}", field="seed")

    def replace(self, **changes) -> Window:
        """The same window with some fields changed (checked again)."""
        return replace(self, **changes)
