"""Times: the one parser for every accepted way to give a time, and the one ISO formatter.

    parse_time("2021-02-10T20:21:15Z") -> 1612988475.0   (epoch seconds, UTC)
    format_iso(1612988475.0) -> "2021-02-10T20:21:15Z"

Accepted by parse_time (the window start of `planner fragments|simulate --start`, the app's URL
and widgets, sweep grids):
- ISO 8601 date or date-time, with `T` or a space between them, with or without seconds and
  fractions; naive = UTC; `Z` or an offset (`+01:00`) is honoured: `2021-02-10`,
  `2021-02-10 20:21:15`, `2021-02-10T20:21:15Z`, `2021-02-10T21:21:15+01:00`;
- epoch seconds as a number (int, float, numpy) or as text (`1612988475`, `1612988475.5`);
- a datetime.datetime or pandas.Timestamp (naive = UTC).

A time must lie in [MIN_S, MAX_S) = [1970-01-01, 2262-01-01) UTC: logs hold no earlier times
(readers refuse them) and pandas, which the charts and tables use, holds no later ones. Anything
else is an InputError naming the field: one line, never a traceback.
"""

from __future__ import annotations

import math
import re
from datetime import UTC, date, datetime

from planner.errors import InputError

MIN_S = 0.0  # 1970-01-01T00:00:00Z
MAX_S = float(datetime(2262, 1, 1, tzinfo=UTC).timestamp())  # 2262-01-01T00:00:00Z

_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def parse_time(value, field: str = "start") -> float:
    """Any accepted form (see the module docstring) -> epoch seconds (UTC); InputError naming
    `field` for anything else, including times outside [1970-01-01, 2262-01-01)."""
    if isinstance(value, bool) or value is None:
        raise InputError(f"not a time: {value!r}", field=field)
    if isinstance(value, datetime):  # also pandas.Timestamp
        if value != value:  # NaT
            raise InputError("not a time: NaT", field=field)
        return _check_range(_aware_seconds(value), value, field)
    if isinstance(value, date):
        return _check_range(_aware_seconds(datetime(value.year, value.month, value.day)), value, field)
    if not isinstance(value, str):
        try:
            t = float(value)  # int, float, numpy numbers
        except (TypeError, ValueError, OverflowError):
            raise InputError(f"not a time: {value!r}", field=field) from None
        return _check_range(t, value, field, epoch=True)
    text = value.strip()
    if len(text) > 64:
        raise InputError(f"not a time: {text[:40]!r}... ({len(text)} characters)", field=field)
    if not text.isprintable():
        raise InputError(f"not a time: {text!r} (control characters)", field=field)
    if _NUMBER.match(text):
        return _check_range(float(text), value, field, epoch=True)
    try:
        dt = datetime.fromisoformat(_zulu(text))
    except ValueError:
        raise InputError(f"not a time: {text!r} (expected ISO 8601 such as 2021-02-10T20:21:15Z, "
                         "or epoch seconds)", field=field) from None
    return _check_range(_aware_seconds(dt), text, field)


def _zulu(text: str) -> str:
    """'...Z' -> '...+00:00' (datetime.fromisoformat of Python 3.10 and older lacks 'Z')."""
    return text[:-1] + "+00:00" if text[-1:] in ("Z", "z") else text


def _aware_seconds(dt: datetime) -> float:
    """Epoch seconds of a datetime (naive = UTC), exact for every year 1..9999 and any offset."""
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return (dt - _EPOCH).total_seconds()


def _check_range(t: float, given, field: str, epoch: bool = False) -> float:
    how = " (read as epoch seconds)" if epoch else ""
    if not math.isfinite(t):
        raise InputError(f"not a time: {given!r}", field=field)
    if not MIN_S <= t < MAX_S:
        raise InputError(f"time {given!r}{how} is out of range (times from {format_iso(MIN_S, zone='')[:10]} "
                         f"up to {format_iso(MAX_S, zone='')[:10]} UTC)", field=field)
    return float(t)


def format_iso(t_s, sep: str = "T", zone: str = "Z", timespec: str = "seconds") -> str | None:
    """Epoch seconds -> ISO 8601 in UTC: '2021-02-10T20:21:15Z' by default.

    sep: between date and time ('T' or ' '); zone: suffix ('Z' or '' for a naive UTC time);
    timespec: as datetime.isoformat ('seconds' truncates fractions; 'auto' keeps them).
    None when t_s is None, not finite or beyond the years 1..9999 (see describe())."""
    if t_s is None:
        return None
    try:
        t = float(t_s)
        if not math.isfinite(t):
            return None
        dt = datetime.fromtimestamp(t, tz=UTC)
    except (OverflowError, OSError, ValueError, TypeError):
        return None
    return dt.replace(tzinfo=None).isoformat(sep=sep, timespec=timespec) + zone


def describe(t_s) -> str:
    """format_iso(t_s), or for messages a plain figure where that has no date."""
    text = format_iso(t_s)
    if text is not None:
        return text
    try:
        t = float(t_s)
    except (TypeError, ValueError):
        return str(t_s)
    return f"{t:.6g} s since 1970" if math.isfinite(t) else str(t)


def zone(tz, field: str = "tz"):
    """An IANA time zone name ('Europe/Stockholm', 'UTC') -> its tzinfo; InputError naming `field`
    for anything else. The one check of a time zone (the Idle page's clock, `planner profile --tz`,
    planner.idle.split.by_period)."""
    import pandas as pd  # lazy: CLI start-up (every command parses times; few need pandas)

    if not isinstance(tz, str) or not tz.strip():
        raise InputError(f"not a time zone: {tz!r}", field=field)
    try:
        return pd.Timestamp(0, tz=tz.strip()).tz
    except Exception:  # noqa: BLE001  (pytz/zoneinfo raise different errors for a bad name)
        raise InputError(f"unknown time zone {tz!r} (an IANA name such as Europe/Stockholm or UTC)",
                         field=field) from None


def utc_offsets_s(t_s, tz, field: str = "tz"):
    """Each epoch second's offset of time zone `tz` from UTC, in seconds (numpy float array),
    daylight saving time included: local wall-clock time = t_s + offset."""
    import numpy as np  # lazy: CLI start-up (every command parses times; few need numpy)
    import pandas as pd  # lazy: CLI start-up (every command parses times; few need pandas)

    t = np.asarray(t_s, dtype=float)
    if t.size == 0:
        return np.zeros(0)
    utc = pd.to_datetime(t, unit="s", utc=True)
    local = utc.tz_convert(zone(tz, field))
    return (local.tz_localize(None) - utc.tz_localize(None)).total_seconds().to_numpy(dtype=float)
