"""planner.times: the one parser of every accepted time form and the one ISO formatter."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from planner.errors import InputError
from planner.times import MAX_S, MIN_S, describe, format_iso, parse_time
from tests.helpers import examples

T = 1612988475.0  # 2021-02-10T20:21:15Z, where BFTrainer's replays start


@pytest.mark.parametrize("value", [
    "2021-02-10T20:21:15", "2021-02-10 20:21:15", "2021-02-10T20:21:15Z", "2021-02-10T20:21:15z",
    "2021-02-10T20:21:15+00:00", "2021-02-10T21:21:15+01:00", "2021-02-10T15:21:15-05:00",
    "  2021-02-10 20:21:15  ", "2021-02-10T20:21:15.000", 1612988475, 1612988475.0, "1612988475",
    "1612988475.0", " 1612988475 ", np.int64(1612988475), np.float64(1612988475.0),
    datetime(2021, 2, 10, 20, 21, 15), datetime(2021, 2, 10, 21, 21, 15, tzinfo=timezone(timedelta(hours=1))),
    pd.Timestamp("2021-02-10 20:21:15"), pd.Timestamp("2021-02-10 20:21:15", tz="UTC"),
])
def test_every_accepted_form_gives_the_same_epoch_seconds(value):
    assert parse_time(value) == T


def test_dates_fractions_and_minutes():
    assert parse_time("2021-02-10") == parse_time(date(2021, 2, 10)) == T - (20 * 3600 + 21 * 60 + 15)
    assert parse_time("1612988475.5") == T + 0.5
    assert parse_time("2021-02-10T20:21") == T - 15
    assert parse_time(0) == MIN_S == parse_time("1970-01-01")


@pytest.mark.parametrize("value,why", [
    ("9999-12-31", "out of range"), ("2262-06-01", "out of range"), ("2262-01-01", "out of range"),
    ("1677-01-01", "out of range"), ("0001-01-01", "out of range"), ("1969-12-31T23:59:59Z", "out of range"),
    ("9999-12-31T23:59:59-05:00", "out of range"), ("1e300", "read as epoch seconds"), (-1, "out of range"),
    (float("inf"), "not a time"), (float("nan"), "not a time"), ("inf", "not a time"), ("nan", "not a time"),
    ("yesterday", "not a time"), ("2021-13-01", "not a time"), ("2021-02-30", "not a time"), ("", "not a time"),
    (None, "not a time"), (True, "not a time"), (pd.NaT, "not a time"), ([1], "not a time"),
    ("x" * 10_000, "characters"), ("2021-02-10\n20:21:15", "not a time"),
])
def test_bad_times_are_one_line_input_errors_naming_the_field(value, why):
    with pytest.raises(InputError) as e:
        parse_time(value, field="start")
    msg = str(e.value)
    assert msg.startswith("field 'start': ") and why in msg
    assert "\n" not in msg and len(msg) < 300


def test_the_range_ends():
    assert parse_time(MAX_S - 1) == MAX_S - 1
    assert format_iso(MAX_S) == "2262-01-01T00:00:00Z"
    with pytest.raises(InputError, match="from 1970-01-01 up to 2262-01-01"):
        parse_time(MAX_S)


def test_format_iso_forms():
    assert format_iso(T) == "2021-02-10T20:21:15Z"
    assert format_iso(T + 0.7) == "2021-02-10T20:21:15Z"  # truncated, as strftime("%S")
    assert format_iso(T, sep=" ", zone="") == "2021-02-10 20:21:15"
    assert format_iso(T + 0.5, zone="", timespec="auto") == "2021-02-10T20:21:15.500000"
    assert format_iso(np.float64(T)) == "2021-02-10T20:21:15Z"
    for bad in (None, float("nan"), float("inf"), 1e20, -1e20, "x"):
        assert format_iso(bad) is None


def test_describe_falls_back_to_a_figure():
    assert describe(T) == "2021-02-10T20:21:15Z"
    assert describe(1e20) == "1e+20 s since 1970"
    assert describe(float("inf")) == "inf"


@pytest.mark.parametrize("budget", examples(200))
def test_format_then_parse_round_trips(budget):
    @settings(max_examples=budget, deadline=None)
    @given(t=hs.integers(int(MIN_S), int(MAX_S) - 1))
    def example(t):
        for text in (format_iso(t), format_iso(t, sep=" ", zone=""), str(t)):
            assert parse_time(text) == t

    example()
