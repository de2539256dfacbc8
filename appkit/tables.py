"""Small tables as Markdown (issue 25, speed): a page whose tables are a handful of rows draws them
with st.markdown, not st.dataframe or st.table, whose code (Streamlit's DataFrame or Table chunk and
their Arrow code, 1.0-1.7 MB of JavaScript) a first load would otherwise fetch and compile. What is
lost: sorting, resizing and the full-screen and CSV buttons of a table widget, none of which a table
of a few rows needs. Larger tables keep st.dataframe."""

from __future__ import annotations

import math
import re

import pandas as pd

from appkit.uploads import code_parts

_NUMBER = re.compile(r"^-?[\d,]+(\.\d+)?$")  # numbers right-aligned, as in a table widget


def md_table(rows: list[dict], code_spans: bool = False) -> str:
    """Rows (dicts with the same keys) as a Markdown table, the keys as its header, columns of numbers
    right-aligned; `|` and Markdown's own characters in a cell shown as themselves. `code_spans` (the
    project's own text only, e.g. the Papers page's): a cell's paired backticks drawn as code."""
    def inert(text: str) -> str:
        text = text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")
        for ch in "*_`[]<>#~$":
            text = text.replace(ch, "\\" + ch)
        return text

    def cell(v) -> str:
        parts = code_parts(str(v)) if code_spans else None
        if parts is None:
            return inert(str(v))
        return "".join(inert(t) if i % 2 == 0 else "`" + t.replace("|", "\\|").replace("\n", " ") + "`"
                       for i, t in enumerate(parts))

    if not rows:
        return ""
    keys = list(rows[0])
    align = ["---:" if all(_NUMBER.match(str(r[k])) for r in rows) else "---" for k in keys]
    lines = ["| " + " | ".join(cell(k) for k in keys) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(cell(r[k]) for k in keys) + " |" for r in rows]
    return "\n".join(lines)


def scroll_wide() -> None:
    """Markdown tables of this page wider than its column scroll sideways (as a table widget does)
    instead of being cut off at the column's edge: a style (Streamlit draws no element box for it),
    once per page. Not an HTML wrapper: st.markdown's HTML fetches rehype-raw (189 kB) on a first
    load, a style only st.html's small chunk (which the Logs page's upload limit loads anyway)."""
    import streamlit as st

    st.html('<style>[data-testid="stMarkdownContainer"]:has(> table) {overflow-x: auto}</style>')


def log_rows(logs: pd.DataFrame, show: list[str]) -> list[dict]:
    """A table of logs (Home, Logs) as md_table's rows: readable column names (data.LOG_COLUMN_LABELS),
    counts with thousands separators, the span to 0.1 h, an unknown value as "-"."""
    from appkit.data import LOG_COLUMN_LABELS

    counts = {"nodes", "rows", "skipped"}

    def text(col, v) -> str:
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return "-"
        if col in counts:
            return f"{int(v):,}"
        if col == "span_h":
            return f"{float(v):,.1f}"  # 8,760.0
        return str(v)

    return [{LOG_COLUMN_LABELS.get(c, c): text(c, r[c]) for c in show} for _, r in logs.iterrows()]


def md_table_rows(text: str) -> list[dict] | None:
    """md_table's inverse: the rows (dicts of cell text) of the Markdown table that `text` is, or None
    if it is not one (a page's tables read back in tests)."""
    lines = text.strip().split("\n")
    if len(lines) < 2 or not re.fullmatch(r"\|(-+:?\|)+", lines[1]):
        return None

    def cells(line: str) -> list[str]:
        parts = re.split(r"(?<!\\)((?:\\\\)*)\|", line.strip())  # a | not escaped (after an even run of \)
        out, cur = [], ""
        for i, p in enumerate(parts):
            if i % 2:  # the backslashes before a separator belong to the cell
                cur += p
                out.append(cur)
                cur = ""
            else:
                cur += p
        out.append(cur)
        return [re.sub(r"\\(.)", r"\1", c.strip()) for c in out[1:-1]]

    keys = cells(lines[0])
    return [dict(zip(keys, cells(line))) for line in lines[2:]]
