"""Shared pieces of the paper studies: one result row, verdicts, the committed JSON and its table."""

from __future__ import annotations

import json
from pathlib import Path

from planner.paths import ROOT

VERDICTS = ("yes", "partly", "no")
ROW_KEYS = ("claim", "metric", "paper_value", "paper_setting", "value", "setting", "reproduced", "why")
STUDIES_DIR = ROOT / "docs" / "studies"


def row(claim: str, metric: str, paper_value, paper_setting: str, value, setting: str,
        reproduced: str, why: str) -> dict:
    """One headline of a paper beside ours; `reproduced` is one of VERDICTS."""
    if reproduced not in VERDICTS:
        raise ValueError(f"reproduced must be one of {VERDICTS}, not {reproduced!r}")
    return dict(zip(ROW_KEYS, (claim, metric, paper_value, paper_setting, value, setting, reproduced, why)))


def json_path(name: str) -> Path:
    return STUDIES_DIR / f"{name}.json"


def load(name: str) -> dict | None:
    """The committed full run of study `name`, or None when none is committed."""
    p = json_path(name)
    return json.loads(p.read_text()) if p.exists() else None


def _cell(v) -> str:
    if isinstance(v, float):
        return f"{v:,.3g}" if abs(v) < 1000 else f"{v:,.0f}"
    return "-" if v is None else str(v).replace("|", "\\|").replace("\n", " ")


def markdown_table(result: dict) -> str:
    """The rows of one study result as a Markdown table (the docs embed these, generated)."""
    head = "| claim | metric | paper | paper's setting | ours | our setting | reproduced | why |"
    lines = [head, "|" + "---|" * len(ROW_KEYS)]
    for r in result["rows"]:
        lines.append("| " + " | ".join(_cell(r[k]) for k in ROW_KEYS) + " |")
    return "\n".join(lines)
