"""The replay's invariant checks (planner.replay.checks), each violation by hand: every held or mapped
node is looked at, and the message names the Trainer (or node) at fault."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from planner.allocators.base import AllocState, TrainerState
from planner.replay import checks
from planner.replay.checks import check_map, check_owners
from planner.workload.trainers import Curve

LIN = Curve((0, 1, 4), (0.0, 100.0, 400.0))


@pytest.fixture(autouse=True, params=["node by node", "arrays"])
def path(request, monkeypatch):
    """Each check both ways: small maps and holdings node by node (checks.SMALL), larger ones in arrays."""
    if request.param == "arrays":
        monkeypatch.setattr(checks, "SMALL", 0)
    return request.param


def run(idx, nodes):
    return SimpleNamespace(idx=idx, nodes=set(nodes), spec=SimpleNamespace(id=f"t{idx}"))


def test_check_owners_each_violation():
    idle = np.array([True] * 6 + [False] * 2)
    owner = np.array([0, 0, 1, 1, 1, -1, -1, -1])
    active = [run(0, {0, 1}), run(1, {2, 3, 4}), run(2, set())]
    check_owners(active, owner, idle)  # consistent
    check_owners([run(0, set())], np.full(8, -1), idle)  # nobody holds anything
    with pytest.raises(RuntimeError, match="Trainer t1 holds a node that is not in the pool"):
        check_owners([run(0, {0, 1}), run(1, {2, 3, 6})], np.array([0, 0, 1, 1, -1, -1, 1, -1]), idle)
    with pytest.raises(RuntimeError, match="ownership out of step for Trainer t1"):
        check_owners(active, np.array([0, 0, 1, 0, 1, -1, -1, -1]), idle)
    with pytest.raises(RuntimeError, match="owned by no running Trainer"):
        check_owners(active, np.array([0, 0, 1, 1, 1, 1, -1, -1]), idle)
    with pytest.raises(RuntimeError, match="ownership out of step for Trainer t1"):  # two hold node 1
        check_owners([run(0, {0, 1}), run(1, {1, 2})], np.array([0, 0, 1, -1, -1, -1, -1, -1]), idle)


def test_check_map_each_violation():
    ts = tuple(TrainerState(id=f"t{i}", nmin=2, nmax=3, curve=LIN) for i in range(2))
    state = AllocState(pool=(0, 1, 2, 3, 4), trainers=ts)
    idle = np.array([True] * 5 + [False])
    check_map(state, {"t0": (0, 1), "t1": (2, 3, 4)}, idle)
    check_map(state, {"t0": (), "t1": ()}, idle)
    with pytest.raises(RuntimeError, match="t0 1 nodes outside 2..3"):
        check_map(state, {"t0": (0,)}, idle)
    with pytest.raises(RuntimeError, match="unknown Trainers"):
        check_map(state, {"t0": (0, 1), "x": ()}, idle)
    with pytest.raises(RuntimeError, match="node 5, which is not in the pool"):
        check_map(state, {"t0": (0, 1), "t1": (2, 5)}, idle)
    with pytest.raises(RuntimeError, match="node 9, which is not in the pool"):
        check_map(state, {"t0": (0, 9)}, idle)
    with pytest.raises(RuntimeError, match="node 1 to two Trainers"):
        check_map(state, {"t0": (3, 1), "t1": (1, 2, 3)}, idle)
