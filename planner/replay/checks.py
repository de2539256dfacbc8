"""Invariant checks of a replay (simulate(check=True)): a violation raises RuntimeError."""

from __future__ import annotations

import numpy as np

from planner.allocators.base import AllocState


def check_owners(active, owner: np.ndarray, idle: np.ndarray):
    """Every held node is idle and owned by exactly the Trainer that holds it."""
    n = 0
    for r in active:
        if r.nodes:
            ids = np.fromiter(r.nodes, dtype=np.int64, count=len(r.nodes))
            if not idle[ids].all():
                raise RuntimeError(f"Trainer {r.spec.id} holds a node that is not in the pool")
            if not (owner[ids] == r.idx).all():
                raise RuntimeError(f"node ownership out of step for Trainer {r.spec.id}")
            n += len(ids)
    if int((owner >= 0).sum()) != n:
        raise RuntimeError("a node is owned by no running Trainer")


def check_map(state: AllocState, node_map: dict, idle: np.ndarray):
    """A decision's node map: counts 0 or within Nmin..Nmax, nodes only from the pool, each once."""
    pool_n = len(state.pool)
    parts = []
    for t in state.trainers:
        got = node_map.get(t.id, ())
        k = len(got)
        if k and not (t.nmin <= k <= t.nmax):
            raise RuntimeError(f"allocator gave Trainer {t.id} {k} nodes outside {t.nmin}..{t.nmax}")
        if k > pool_n:
            raise RuntimeError(f"allocator gave Trainer {t.id} more nodes than the pool has")
        if k:
            parts.append(np.fromiter(got, dtype=np.int64, count=k))
    if len(node_map) > len(state.trainers) or set(node_map) - {t.id for t in state.trainers}:
        extra = set(node_map) - {t.id for t in state.trainers}
        raise RuntimeError(f"allocator returned unknown Trainers {sorted(extra)[:3]}")
    if not parts:
        return
    ids = np.concatenate(parts)
    bad = (ids < 0) | (ids >= len(idle))
    if not bad.any():
        bad = ~idle[ids]
    if bad.any():
        raise RuntimeError(f"allocator gave node {int(ids[np.argmax(bad)])}, which is not in the pool")
    if len(np.unique(ids)) != len(ids):
        u, c = np.unique(ids, return_counts=True)
        raise RuntimeError(f"allocator gave node {int(u[np.argmax(c > 1)])} to two Trainers")
