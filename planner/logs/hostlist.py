"""Expand Slurm compressed host lists: `nid[0001-0004,0010],gpu07` -> nid0001..nid0004, nid0010, gpu07.

Rules: top-level commas separate items; a bracket holds comma-separated numbers or ranges
`a-b` (a <= b); zero padding is kept (the width of the range's first bound); several bracket
groups in one item expand as a cartesian product (`r[1-2]n[1-2]` -> r1n1 r1n2 r2n1 r2n2).
Anything else (unbalanced brackets, empty items, letters in a range, a > b) raises ValueError.

Bounded work: a list is parsed into its ranges and the number of names it stands for is
counted (sum over items of the product of the range sizes) BEFORE anything is expanded, so a
310-byte `a[1-100]b[1-100]c[1-100]d[1-100]` (10^8 names) is refused in microseconds.
"""

from __future__ import annotations

import math
import re

from planner.logs.limits import (
    MAX_HOSTS_PER_LIST as MAX_HOSTS,  # names per list (counted first)
)
from planner.logs.limits import MAX_NAME_CHARS as MAX_HOST_CHARS  # longest host name

MAX_LIST_CHARS = 1_000_000  # longest host list text
_RANGE = re.compile(r"^(\d+)(?:-(\d+))?$")


def _split_top(text: str) -> list[str]:
    items, depth, cur = [], 0, []
    for ch in text:
        if ch == "[":
            depth += 1
            if depth > 1:
                raise ValueError(f"nested '[' in host list {text[:60]!r}")
        elif ch == "]":
            depth -= 1
            if depth < 0:
                raise ValueError(f"unbalanced ']' in host list {text[:60]!r}")
        if ch == "," and depth == 0:
            items.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if depth != 0:
        raise ValueError(f"unbalanced '[' in host list {text[:60]!r}")
    items.append("".join(cur))
    return items


def _parse_bracket(body: str, text: str) -> list[tuple[int, int, int]]:
    """A bracket's body -> [(lo, hi, width)], validated, nothing expanded."""
    out = []
    for part in body.split(","):
        m = _RANGE.match(part.strip())
        if not m:
            raise ValueError(f"bad range {part[:40]!r} in host list {text[:60]!r}")
        lo_s, hi_s = m.group(1), m.group(2)
        lo = int(lo_s)
        hi = int(hi_s) if hi_s is not None else lo
        if hi < lo:
            raise ValueError(f"range {part[:40]!r} goes down in host list {text[:60]!r}")
        out.append((lo, hi, len(lo_s)))
    return out


def _parse_item(item: str, text: str) -> list:
    """An item -> list of parts: a str (literal) or a list of (lo, hi, width) ranges."""
    if not item.strip():
        raise ValueError(f"empty host name in host list {text[:60]!r}")
    if any(c.isspace() for c in item):
        raise ValueError(f"space in host name {item[:40]!r} of host list {text[:60]!r}")
    if item[0] in "=+@" or any(ord(c) < 32 or ord(c) == 127 for c in item):
        raise ValueError(f"host name {item[:40]!r} holds a control character or starts with '=', '+' or '@'")
    parts = []
    for p in re.split(r"(\[[^\[\]]*\])", item):
        if p.startswith("[") and p.endswith("]"):
            parts.append(_parse_bracket(p[1:-1], text))
        elif "[" in p or "]" in p:
            raise ValueError(f"unbalanced bracket in host list {text[:60]!r}")
        elif p:
            parts.append(p)
    return parts


def _item_count(parts) -> int:
    return math.prod(sum(hi - lo + 1 for lo, hi, _ in p) for p in parts if not isinstance(p, str))


def _item_chars(parts) -> int:
    """Length of the item's longest name (without expanding it)."""
    return sum(len(p) if isinstance(p, str) else max(max(len(str(hi)), w) for _, hi, w in p)
               for p in parts)


def parse(text: str) -> list[list]:
    """Parse (and validate) a host list without expanding it: one parts list per item."""
    text = str(text).strip()
    if not text:
        raise ValueError("empty host list")
    if len(text) > MAX_LIST_CHARS:
        raise ValueError(f"host list of {len(text):,} characters (limit {MAX_LIST_CHARS:,})")
    return [_parse_item(item.strip(), text) for item in _split_top(text)]


def count(text: str) -> int:
    """How many names (duplicates included) the host list stands for, computed from the range
    sizes without building a single name."""
    return sum(_item_count(parts) for parts in parse(text))


def _expand_parts(parts) -> list[str]:
    names = [""]
    for p in parts:
        if isinstance(p, str):
            names = [n + p for n in names]
        else:
            choices = [str(i).zfill(w) for lo, hi, w in p for i in range(lo, hi + 1)]
            names = [n + c for n in names for c in choices]
    return names


def expand(text: str, max_hosts: int = MAX_HOSTS) -> list[str]:
    """The host names of a compressed Slurm host list, in order (duplicates kept).

    Lists naming more than max_hosts names (counted before expanding) raise ValueError."""
    items = parse(text)
    n = sum(_item_count(parts) for parts in items)
    if n > max_hosts:
        raise ValueError(f"host list {str(text).strip()[:60]!r} names {n:,} hosts "
                         f"(more than {max_hosts:,})")
    if any(_item_chars(parts) > MAX_HOST_CHARS for parts in items):
        raise ValueError(f"host name longer than {MAX_HOST_CHARS} characters in {str(text).strip()[:60]!r}")
    out: list[str] = []
    for parts in items:
        out.extend(_expand_parts(parts))
    return out
