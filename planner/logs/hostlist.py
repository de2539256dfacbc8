"""Expand Slurm compressed host lists: `nid[0001-0004,0010],gpu07` -> nid0001..nid0004, nid0010, gpu07.

Rules: top-level commas separate items; a bracket holds comma-separated numbers or ranges
`a-b` (a <= b); zero padding is kept (the width of the range's first bound); several bracket
groups in one item expand as a cartesian product (`r[1-2]n[1-2]` -> r1n1 r1n2 r2n1 r2n2).
Anything else (unbalanced brackets, empty items, letters in a range, a > b) raises ValueError.
"""

from __future__ import annotations

import re

_RANGE = re.compile(r"^(\d+)(?:-(\d+))?$")
MAX_HOSTS = 1_000_000  # hosts in one list (= the machine-size limit); guards `n[0-99999999999]`
MAX_HOST_CHARS = 1024  # longest host name


def _split_top(text: str) -> list[str]:
    items, depth, cur = [], 0, []
    for ch in text:
        if ch == "[":
            depth += 1
            if depth > 1:
                raise ValueError(f"nested '[' in host list {text!r}")
        elif ch == "]":
            depth -= 1
            if depth < 0:
                raise ValueError(f"unbalanced ']' in host list {text!r}")
        if ch == "," and depth == 0:
            items.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if depth != 0:
        raise ValueError(f"unbalanced '[' in host list {text!r}")
    items.append("".join(cur))
    return items


def _expand_bracket(body: str, text: str) -> list[str]:
    out = []
    for part in body.split(","):
        m = _RANGE.match(part.strip())
        if not m:
            raise ValueError(f"bad range {part!r} in host list {text!r}")
        lo_s, hi_s = m.group(1), m.group(2)
        width = len(lo_s)
        lo = int(lo_s)
        hi = int(hi_s) if hi_s is not None else lo
        if hi < lo:
            raise ValueError(f"range {part!r} goes down in host list {text!r}")
        if hi - lo + 1 > MAX_HOSTS:
            raise ValueError(f"range {part!r} too large in host list {text!r}")
        out.extend(str(i).zfill(width) for i in range(lo, hi + 1))
    return out


def _expand_item(item: str, text: str) -> list[str]:
    if not item.strip():
        raise ValueError(f"empty host name in host list {text!r}")
    if any(c.isspace() for c in item):
        raise ValueError(f"space in host name {item!r} of host list {text!r}")
    parts = re.split(r"(\[[^\[\]]*\])", item)
    names = [""]
    for p in parts:
        if p.startswith("[") and p.endswith("]"):
            choices = _expand_bracket(p[1:-1], text)
        else:
            if "[" in p or "]" in p:
                raise ValueError(f"unbalanced bracket in host list {text!r}")
            choices = [p]
        names = [n + c for n in names for c in choices]
        if len(names) > MAX_HOSTS:
            raise ValueError(f"host list {text!r} too large")
    return names


def expand(text: str) -> list[str]:
    """The host names of a compressed Slurm host list, in order (duplicates kept)."""
    text = str(text).strip()
    if not text:
        raise ValueError("empty host list")
    out: list[str] = []
    for item in _split_top(text):
        out.extend(_expand_item(item.strip(), text))
        if len(out) > MAX_HOSTS:
            raise ValueError(f"host list {text[:60]!r} names more than {MAX_HOSTS:,} hosts")
    if out and max(map(len, out)) > MAX_HOST_CHARS:
        raise ValueError(f"host name longer than {MAX_HOST_CHARS} characters in {text[:60]!r}")
    return out
