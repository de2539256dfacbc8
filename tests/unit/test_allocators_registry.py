"""The allocator records (planner.allocators.ALLOCATORS) say what the allocators do."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import random
from pathlib import Path

import pytest

from planner import allocators
from planner.allocators import ALLOCATORS, AllocOptions, allocate, info, names
from planner.allocators.base import counts_to_map, is_feasible, objective_of
from planner.allocators.instances import fig5_instance

OPTION_FIELDS = {f.name for f in dataclasses.fields(AllocOptions)}


def test_records_are_complete_and_each_name_loads_its_own_module():
    assert len(set(names())) == len(ALLOCATORS) == len(allocators.REGISTRY) == len(allocators.DESCRIPTIONS)
    descriptions = [a.description for a in ALLOCATORS]
    assert len(set(descriptions)) == len(descriptions)  # no two allocators described alike
    for a in ALLOCATORS:
        assert a.description and "\n" not in a.description
        for o in a.options:
            assert o in OPTION_FIELDS or (o.startswith("extra.") and o[6:]), (a.name, o)
        fn = allocators.get(a.name)
        # the name reaches the function its record holds (REGISTRY for `planner bench`), in the
        # module the record names (horizon-milp: a wrapper that imports its module on first use),
        # with the (state, opts) signature
        assert fn is a.allocate is allocators.REGISTRY[a.name], a.name
        if a.name != "horizon-milp":
            assert (fn.__module__, fn.__name__) == (f"planner.allocators.{a.module}", a.function), a.name
        assert list(inspect.signature(fn).parameters)[:2] == ["state", "opts"], a.name
    assert set(names(exact=True)) | set(names(exact=False)) == set(names())
    assert set(names(exact=True)).isdisjoint(names(exact=False))
    with pytest.raises(ValueError, match="choose one of"):
        info("magic")
    with pytest.raises(ValueError, match="choose one of"):
        allocators.get("magic")


def test_every_allocate_function_in_the_package_has_a_record():
    # a module under planner/allocators/ with a top-level allocate* function that no record
    # names would be an allocator the CLI, the app and the benchmark cannot reach
    registered = {(a.module, a.function) for a in ALLOCATORS}
    found = set()
    for f in Path(allocators.__file__).parent.glob("*.py"):
        if f.stem.startswith("_") or f.stem in ("base", "instances"):
            continue
        for node in ast.parse(f.read_text()).body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("allocate"):
                found.add((f.stem, node.name))
    assert len(found) >= 12
    assert found <= registered, f"allocate functions without a record: {sorted(found - registered)}"


def test_cli_choices_and_help_come_from_the_records():
    from planner.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command").choices["allocate"]
    alloc = next(a for a in sub._actions if a.dest == "allocator")
    assert list(alloc.choices) == names()
    for a in ALLOCATORS:
        assert f"{a.name} ({'exact' if a.exact else 'not exact'}): {a.description}" in alloc.help


def _instances():
    for seed in range(4):
        rng = random.Random(seed)
        yield fig5_instance(rng.randint(3, 9), rng.choice([12, 30, 64]), seed=seed, nmin=rng.choice([1, 2]),
                            nmax=rng.choice([8, 32]))


@pytest.mark.slow  # 0.9 s CPU measured in the default run: the slow tier
@pytest.mark.parametrize("name", names())
def test_every_allocator_reports_bftrainers_objective_and_the_mapped_counts(name):
    # the common language: objective = objective_of(counts); node map = counts_to_map (lowest id,
    # no migration) unless the record says the allocator picks nodes itself; the exact ones
    # reach dp's optimum and no allocator beats it
    a = info(name)
    for state in _instances():
        opts = AllocOptions(time_limit_s=20, horizon_steps=2)
        res = allocate(name, state, opts)
        dp = allocate("dp", state, opts)
        assert is_feasible(state, res.counts)
        assert res.objective == pytest.approx(objective_of(state, res.counts, opts), rel=1e-9, abs=1e-9)
        assert res.objective <= dp.objective + 1e-9 * max(1.0, abs(dp.objective))
        if a.exact:
            assert res.objective == pytest.approx(dp.objective, rel=1e-6)
        if not a.node_level:
            assert res.node_map == counts_to_map(state, res.counts)
        assert {k: len(v) for k, v in res.node_map.items()} == res.counts


def test_benchmark_default_set_is_bftrainers_fig5_comparison():
    # `planner bench allocators` by default runs the allocators of BFTrainer's Fig. 5 comparison
    # (the exact ones and the three count-level heuristics); the records' `bench` flag says so
    from planner.bench import suite

    assert set(suite.ALLOCATORS) == {"milp-node", "milp", "dp", "hull", "dp-reduced", "auto",
                                     "equal-share", "greedy", "marginal-gain"}
    assert all(info(n).bench for n in suite.ALLOCATORS)
    assert list(suite.ALLOCATORS) == [n for n in names() if n in suite.ALLOCATORS]  # registry order
