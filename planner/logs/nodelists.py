"""Node lists of job records -> host names, with a cache for repeated lists.

Bounded: each list is counted before it is expanded (planner.logs.hostlist.count), the running
total of host entries and the number of distinct hosts are capped (planner.logs.limits), and
host names are shared between jobs (one string per distinct host)."""

from __future__ import annotations

import numpy as np

from planner.errors import InputError
from planner.logs import hostlist
from planner.logs.common import fail
from planner.logs.limits import MAX_MACHINE_NODES, MAX_TOTAL_HOSTS


class ListState:
    """What the lists of one log share across chunks: the cache of expanded lists, one string
    per distinct host, the running total of host entries."""

    def __init__(self):
        self.cache: dict[str, list[str]] = {}
        self.names: dict[str, str] = {}
        self.total = 0


def expand_lists(texts, nodes, path, line_of, field: str, state: ListState | None = None) -> list[list[str]]:
    """Expand each job's host list; the count must match the job's node count (if given)."""
    state = state or ListState()
    cache, names = state.cache, state.names
    out = []
    total = state.total
    for k, text in enumerate(texts):
        text = str(text).strip()
        hosts = cache.get(text)
        if hosts is None:
            try:
                n = hostlist.count(text)
                if n <= hostlist.MAX_HOSTS and total + n > MAX_TOTAL_HOSTS:  # else expand refuses it
                    fail(f"node lists expand to more than {MAX_TOTAL_HOSTS:,} host entries",
                         path, line_of, k, field)
                hosts = [names.setdefault(h, h) for h in dict.fromkeys(hostlist.expand(text))]
            except InputError:
                raise
            except ValueError as e:
                fail(f"node list does not parse: {e}", path, line_of, k, field)
            if len(names) > MAX_MACHINE_NODES:
                fail(f"node lists name more than {MAX_MACHINE_NODES:,} distinct nodes", path, line_of, k, field)
            cache[text] = hosts
        if nodes is not None and np.isfinite(nodes[k]) and int(nodes[k]) != len(hosts):
            fail(f"node list names {len(hosts)} nodes but the node count is {int(nodes[k])}",
                 path, line_of, k, field)
        total += len(hosts)
        if total > MAX_TOTAL_HOSTS:
            fail(f"node lists expand to more than {MAX_TOTAL_HOSTS:,} host entries", path, line_of, k, field)
        out.append(hosts)
    state.total = total
    return out
