"""Exports of a run: CSV and Parquet tables, and one self-contained HTML report.

Pure functions (no Streamlit): the Downloads page and the tests call them directly.

CSV injection: a spreadsheet treats a cell starting with = + - @ (or a tab / carriage return)
as a formula. Text cells starting that way get a leading apostrophe in CSV exports; numbers
stay numbers (a negative number is data, not a formula). Parquet keeps values unchanged.
"""

from __future__ import annotations

import csv
import html
import io
import json
import math
import re
import zipfile
from collections.abc import Mapping
from datetime import UTC, datetime

import pandas as pd
import plotly.graph_objects as go

FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def neutralize_cell(value):
    """Prefix text that a spreadsheet would run as a formula with an apostrophe."""
    if isinstance(value, str) and value.startswith(FORMULA_PREFIXES):
        return "'" + value
    return value


def safe_frame(df: pd.DataFrame) -> pd.DataFrame:
    """A copy with every text cell (and column name) neutralized."""
    out = df.copy()
    out.columns = [neutralize_cell(str(c)) for c in out.columns]
    for col in out.columns:
        s = out[col]
        if s.dtype == object or pd.api.types.is_string_dtype(s.dtype):
            out[col] = s.map(neutralize_cell).astype(object)
    return out


_ABS_PATH = re.compile(r"(?:[A-Za-z]:)?(?:/[^/\s'\"]+){2,}")


def scrub_paths(value):
    """No server paths in exports: an absolute path in text becomes its last part."""
    if isinstance(value, str) and "/" in value:
        return _ABS_PATH.sub(lambda m: m.group(0).rsplit("/", 1)[-1], value)
    return value


PRIVATE_COLUMNS = ("db", "source", "out", "traceback")  # never exported (server paths, tracebacks)


def export_frame(df: pd.DataFrame) -> pd.DataFrame:
    """A table ready to leave the server: no PRIVATE_COLUMNS, paths in text cut."""
    out = df.drop(columns=[c for c in PRIVATE_COLUMNS if c in df.columns])
    for col in out.columns:
        if out[col].dtype == object or pd.api.types.is_string_dtype(out[col].dtype):
            out[col] = out[col].map(scrub_paths)
    return out


PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b")
DASHES = (None, "dash", "dot", "dashdot")


def style_runs(fig: go.Figure, labels) -> go.Figure:
    """One colour (and line style) per run across every figure, so allocators are told apart
    in print and in grey; traces not named after a run (the idle pool N(t)) stay grey."""
    labels = list(labels)
    for tr in fig.data:
        name = str(tr.name or "")
        hit = next((i for i, lab in enumerate(labels) if name == lab or name.endswith(f": {lab}")), None)
        color = "#7f7f7f" if hit is None else PALETTE[hit % len(PALETTE)]
        if tr.type == "scatter":
            tr.line.color = color
            if hit is not None:
                tr.line.dash = DASHES[hit % len(DASHES)]
        elif hasattr(tr, "marker"):
            tr.marker.color = color
    return fig


def archive_bytes(files: Mapping[str, bytes]) -> bytes:
    """One zip with every file (names as given; deflate)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    return buf.getvalue()


def export_archive(tables: Mapping[str, pd.DataFrame], extra: Mapping[str, bytes] | None = None) -> bytes:
    """The Downloads archive: every table (export_frame of it) as csv/<name>.csv and
    parquet/<name>.parquet, plus the `extra` files (scenario, report) under their names."""
    files = {}
    for name, df in tables.items():
        df = export_frame(df)
        files[f"csv/{name}.csv"] = to_csv_bytes(df)
        files[f"parquet/{name}.parquet"] = to_parquet_bytes(df)
    files.update(extra or {})
    return archive_bytes(files)


def to_csv_bytes(df: pd.DataFrame) -> bytes:
    # every text cell quoted: a carriage return inside a cell cannot split a row
    return safe_frame(df).to_csv(index=False, quoting=csv.QUOTE_NONNUMERIC).encode("utf-8")


def to_parquet_bytes(df: pd.DataFrame) -> bytes:
    buf = io.BytesIO()
    out = df.copy()
    out.columns = [str(c) for c in out.columns]
    for col in out.columns:  # mixed-type text columns (e.g. a summary's values) become text
        s = out[col]
        if s.dtype == object and len({type(v) for v in s if v is not None and v == v}) > 1:
            out[col] = s.map(lambda v: None if v is None or v != v else str(v))
    out.to_parquet(buf, index=False)
    return buf.getvalue()


def flatten(summary: Mapping, prefix: str = "") -> dict:
    """Nested summary dict -> flat {'a.b': value} (lists become JSON text)."""
    out = {}
    for k, v in summary.items():
        key = f"{prefix}{k}"
        if isinstance(v, Mapping):
            out.update(flatten(v, key + "."))
        elif isinstance(v, (list, tuple)):
            out[key] = json.dumps(v, default=str)
        else:
            out[key] = v
    return out


def summary_frame(summaries: Mapping[str, Mapping]) -> pd.DataFrame:
    """{'dp': summary, 'equal-share': summary} -> one row per metric, one column per run."""
    flat = {name: flatten(s) for name, s in summaries.items()}
    keys: list[str] = []
    for f in flat.values():
        keys += [k for k in f if k not in keys]
    rows = [{"metric": k, **{name: f.get(k) for name, f in flat.items()}} for k in keys]
    return pd.DataFrame(rows)


def _fmt(v) -> str:
    if isinstance(v, float):
        if not math.isfinite(v):
            return "-"
        return f"{v:.4g}"
    return "-" if v is None else str(v)


def html_report(title: str, scenario: Mapping, summaries: Mapping[str, Mapping],
                figures: Mapping[str, go.Figure], tables: Mapping[str, pd.DataFrame] | None = None,
                max_table_rows: int = 200) -> str:
    """One HTML file that works offline: plotly.js inlined once, figures, headline table.

    Every text from the run (scenario values, table cells) is HTML-escaped.
    """
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>{html.escape(title)}</title>",
        "<style>body{font-family:system-ui,sans-serif;margin:2em;max-width:1200px}"
        "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:3px 8px;"
        "text-align:right}th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}"
        "h2{margin-top:1.6em}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
        f"<p>Generated {datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')} by harvest planner.</p>",
        "<h2>Scenario</h2><table>",
    ]
    for k, v in scenario.items():
        parts.append(f"<tr><th>{html.escape(str(k))}</th><td>{html.escape(_fmt(scrub_paths(v)))}</td></tr>")
    parts.append("</table>")
    if summaries:
        sf = summary_frame(summaries)
        parts.append("<h2>Headline numbers</h2><table><tr>")
        parts += [f"<th>{html.escape(str(c))}</th>" for c in sf.columns]
        parts.append("</tr>")
        for row in sf.itertuples(index=False):
            parts.append("<tr>" + "".join(f"<td>{html.escape(_fmt(v))}</td>" for v in row) + "</tr>")
        parts.append("</table>")
    first = True
    for name, fig in figures.items():
        parts.append(f"<h2>{html.escape(name)}</h2>")
        parts.append(fig.to_html(full_html=False, include_plotlyjs="inline" if first else False,
                                 config={"displaylogo": False}))
        first = False
    for name, df in (tables or {}).items():
        parts.append(f"<h2>{html.escape(name)}</h2>")
        shown = df.head(max_table_rows)
        parts.append(shown.to_html(index=False, escape=True, na_rep="-", float_format=lambda x: f"{x:.4g}"))
        if len(df) > max_table_rows:
            parts.append(f"<p>First {max_table_rows} of {len(df)} rows; the CSV/Parquet downloads hold all.</p>")
    parts.append("</body></html>")
    return "\n".join(parts)
