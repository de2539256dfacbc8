"""Turn the benchmark suite JSON into a Markdown table (for README.md / docs/benchmarks.md).

    python scripts/bench_table.py [artifacts/bench_suite.json] [--out docs/bench_table.md]

One row per headline figure: the benchmark's "headline" dict if it has one, else its top-level
numeric figures. Missing or failed benchmarks get one row saying so. A header line gives the
date, machine and versions.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_IN = ROOT / "artifacts" / "bench_suite.json"


def _fmt(v) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        if not math.isfinite(v):
            return "-"
        a = abs(v)
        if a == 0:
            return "0"
        if a >= 1000:
            return f"{v:,.0f}"
        if a >= 10:
            return f"{v:.1f}"
        if a >= 0.01:
            return f"{v:.3g}"
        return f"{v:.2e}"
    if v is None:
        return "-"
    return str(v).replace("|", "\\|")


def _earlier(when, than) -> bool:
    """True if ISO time `when` is before `than` (the suite's start); False if either is missing."""
    from datetime import datetime

    try:
        return datetime.fromisoformat(str(when).replace("Z", "+00:00")) < datetime.fromisoformat(
            str(than).replace("Z", "+00:00"))
    except ValueError:
        return False


def headline(figures: dict) -> list[tuple[str, object]]:
    """The (figure, value) pairs a benchmark shows in the table."""
    if isinstance(figures.get("headline"), dict) and figures["headline"]:
        return list(figures["headline"].items())
    rows = []
    for k, v in figures.items():
        if isinstance(v, (int, float, str, bool)) and not (isinstance(v, str) and len(v) > 60):
            rows.append((k, v))
    return rows


def table(suite: dict) -> str:
    m, ver = suite.get("machine", {}), suite.get("versions", {})
    head = (f"Measured {suite.get('date', '?')} (latest run) on {m.get('cpu_count', '?')} CPUs "
            f"({m.get('cpu_model') or 'unknown CPU'}), {m.get('memory_gb', '?')} GB RAM; "
            + ", ".join(f"{k} {v}" for k, v in ver.items()
                        if v and k in ("python", "duckdb", "pyomo", "highspy", "pandas",
                                       "streamlit", "dask")) + ".")
    lines = [head, "", "| benchmark | figure | value |", "|---|---|---|"]
    benches = suite.get("benchmarks", {})
    # Rows carry their date only when some were kept from an earlier run (`--update` re-ran
    # others): such a record is older than the suite's own start. Records of one run differ by
    # the seconds each benchmark took, which is no reason to date them.
    dated = any(_earlier(r.get("date"), suite.get("date")) for r in benches.values())
    for name, rec in benches.items():
        status = rec.get("status")
        if dated and rec.get("date"):
            name = f"{name} ({rec['date']})"
        if status != "ok":
            lines.append(f"| {name} | {status} | {_fmt(rec.get('error'))} |")
            continue
        rows = headline(rec.get("figures") or {})
        if not rows:
            lines.append(f"| {name} | (no scalar figures) | - |")
        for i, (k, v) in enumerate(rows):
            lines.append(f"| {name if i == 0 else ''} | {_fmt(k)} | {_fmt(v)} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("suite", nargs="?", default=str(DEFAULT_IN), help="suite JSON (default %(default)s)")
    ap.add_argument("--out", help="write the Markdown here (default: stdout)")
    a = ap.parse_args(argv)
    p = Path(a.suite)
    if not p.is_file():
        print(f"bench_table: {p}: not found (run `planner bench --json` first)", file=sys.stderr)
        return 2
    try:
        suite = json.loads(p.read_text())
    except json.JSONDecodeError as e:
        print(f"bench_table: {p}: line {e.lineno}: not valid JSON: {e.msg}", file=sys.stderr)
        return 2
    md = table(suite)
    if a.out:
        Path(a.out).write_text(md)
    else:
        sys.stdout.write(md)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
