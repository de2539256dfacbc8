"""Node lists of job records -> host names, with a cache for repeated lists."""

from __future__ import annotations

import numpy as np

from planner.logs.common import fail
from planner.logs.hostlist import expand

# Expanded host entries in one log (all jobs): a few bytes of `n[0-999999]` per line must not
# turn into tens of GB of names. 20 million is e.g. 1 million jobs of 20 nodes each.
MAX_TOTAL_HOSTS = 20_000_000


def expand_lists(texts, nodes, path, line_of, field: str) -> list[list[str]]:
    """Expand each job's host list; the count must match the job's node count (if given)."""
    cache: dict[str, list[str]] = {}
    out = []
    total = 0
    for k, text in enumerate(texts):
        text = str(text).strip()
        hosts = cache.get(text)
        if hosts is None:
            try:
                hosts = list(dict.fromkeys(expand(text)))  # a host named twice is held once
            except ValueError as e:
                fail(f"node list does not parse: {e}", path, line_of, k, field)
            cache[text] = hosts
        if nodes is not None and np.isfinite(nodes[k]) and int(nodes[k]) != len(hosts):
            fail(f"node list names {len(hosts)} nodes but the node count is {int(nodes[k])}",
                 path, line_of, k, field)
        total += len(hosts)
        if total > MAX_TOTAL_HOSTS:
            fail(f"node lists expand to more than {MAX_TOTAL_HOSTS:,} host entries", path, line_of, k, field)
        out.append(hosts)
    return out
