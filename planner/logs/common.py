"""Shared pieces of the readers: what a reader returns, vectorized checks that still name a line."""

from __future__ import annotations

import re
import zoneinfo
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from planner.errors import InputError
from planner.logs.stream import is_gzip, iter_lines, read_head  # noqa: F401 (re-exported)


@dataclass
class NodeLog:
    """A node-state log: every row one node's state at a time (rows in file order)."""
    t_s: np.ndarray  # float, non-decreasing
    node: np.ndarray  # int codes into names (first appearance order)
    idle: np.ndarray  # bool
    names: list
    skipped: int = 0
    notes: list = field(default_factory=list)
    # set by a streaming reader that already reduced the rows to change-only events:
    rows: int | None = None  # rows read
    reduced: bool = False  # t_s/node/idle are the snapshot (one row per node) + real changes
    end_s: float | None = None  # the last row's time
    late: int | None = None  # nodes missing from the opening snapshot
    # a state log (time,node,state): change-only (t, node, planner.idle.states code) rows, the
    # snapshot first; None for an idle (0/1) log
    states: tuple | None = None


@dataclass
class JobLog:
    """Job records: busy intervals, optionally with node lists."""
    job_id: np.ndarray  # str, or int64 (SWF job numbers; stored as text)
    submit_s: np.ndarray  # float, NaN = unknown
    start_s: np.ndarray
    end_s: np.ndarray
    nodes: np.ndarray  # int
    node_list: list | None = None  # per job: list of host names (exact identity) or None
    node_list_text: np.ndarray | None = None
    skipped: int = 0
    skipped_why: dict = field(default_factory=dict)
    machine_nodes: int | None = None  # from the header
    machine_nodes_from: str | None = None
    notes: list = field(default_factory=list)
    partition: np.ndarray | None = None  # per job: partition name (str; '' = unknown) or None
    queue: np.ndarray | None = None  # per job: queue name (str; '' = unknown) or None
    user: np.ndarray | None = None  # per job: user (SWF field 12, sacct User; '' = unknown) or None
    group: np.ndarray | None = None  # per job: group or account (SWF field 13, sacct Account) or None


def merge_joblogs(parts: list) -> JobLog:
    """One JobLog from the JobLogs of consecutive chunks of a file (arrays concatenated, skip
    counts added, notes kept once; header fields from the first part)."""
    if len(parts) == 1:
        return parts[0]
    why: dict = {}
    for p in parts:
        for k, n in p.skipped_why.items():
            why[k] = why.get(k, 0) + n
    def cat(name):
        return np.concatenate([np.asarray(getattr(p, name)) for p in parts])

    lists = None if parts[0].node_list is None else [h for p in parts for h in p.node_list]
    text = None if parts[0].node_list_text is None else cat("node_list_text")
    ids = [np.asarray(p.job_id) for p in parts]
    if len({a.dtype.kind for a in ids if len(a)}) > 1:  # mixed int/str chunks: all text
        ids = [a.astype(str) for a in ids]
    return JobLog(job_id=np.concatenate(ids), submit_s=cat("submit_s"), start_s=cat("start_s"),
                  end_s=cat("end_s"), nodes=cat("nodes").astype(np.int64), node_list=lists,
                  node_list_text=text, partition=_cat_labels(parts, "partition"),
                  queue=_cat_labels(parts, "queue"), user=_cat_labels(parts, "user"),
                  group=_cat_labels(parts, "group"), skipped=sum(p.skipped for p in parts), skipped_why=why,
                  machine_nodes=parts[0].machine_nodes, machine_nodes_from=parts[0].machine_nodes_from,
                  notes=list(dict.fromkeys(n for p in parts for n in p.notes)))


def _cat_labels(parts: list, name: str):
    """Per-job labels (partition / queue / user / group) of the chunks concatenated: None when no chunk has them,
    else '' (unknown) for the jobs of chunks that have none."""
    labs = [getattr(p, name) for p in parts]
    if all(lab is None for lab in labs):
        return None
    return np.concatenate([np.asarray(lab, dtype=object) if lab is not None
                           else np.full(len(p.start_s), "", dtype=object) for p, lab in zip(parts, labs)])


def data_line_number(path, row: int, *, header: bool, comment: bytes | None = None) -> int | None:
    """1-based file line number of data row `row` (0-based), as pandas counts rows (blank and
    comment lines skipped, header line skipped); streamed, stops at that row."""
    seen_header = not header
    k = 0
    for i, line in enumerate(iter_lines(path), start=1):
        s = line.strip()
        if not s or (comment is not None and s.startswith(comment)):
            continue
        if not seen_header:
            seen_header = True
            continue
        if k == row:
            return i
        k += 1
    return None


def offset_lines(line_of, off: int):
    """row -> line for a chunk whose first row is row `off` of the file."""
    return lambda i: line_of(off + int(i))


class LineMap:
    """Row index -> file line number, computed only when an error needs it."""

    def __init__(self, path, *, header: bool, comment: bytes | None = None):
        self.path, self.header, self.comment = path, header, comment

    def __call__(self, row: int) -> int | None:
        if row < 0:
            return None
        try:
            return data_line_number(self.path, int(row), header=self.header, comment=self.comment)
        except Exception:  # noqa: BLE001 - best effort only (the error itself is what matters)
            return None


def fail(msg, path, line_of: LineMap | None = None, row: int | None = None, field: str | None = None):
    line = line_of(int(row)) if (line_of is not None and row is not None) else None
    raise InputError(msg, file=Path(path).name, line=line, field=field)


def numeric(col: pd.Series, name: str, path, line_of: LineMap, *, allow_missing=False,
            integer=False) -> np.ndarray:
    """A column as float64; text, NaN or inf raise InputError at the first bad line.

    allow_missing: empty fields (NaN) are allowed and stay NaN; inf and text still fail.
    """
    if pd.api.types.is_bool_dtype(col.dtype):
        fail(f"expected a number in '{name}'", path, line_of, 0, name)
    if pd.api.types.is_numeric_dtype(col.dtype):
        vals = col.to_numpy(dtype=float, na_value=np.nan)
        textbad = np.zeros(len(vals), dtype=bool)
    else:
        s = col.astype("str").str.strip()
        vals = pd.to_numeric(s, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
        empty = s.eq("").to_numpy() | col.isna().to_numpy()
        textbad = np.isnan(vals) & ~empty
    bad = textbad | np.isinf(vals)
    if not allow_missing:
        bad |= np.isnan(vals)
    if bad.any():
        i = int(np.argmax(bad))
        raw = col.iloc[i]
        what = "not a number" if textbad[i] else ("missing number" if pd.isna(raw) else "not a finite number")
        fail(f"{what}: {str(raw)[:40]!r} in '{name}'", path, line_of, i, name)
    if integer:
        frac = np.isfinite(vals) & (vals != np.round(vals))
        if frac.any():
            i = int(np.argmax(frac))
            fail(f"expected a whole number, got {str(col.iloc[i])[:40]!r} in '{name}'", path, line_of, i, name)
        huge = np.abs(vals) > MAX_WHOLE  # would wrap around when cast to int64
        if huge.any():
            i = int(np.argmax(huge))
            fail(f"whole number out of range: {str(col.iloc[i])[:40]!r} in '{name}'", path, line_of, i, name)
    return vals


MAX_WHOLE = 2.0 ** 53  # whole numbers beyond this are not exact in float64 (and no count is that big)

# Text a name (node, job id, partition, host list) must not hold: C0 and C1 control characters,
# line and paragraph separators, zero-width and bidirectional-override characters (they hide or
# reorder text on screen), a BOM; and a leading '=', '+' or '@' (a formula in a spreadsheet).
CONTROL_CHARS = "\x00-\x1f\x7f-\x9f\u2028\u2029\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff"
UNSAFE_TEXT = re.compile(f"[{CONTROL_CHARS}]|^[=+@]")


def unsafe_reason(text: str) -> str | None:
    """Why a name is refused (None when it is fine)."""
    m = re.search(f"[{CONTROL_CHARS}]", text)
    if m:
        return f"control character {m.group(0)!r}"
    if text[:1] in ("=", "+", "@"):
        return "a leading '=', '+' or '@' (a spreadsheet formula)"
    return None


def check_text(col: pd.Series, name: str, path, line_of, *, strip: bool = True, names: bool = True) -> None:
    """Refuse (one line naming line and field) the first value of a text column holding a control
    character or starting like a spreadsheet formula, and a value spanning lines (a quoted field
    left open by a stray '"')."""
    s = col.astype("str")
    if strip:
        s = s.str.strip()
    multi = s.str.contains("\n", regex=False).to_numpy()
    if multi.any():
        i = int(np.argmax(multi))
        fail(f"a quoted value runs over {s.iloc[i].count(chr(10)) + 1} lines (a stray '\"'?): "
             f"{s.iloc[i][:30]!r}...", path, line_of, i, name)
    bad = s.str.contains(UNSAFE_TEXT.pattern, regex=True).to_numpy() if names else np.zeros(len(s), bool)
    if bad.any():
        i = int(np.argmax(bad))
        fail(f"{unsafe_reason(s.iloc[i])} in {s.iloc[i][:40]!r}", path, line_of, i, name)


_EPOCH = pd.Timestamp(0, tz="UTC")


def factorize_stripped(col: pd.Series):
    """(codes, uniques as a str Series) of a text column, values stripped, missing -> ''.

    Factorizes first and strips only the distinct values (fast on long logs); uniques keep the
    order of first appearance."""
    codes, uniq = pd.factorize(col)
    uniq = pd.Series(np.asarray(uniq, dtype=object)).astype("str").str.strip()
    if (codes < 0).any():
        uniq = pd.concat([uniq, pd.Series([""])], ignore_index=True)
        codes = np.where(codes < 0, len(uniq) - 1, codes)
    c2, u2 = pd.factorize(uniq)
    return c2[codes], pd.Series(np.asarray(u2, dtype=object)).astype("str")


# Times a log may hold: 1970-01-01 .. 2100-01-01 UTC (anything else is a broken log, and
# would overflow datetime conversions downstream).
MIN_TIME_S = 0.0
MAX_TIME_S = 4102444800.0


def check_time_range(vals, name: str, path, line_of, rows=None) -> None:
    """Times (epoch s) outside MIN_TIME_S..MAX_TIME_S raise InputError at their line; NaN passes.

    rows: optional boolean mask of the rows to check (e.g. the jobs kept)."""
    v = np.asarray(vals, dtype=float)
    with np.errstate(invalid="ignore"):
        bad = (v < MIN_TIME_S) | (v >= MAX_TIME_S)
    if rows is not None:
        bad &= np.asarray(rows, dtype=bool)
    if bad.any():
        i = int(np.argmax(bad))
        when = "before 1970" if v[i] < MIN_TIME_S else "after 2100"
        fail(f"time {v[i]:.6g} s since 1970 is {when} in '{name}' (allowed 1970-01-01..2100-01-01 UTC)",
             path, line_of, i, name)


def times(col: pd.Series, name: str, path, line_of: LineMap, *, missing=(), tz: str | None = None,
          later: bool = False) -> np.ndarray:
    """Timestamps (ISO 8601 or epoch seconds) as epoch seconds; naive times are UTC, or local
    times of the IANA zone tz when given (a time in the repeated hour of a DST change is the
    earlier one, or the later one with later=True; a time in the skipped hour moves forward).

    Values in `missing` (e.g. 'Unknown', 'None', '') become NaN; anything else unparsable,
    NaN or inf, or outside 1970..2100, raises InputError at its line.
    """
    if pd.api.types.is_numeric_dtype(col.dtype) and not pd.api.types.is_bool_dtype(col.dtype):
        out = numeric(col, name, path, line_of)
        check_time_range(out, name, path, line_of)
        return out
    codes, uniq = factorize_stripped(col)
    num = pd.to_numeric(uniq, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    out = num.copy()
    need = np.isnan(num) & ~uniq.isin(list(missing)).to_numpy()
    badu = np.isinf(num)
    if need.any():
        sec = _iso_seconds(uniq[need], tz, later)
        out[need] = sec
        badu[np.flatnonzero(need)[np.isnan(sec)]] = True
    if badu.any():
        bad_rows = badu[codes]
        i = int(np.argmax(bad_rows))
        fail(f"not a time: {str(col.iloc[i])[:40]!r} in '{name}'", path, line_of, i, name)
    res = out[codes] if len(codes) else np.empty(0)
    check_time_range(res, name, path, line_of)
    return res


def _local_seconds(text: pd.Series, tz: str, later: bool) -> np.ndarray | None:
    """Naive ISO 8601 texts as local times of tz -> epoch seconds; None when the texts carry
    offsets of their own (then they are read as given)."""
    try:
        parsed = pd.to_datetime(text, format="ISO8601", errors="coerce")
    except (ValueError, TypeError, OverflowError, pd.errors.OutOfBoundsDatetime):
        return None
    if not pd.api.types.is_datetime64_dtype(parsed.dtype):
        return None  # tz-aware or mixed: read with their offsets
    amb = np.full(len(parsed), not later)  # True = the DST (earlier) reading of a repeated hour
    loc = parsed.dt.as_unit("us").dt.tz_localize(tz, ambiguous=amb, nonexistent="shift_forward")
    return ((loc - _EPOCH.as_unit("us")) / pd.Timedelta(seconds=1)).to_numpy(dtype=float, na_value=np.nan)


def check_tz(tz: str | None) -> str | None:
    """An IANA time zone name, validated (InputError naming the field 'tz')."""
    if tz is None:
        return None
    try:
        zoneinfo.ZoneInfo(str(tz))
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, TypeError):
        raise InputError(f"unknown time zone {str(tz)[:60]!r} (expected an IANA name such as "
                         "America/Chicago)", field="tz") from None
    return str(tz)


_OFFSET = r"(?:[Zz]|[+-]\d\d(?::?\d\d)?)$"


def _iso_seconds(text: pd.Series, tz: str | None = None, later: bool = False) -> np.ndarray:
    """ISO 8601 texts -> epoch seconds (NaN where unparsable), in microsecond resolution so that
    dates far from 1970 do not overflow (they are then refused by check_time_range)."""
    if tz is not None:
        # the zone applies per value: a value with its own offset (Z, +01:00) is read as given
        own = text.str.contains(_OFFSET, regex=True).to_numpy()
        if own.all():
            return _iso_seconds(text, None)
        if own.any():
            out = np.full(len(text), np.nan)
            out[own] = _iso_seconds(text[own], None)
            out[~own] = _iso_seconds(text[~own], tz, later)
            return out
        sec = _local_seconds(text, tz, later)
        if sec is not None:
            return sec
    epoch = _EPOCH.as_unit("us")
    try:
        parsed = pd.to_datetime(text, format="ISO8601", utc=True, errors="coerce")
        return ((parsed.dt.as_unit("us") - epoch) / pd.Timedelta(seconds=1)).to_numpy(
            dtype=float, na_value=np.nan)
    except (OverflowError, ValueError, pd.errors.OutOfBoundsDatetime):  # one by one then
        out = np.full(len(text), np.nan)
        for i, v in enumerate(text):
            try:
                ts = pd.Timestamp(v)
                ts = ts.tz_localize("UTC") if ts.tzinfo is None else ts.tz_convert("UTC")
                out[i] = (ts.as_unit("us") - epoch) / pd.Timedelta(seconds=1)
            except (OverflowError, ValueError, TypeError):
                pass
        return out


def find_columns(df: pd.DataFrame, wanted: dict, path, *, optional=()) -> dict:
    """Map logical names to the file's columns (case-insensitive); missing -> InputError."""
    lower = {str(c).lstrip("\ufeff").strip().strip('"').strip().lower(): c for c in df.columns}
    out = {}
    for key, col in wanted.items():
        if col is None:
            continue
        c = lower.get(str(col).strip().lower())
        if c is None:
            if key in optional:
                continue
            have = ", ".join(str(c) for c in df.columns[:12])
            raise InputError(f"missing column '{col}' (for {key}); columns are: {have}",
                             file=Path(path).name, field=str(col))
        out[key] = c
    return out
