"""The log formats: one record per format (name -> detector, reader, options), in detection order.

    READERS            {name: Reader}, in the order formats are tried when detecting
    detect(lines)      the first format whose detector accepts the head lines, or None
    read(fmt, path, max_bytes=None, **options)   parse with that format's reader

A reader takes (path, max_bytes=..., **its options) and returns a NodeLog or a JobLog
(planner.logs.common). Options a format does not take are refused with one line naming them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from planner.errors import InputError
from planner.logs import csvjobs, nodestate, slurm, slurm_json, swf


@dataclass(frozen=True)
class Reader:
    name: str
    kind: str  # 'node' (node-state events) | 'jobs' (job records)
    description: str
    looks_like: Callable[[list[str]], bool]  # head lines (BOM removed) -> is this format?
    read: Callable  # (path, max_bytes=None, **options) -> NodeLog | JobLog
    options: tuple[str, ...] = ()  # reader options beyond max_bytes


READERS: dict[str, Reader] = {r.name: r for r in (
    Reader("swf", "jobs", "Standard Workload Format (Parallel Workloads Archive)", swf.looks_like, swf.read),
    Reader("slurm", "jobs", "Slurm accounting dump (sacct -P)", slurm.looks_like, slurm.read, ("tz",)),
    Reader("slurm_json", "jobs", "Slurm accounting dump (sacct --json; RESIZING epochs kept apart)",
           slurm_json.looks_like, slurm_json.read),
    Reader("nodestate", "node", "node-state events (time,node,idle CSV)", nodestate.looks_like, nodestate.read),
    Reader("csv", "jobs", "job CSV with a column mapping", csvjobs.looks_like, csvjobs.read, ("mapping",)),
)}
FORMATS = tuple(READERS)


def detect(lines: list[str]) -> str | None:
    """The first format (in READERS order) whose detector accepts the non-blank head lines."""
    return next((name for name, r in READERS.items() if r.looks_like(lines)), None)


def get(fmt: str) -> Reader:
    if fmt not in READERS:
        raise InputError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}", field="format")
    return READERS[fmt]


def read(fmt: str, path, max_bytes: int | None = None, **options):
    """Parse path with the format's reader; options the format does not take (given as other
    than None) raise InputError naming them."""
    r = get(fmt)
    extra = sorted(k for k, v in options.items() if v is not None and k not in r.options)
    if extra:
        raise InputError(f"option {', '.join(extra)} does not apply to the {fmt} format", field=extra[0])
    return r.read(path, max_bytes=max_bytes, **{k: v for k, v in options.items() if k in r.options})
