"""planner.idle.window.Window: one value for a log window and pool, checked when made (one-line
InputError naming the field), equal values share the pages' cache, and every idle function takes it."""

import dataclasses

import pytest

from planner.errors import InputError
from planner.idle import fragments as F
from planner.idle.window import Window


@pytest.mark.parametrize("kw, field", [
    ({"hours": 0}, "hours"), ({"hours": -1}, "hours"), ({"hours": float("nan")}, "hours"), ({"hours": "x"}, "hours"),
    ({"pool_size": 2.5}, "pool-size"), ({"pool_size": "many"}, "pool-size"), ({"pool_size": True}, "pool-size"),
    ({"subset": "last"}, "subset"), ({"seed": -1}, "seed"), ({"seed": 1.5}, "seed"),
    ({"start": "yesterday"}, "start"),
])
def test_bad_values_name_their_field(kw, field):
    with pytest.raises(InputError) as e:
        Window("tiny", **kw)
    assert e.value.field == field and "\n" not in str(e.value)


def test_frozen_hashable_and_replace():
    w = Window("tiny", start="2021-01-01 00:15:00", hours=0.5, pool_size=2)
    assert w == Window("tiny", start="2021-01-01 00:15:00", hours=0.5, pool_size=2) and len({w, w.replace()}) == 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        w.hours = 1.0
    assert w.replace(pool_size=3).pool_size == 3 and w.pool_size == 2
    with pytest.raises(InputError, match="hours"):
        w.replace(hours=0)


def test_log_bounds_are_checked_against_the_log(tiny_con):
    with pytest.raises(InputError, match="pool size must be 1..3"):
        F.summary(tiny_con, Window("tiny", pool_size=4))
    with pytest.raises(TypeError, match="Window"):
        F.summary(tiny_con, "tiny")  # the old loose form: refused, not misread
