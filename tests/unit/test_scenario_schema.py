"""The scenario schema (planner.scenario.schema): one declaration per field, and everything
derived from it (Scenario, the `planner simulate` options, the app's URL fields and widget
bounds, sweep column types) agrees with it."""

from __future__ import annotations

import dataclasses
import math
import pickle

import pytest

from appkit import state
from planner.cli import build_parser
from planner.errors import InputError
from planner.scenario import schema
from planner.scenario.record import Scenario
from planner.scenario.schema import FIELDS, check


def test_scenario_is_made_from_the_schema():
    fs = dataclasses.fields(Scenario)
    assert [f.name for f in fs] == [f.name for f in FIELDS]
    assert {f.name: f.default for f in fs} == schema.DEFAULTS
    sc = Scenario()
    sc.validate()  # every default passes its own field's check
    assert Scenario.from_dict(sc.to_dict()) == sc
    assert Scenario.__module__ == "planner.scenario.record"
    assert pickle.loads(pickle.dumps(sc)) == sc  # sweep workers receive scenarios
    with pytest.raises(dataclasses.FrozenInstanceError):
        sc.hours = 3.0


@pytest.mark.parametrize("f", [f for f in FIELDS if f.kind in (int, float)], ids=lambda f: f.name)
def test_numeric_bounds_are_enforced_with_the_field_named(f):
    for edge, is_open, step in ((f.lo, f.lo_open, -1), (f.hi, f.hi_open, 1)):
        if edge is None:
            continue
        outside = edge + step * max(1e-3 * abs(edge), 1e-3) if f.kind is float else edge + step
        if f.kind is float and not is_open:
            assert check(f.name, edge) == edge
        with pytest.raises(InputError, match=f"field '{f.name}'"):
            check(f.name, outside)
        if is_open:
            with pytest.raises(InputError, match=f"field '{f.name}'"):
                check(f.name, edge)
    for bad in ("x", "nan", float("inf"), True, [1]):
        with pytest.raises(InputError, match=f"field '{f.name}'"):
            check(f.name, bad)
    if f.kind is int:
        with pytest.raises(InputError, match="whole number"):
            check(f.name, 2.5)


@pytest.mark.parametrize("f", [f for f in FIELDS if f.allowed() is not None], ids=lambda f: f.name)
def test_choices_are_enforced(f):
    for ok in f.allowed():
        assert check(f.name, ok) == ok
    with pytest.raises(InputError, match=f"field '{f.name}': choose one of"):
        check(f.name, "no-such-choice")


def test_text_forms_and_missing_values():
    assert check("pj_max", " 12 ") == 12 and check("pj_max", "1e1") == 10 and check("tfwd", "30") == 30.0
    assert check("pow2", "yes") is True and check("pow2", "off") is False
    assert check("pool_size", "") is None and check("rup", float("nan")) is None  # optional: None
    with pytest.raises(InputError, match="field 'hours': a value is required"):
        check("hours", "")
    with pytest.raises(InputError, match="field 'pow2': must be true/false"):
        check("pow2", "maybe")
    with pytest.raises(InputError, match="field 'bogus': unknown scenario field"):
        check("bogus", 1)
    with pytest.raises(InputError, match="field 'log': longer than"):
        check("log", "x" * 5000)
    assert check("start", 1612988475) == "1612988475"  # kept as given; parse_time accepts it
    for bad in ("9999-12-31", "0001-01-01", "yesterday"):
        with pytest.raises(InputError, match="field 'start'"):
            check("start", bad)


def test_cross_field_rules():
    with pytest.raises(InputError, match="field 'pool_size': a fixed pool needs"):
        Scenario.from_dict({"pool": "fixed"})
    with pytest.raises(InputError, match="field 'kill_share'"):
        Scenario.from_dict({"bug_share": 0.6, "kill_share": 0.6})
    with pytest.raises(InputError, match="field 'tfwd'"):
        Scenario(tfwd=0.0).validate()  # direct construction is checked too
    with pytest.raises(InputError, match="field 'hours': the window would end after 2262"):
        Scenario.from_dict({"pool": "fixed", "pool_size": 4, "start": "2261-12-31", "hours": 48})
    assert Scenario.from_dict({"pool": "fixed", "pool_size": 4, "start": "2261-12-31", "hours": 23}).hours == 23


def test_simulate_options_come_from_the_schema():
    sub = next(a for a in build_parser()._actions if getattr(a, "choices", None) and "simulate" in a.choices)
    p = sub.choices["simulate"]
    opts = {a.option_strings[0]: a for a in p._actions if a.option_strings}
    # the help the user reads (argparse's rendering, whitespace joined) carries the schema's words,
    # its default and its allowed values
    shown = {o: " ".join(p._get_formatter()._expand_help(a).split()) for o, a in opts.items() if a.help}
    for f in FIELDS:
        a = opts[f.option]
        assert " ".join(f.help.split()) in shown[f.option], f.name
        if f.default is not None and f.kind is not bool and f.name != "start":
            assert "(default " in shown[f.option], f.name
        if f.allowed() is not None and f.name != "allocator":
            assert all(v in shown[f.option] for v in f.allowed()), f.name
        if f.kind is bool:
            assert a.nargs == 0  # a flag
        elif f.default is not None:
            assert "default" in a.help
    # values a reader can check against the README: T_fwd 120 s, the window 24 h, dp by default
    assert "(default 120)" in shown["--tfwd"] and "(default 24)" in shown["--hours"]
    assert "(default dp)" in shown["--allocator"] and "log | fixed (default log)" in shown["--pool"]
    args = p.parse_args(["--pool-size", "64", "--pow2", "--start", "1612988475"])
    assert (args.pool_size, args.pow2, args.start, args.hours) == ("64", True, "1612988475", None)


def test_column_types_follow_the_kinds_and_match_the_sweep_store():
    types = schema.column_types()
    assert set(types) == {f.name for f in dataclasses.fields(Scenario)}  # one column per scenario field
    assert (types["pow2"], types["pool_size"], types["hours"], types["log"]) == (
        "BOOLEAN", "BIGINT", "DOUBLE", "VARCHAR")


def test_the_app_fields_come_from_the_schema():
    # a link carries every field the schema marks for URLs, and the page checks each one with
    # the schema's rule: an out-of-range or unknown value is refused with a note naming it
    params = state.scenario_to_params(state.DEFAULTS)
    assert set(params) - {"baseline"} == {f.name for f in FIELDS if f.url and state.DEFAULTS[f.name] is not None}
    refused = 0
    for f in FIELDS:
        if not f.url or f.name == "start":
            continue
        bad = ("no-such-choice" if f.allowed() is not None else
               str(f.hi * 10 + 1) if f.kind in (int, float) and f.hi is not None else None)
        if bad is None:
            continue
        sc, notes = state.scenario_from_params({f.name: bad})
        assert sc[f.name] == state.DEFAULTS[f.name] and len(notes) == 1 and f.name in notes[0], (f.name, notes)
        refused += 1
    assert refused >= 8
    for k in ("hours", "pool_size", "tfwd", "pj_max", "rup", "rdw", "seed"):
        b = state.widget_bounds(k)
        assert b["min_value"] == schema.FIELD[k].lo and b.get("max_value") == schema.FIELD[k].hi
        assert type(b["min_value"]) is schema.FIELD[k].kind
    # the Planner opens on BFTrainer's replay of the Summit log (the paper's window, 1,024 nodes,
    # Rup 18 s, Rdw 12 s), T_fwd 120 s
    d = state.DEFAULTS
    assert (d["log"], d["start"], d["pool_size"], d["rup"], d["rdw"], d["tfwd"]) == (
        "summit-2021", "2021-02-10T20:21:15", 1024, 18.0, 12.0, 120.0)
    for k in ("hours", "pool_size", "tfwd", "pj_max", "rup", "rdw"):
        assert check(k, d[k]) == d[k]  # the page's start passes the schema


@pytest.mark.parametrize("start", ["9999-12-31", "2262-06-01", "1677-01-01", "0001-01-01", "garbage"])
def test_a_url_with_a_bad_start_keeps_the_default_with_one_note(start):
    sc, notes = state.scenario_from_params({"start": start, "hours": "3"})
    assert sc["start"] == state.DEFAULTS["start"] and sc["hours"] == 3.0
    assert len(notes) == 1 and "start" in notes[0] and "\n" not in notes[0]


def test_url_values_are_checked_per_field_like_the_cli():
    sc, notes = state.scenario_from_params({"start": "1612988475", "allocator": "magic", "baseline": "none",
                                            "objective": "speed", "hours": str(24 * 365 * 290 + 1)})
    assert sc["start"] == "2021-02-10T20:21:15" and sc["baseline"] == "none"  # epoch -> the page's ISO
    assert sc["allocator"] == state.DEFAULTS["allocator"] and sc["objective"] == state.DEFAULTS["objective"]
    assert sorted(n.split("=")[0] for n in notes) == [
        "URL parameter allocator", "URL parameter hours", "URL parameter objective"]
    assert not math.isnan(sc["hours"])
