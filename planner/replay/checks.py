"""Invariant checks of a replay (simulate(check=True)): a violation raises RuntimeError.

Each check looks at every node of every Trainer, in a few whole-array numpy operations (one
array of all held or mapped node ids), not a handful per Trainer: a replay runs them at most
once per event, ~1,500 times for a day of Summit (issue 25's Run to charts). Where the first
bad node is (the message) is worked out only when there is one.
"""

from __future__ import annotations

from itertools import chain

import numpy as np

from planner.allocators.base import AllocState

_MIN, _MAX = np.minimum.reduce, np.maximum.reduce  # the ufuncs' own reductions: no Python wrapper per call


def _first_bad(bad: np.ndarray, ends: np.ndarray) -> int:
    """Index (into the Trainers) of the first True in `bad`, whose Trainers' runs end at `ends`."""
    return int(np.searchsorted(ends, int(np.argmax(bad)), side="right"))


SMALL = 128  # nodes: up to this many, the checks look them up one by one (NumPy's cost per call is more)


def _views(*arrays):
    """memoryviews of 1-d contiguous arrays (an element read is a plain Python int or bool), or None."""
    try:
        return [memoryview(a) for a in arrays if a.ndim == 1]
    except (ValueError, TypeError, BufferError):
        return None


def check_owners(active, owner: np.ndarray, idle: np.ndarray):
    """Every held node is idle and owned by exactly the Trainer that holds it."""
    held = [r for r in active if r.nodes]
    sizes = [len(r.nodes) for r in held]
    n = sum(sizes)
    if 0 < n <= SMALL and _owners_ok(held, owner, idle):
        pass  # every held node idle and owned by its holder: only the count below is left
    elif n:
        ids = np.fromiter(chain.from_iterable(r.nodes for r in held), dtype=np.int64, count=n)
        ok = idle[ids]
        if np.count_nonzero(ok) != n:
            raise RuntimeError(f"Trainer {held[_first_bad(~ok, np.cumsum(sizes))].spec.id} holds a node that is "
                               "not in the pool")
        bad = owner[ids] != np.repeat(np.fromiter((r.idx for r in held), dtype=np.int64, count=len(held)), sizes)
        if np.count_nonzero(bad):
            who = held[_first_bad(bad, np.cumsum(sizes))].spec.id
            raise RuntimeError(f"node ownership out of step for Trainer {who}")
    if int(np.count_nonzero(owner >= 0)) != n:
        raise RuntimeError("a node is owned by no running Trainer")


def _owners_ok(held, owner: np.ndarray, idle: np.ndarray) -> bool:
    """check_owners' first two checks, node by node (False: a violation, or arrays it cannot read so;
    the array code then finds and names it)."""
    views = _views(owner, idle)
    if views is None or len(views) != 2:
        return False
    own, idl = views
    size = len(own)
    if len(idl) != size:
        return False
    for r in held:
        i = r.idx
        for x in r.nodes:
            if not (0 <= x < size and idl[x] and own[x] == i):
                return False
    return True


def _map_ok(parts, total: int, idle: np.ndarray) -> bool:
    """check_map's node checks (in the pool, each once), node by node (False: a violation, or an
    array it cannot read so; the array code then finds and names it)."""
    views = _views(idle)
    if not views:
        return False
    idl = views[0]
    size = len(idl)
    seen = set()
    for part in parts:
        for x in part:
            if not (0 <= x < size and idl[x]):
                return False
            seen.add(x)
    return len(seen) == total


def check_map(state: AllocState, node_map: dict, idle: np.ndarray):
    """A decision's node map: counts 0 or within Nmin..Nmax, nodes only from the pool, each once."""
    pool_n = len(state.pool)
    parts = []
    total = 0
    for t in state.trainers:
        got = node_map.get(t.id, ())
        k = len(got)
        if k:
            if not (t.nmin <= k <= t.nmax):
                raise RuntimeError(f"allocator gave Trainer {t.id} {k} nodes outside {t.nmin}..{t.nmax}")
            if k > pool_n:
                raise RuntimeError(f"allocator gave Trainer {t.id} more nodes than the pool has")
            parts.append(got)
            total += k
    if len(node_map) > len(state.trainers) or set(node_map) - {t.id for t in state.trainers}:
        extra = set(node_map) - {t.id for t in state.trainers}
        raise RuntimeError(f"allocator returned unknown Trainers {sorted(extra)[:3]}")
    if not parts or (total <= SMALL and _map_ok(parts, total, idle)):
        return
    ids = np.fromiter(chain.from_iterable(parts), dtype=np.int64, count=total)
    if _MIN(ids) < 0 or _MAX(ids) >= len(idle):
        bad = (ids < 0) | (ids >= len(idle))
    else:
        bad = ~idle[ids]
    if np.count_nonzero(bad):
        raise RuntimeError(f"allocator gave node {int(ids[np.argmax(bad)])}, which is not in the pool")
    ids.sort()
    if total > 1:
        same = ids[1:] == ids[:-1]
        if np.count_nonzero(same):
            raise RuntimeError(f"allocator gave node {int(ids[1:][np.argmax(same)])} to two Trainers")
