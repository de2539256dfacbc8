"""Outages and warm-up of a log: the idle time that is not capacity to harvest (planner.idle.split
explains the rules). Kept apart from planner.idle.fragments and planner.idle.split so that both, and
the operator views, can mask these intervals without an import cycle."""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from planner.idle import warmup as warmup_mod
from planner.store import catalog
from planner.times import format_iso

OUTAGE_MIN_H = 2.0  # a machine-wide period with no job running counts as an outage from this length
WAIT_SLACK_S = 60.0  # a job submitted this close to the end of a gap did not wait through it


@dataclass(frozen=True)
class Outage:
    start_s: float
    end_s: float
    reason: str  # "jobs waiting" | "nothing submitted" | "no job running"
    waiting_jobs: int = 0

    @property
    def hours(self) -> float:
        return (self.end_s - self.start_s) / 3600.0

    def to_dict(self) -> dict:
        return {"start": format_iso(self.start_s), "end": format_iso(self.end_s), "hours": self.hours,
                **asdict(self)}


def full_idle_gaps(t_s, idle_nodes, end_s: float, machine_nodes: int) -> list[tuple[float, float]]:
    """Maximal periods [s, e) of a step series N(t) (holding until the next time, the last value
    until end_s) in which every node is idle (N >= machine_nodes: no job running)."""
    t = np.r_[np.asarray(t_s, dtype=float), float(end_s)]
    n = np.asarray(idle_nodes)
    if len(n) == 0:
        return []
    full = n >= machine_nodes
    d = np.diff(np.r_[False, full, False].astype(np.int8))
    starts, ends = np.flatnonzero(d == 1), np.flatnonzero(d == -1)
    return [(float(t[a]), float(t[b])) for a, b in zip(starts, ends) if t[b] > t[a]]


def detect_outages(gaps, submit_s=None, start_s=None, min_hours: float = OUTAGE_MIN_H) -> list[Outage]:
    """The gaps of at least min_hours, labelled with a reason from the jobs' submit and start
    times (arrays; None for a node log: reason "no job running")."""
    out = []
    sub = None if submit_s is None else np.asarray(submit_s, dtype=float)
    st = None if start_s is None else np.asarray(start_s, dtype=float)
    for a, b in gaps:
        if b - a < min_hours * 3600.0:
            continue
        reason, waiting = "no job running", 0
        if sub is not None and st is not None:
            ok = np.isfinite(sub)
            waiting = int(np.sum(ok & (sub < b - WAIT_SLACK_S) & (st >= b)))
            submitted = int(np.sum(ok & (sub >= a) & (sub < b)))
            reason = "jobs waiting" if waiting else ("nothing submitted" if not submitted else "no job running")
        out.append(Outage(a, b, reason, waiting))
    return out


@dataclass(frozen=True)
class PartitionOutage(Outage):
    """A partition-wide outage: no job of `partition` running while the rest of the machine runs."""
    partition: str = ""


MAX_PARTITIONS = 256  # more distinct labels than this: not partitions (e.g. a per-job field); none detected


def _union(a: np.ndarray, b: np.ndarray) -> list[tuple[float, float]]:
    """The union of intervals [a_i, b_i) (b_i > a_i), as sorted disjoint intervals."""
    out: list[list[float]] = []
    for x, y in sorted(zip(a.tolist(), b.tolist())):
        if y <= x:
            continue
        if out and x <= out[-1][1]:
            out[-1][1] = max(out[-1][1], y)
        else:
            out.append([x, y])
    return [(x, y) for x, y in out]


def _intersect(gap: tuple[float, float], cover: list[tuple[float, float]], starts: np.ndarray):
    """The parts of `gap` inside the sorted disjoint intervals `cover` (starts: their starts)."""
    a, b = gap
    i = max(int(np.searchsorted(starts, a, side="right")) - 1, 0)
    out = []
    while i < len(cover) and cover[i][0] < b:
        lo, hi = max(a, cover[i][0]), min(b, cover[i][1])
        if hi > lo:
            out.append((lo, hi))
        i += 1
    return out


def partition_outages(partition, submit_s, start_s, end_s, min_hours: float = OUTAGE_MIN_H) -> list[PartitionOutage]:
    """Partition-wide outages of a job log with a partition per job ('' = unknown): for each
    partition p, the periods of at least min_hours, between p's first job start and its last job
    end, in which no job of p runs while at least one other job of the machine runs throughout
    (a period with no job at all is a machine-wide outage, not counted twice). Labelled with a
    reason from p's own jobs, as detect_outages labels machine-wide outages."""
    lab = np.asarray(partition, dtype=object)
    sub, st, en = (np.asarray(x, dtype=float) for x in (submit_s, start_s, end_s))
    names = [p for p in dict.fromkeys(lab.tolist()) if p not in ("", None)]
    if not names or len(names) > MAX_PARTITIONS:
        return []
    out: list[PartitionOutage] = []
    for p in names:
        mine = lab == p
        busy = _union(st[mine], en[mine])
        others = _union(st[~mine], en[~mine])
        if len(busy) < 2 or not others:
            continue
        o_starts = np.asarray([x for x, _ in others])
        gaps = [(busy[i][1], busy[i + 1][0]) for i in range(len(busy) - 1)]
        pieces = [piece for g in gaps if g[1] - g[0] >= min_hours * 3600.0 for piece in _intersect(g, others, o_starts)]
        for o in detect_outages(pieces, sub[mine], st[mine], min_hours):
            out.append(PartitionOutage(o.start_s, o.end_s, o.reason, o.waiting_jobs, str(p)))
    return sorted(out, key=lambda o: (o.start_s, o.partition))


@dataclass(frozen=True)
class Calendar:
    """What of a whole log is not harvestable, found once per log: outages and warm-up."""
    log: str
    kind: str
    start_s: float
    end_s: float
    machine_nodes: int
    has_states: bool
    outages: tuple  # of Outage
    no_job_running_h: float  # every full-idle gap, any length
    gaps_h: tuple  # lengths of every full-idle gap (h), longest first
    warmup: warmup_mod.Warmup | None  # job logs only
    partition_outages: tuple = ()  # of PartitionOutage: job logs that name partitions

    def partition_intervals(self) -> dict[str, list[tuple[float, float]]]:
        """Per partition, its outages' [start, end) intervals (sorted)."""
        out: dict[str, list[tuple[float, float]]] = {}
        for o in self.partition_outages:
            out.setdefault(o.partition, []).append((o.start_s, o.end_s))
        return out

    def intervals(self, include_outages: bool = False, include_warmup: bool = False) -> list[tuple[float, float]]:
        """The excluded [start, end) intervals, sorted and merged."""
        iv = [] if include_outages else [(o.start_s, o.end_s) for o in self.outages]
        if not include_warmup and self.warmup is not None and self.warmup.detected:
            iv.append((self.warmup.start_s, self.warmup.end_s))
        return _merge(iv)


def _merge(iv):
    out = []
    for a, b in sorted(iv):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def has_states(con, log_id: int) -> bool:
    try:
        return con.execute("SELECT 1 FROM node_states WHERE log_id = ? LIMIT 1", [int(log_id)]).fetchone() is not None
    except Exception:  # a database written before node_states existed (opened read-only)
        return False


def calendar(con, log, outage_min_h: float = OUTAGE_MIN_H) -> Calendar:
    """The log's outages and warm-up (cached per stored log: its content key and the threshold)."""
    row = catalog.require_log(con, log)
    return _calendar(con, row["sha256"], float(outage_min_h), row)


def _calendar(con, sha: str, outage_min_h: float, row: dict) -> Calendar:
    key = (sha, row["name"], outage_min_h)
    hit = _CACHE.get(key)
    if hit is not None:
        return hit
    lid, m = int(row["log_id"]), int(row["machine_nodes"])
    states = has_states(con, lid)
    if states:  # the states say what is down; nothing is guessed
        cal = Calendar(row["name"], row["kind"], float(row["start_s"]), float(row["end_s"]), m, True, (), 0.0, (), None)
    else:
        se = con.execute("SELECT t_s, idle_nodes FROM idle_series WHERE log_id = ? ORDER BY t_s", [lid]).fetchnumpy()
        t, n = np.asarray(se["t_s"], float), np.asarray(se["idle_nodes"], np.int64)
        # job logs only: a node log's "idle" is what the machine reported (a node log without
        # states cannot tell a maintenance from an empty machine, and does not pretend to)
        gaps = full_idle_gaps(t, n, float(row["end_s"]), m) if row["kind"] == "jobs" else []
        sub = st = None
        if row["kind"] == "jobs" and gaps:
            j = con.execute("SELECT submit_s, start_s FROM jobs WHERE log_id = ?", [lid]).fetchnumpy()
            sub = np.asarray(j["submit_s"], dtype=float)  # NULL -> NaN
            st = np.asarray(j["start_s"], dtype=float)
        outs = detect_outages(gaps, sub, st, outage_min_h)
        pouts = ()
        if row["kind"] == "jobs":
            pouts = tuple(_partition_outages_of(con, lid, outage_min_h))
        wu = warmup_mod.detect(np.r_[t, float(row["end_s"])], np.r_[n, n[-1] if len(n) else 0], m) \
            if row["kind"] == "jobs" and len(t) else None
        lens = sorted(((b - a) / 3600.0 for a, b in gaps), reverse=True)
        cal = Calendar(row["name"], row["kind"], float(row["start_s"]), float(row["end_s"]), m, False,
                       tuple(outs), float(sum(lens)), tuple(lens), wu, pouts)
    if len(_CACHE) > 64:
        _CACHE.clear()
    _CACHE[key] = cal
    return cal


def _partition_outages_of(con, log_id: int, min_hours: float) -> list[PartitionOutage]:
    try:
        j = con.execute("SELECT coalesce(partition_name, '') AS p, submit_s, start_s, end_s FROM jobs "
                        "WHERE log_id = ? AND start_s IS NOT NULL", [int(log_id)]).fetchnumpy()
    except Exception:  # noqa: BLE001  (a database written before partition_name existed, opened read-only)
        return []
    if not len(j["p"]) or not (np.asarray(j["p"], dtype=object) != "").any():
        return []
    return partition_outages(j["p"], j["submit_s"], j["start_s"], j["end_s"], min_hours)


_CACHE: dict = {}  # (content key, name, threshold) -> Calendar: a stored log never changes


def harvest_start_s(con, log) -> float:
    """Where a window on this log starts by default: after a job log's warm-up, else its start."""
    cal = calendar(con, log)
    if cal.warmup is not None and cal.warmup.detected and cal.warmup.end_s < cal.end_s:
        return float(cal.warmup.end_s)
    return float(cal.start_s)


def exclusions(con, log, include_outages: bool = False, include_warmup: bool = False,
               outage_min_h: float = OUTAGE_MIN_H) -> list[tuple[float, float]]:
    """The intervals whose idle capacity is not harvestable (empty when both are included)."""
    if include_outages and include_warmup:
        return []
    return calendar(con, log, outage_min_h).intervals(include_outages, include_warmup)


