"""Shared pieces of the paper studies: one result row, verdicts, the committed JSON and its table."""

from __future__ import annotations

import json
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from planner.paths import ROOT
from planner.report import glossary

VERDICTS = ("yes", "partly", "no")
ROW_KEYS = ("claim", "metric", "paper_value", "paper_setting", "value", "setting", "reproduced", "why")
# a row may also carry the experiments that isolate its gap (IBM, ModelArts; issue 22): [{"id",
# "what", "change", "before", "after", "closes"}, ...], one change each from the row's setting
OPTIONAL_ROW_KEYS = ("experiments",)
STUDIES_DIR = ROOT / "docs" / "studies"


def row(claim: str, metric: str, paper_value, paper_setting: str, value, setting: str,
        reproduced: str, why: str) -> dict:
    """One headline of a paper beside ours; `reproduced` is one of VERDICTS.

    `metric`: a summary key the glossary knows (planner.report.glossary, e.g.
    "utilization_efficiency", "jct_s.mean") gets its label and unit in the table, and `value`
    (in the summary's unit) is shown scaled to that unit (give paper_value in that unit too);
    any other text is printed as it is."""
    if reproduced not in VERDICTS:
        raise ValueError(f"reproduced must be one of {VERDICTS}, not {reproduced!r}")
    return dict(zip(ROW_KEYS, (claim, metric, paper_value, paper_setting, value, setting, reproduced, why)))


def process_pool(workers: int) -> ProcessPoolExecutor:
    """The studies' process pool, started with `spawn`. With the default `fork` a worker inherits
    the parent's threads' locks half-held: `planner study modelarts --quick` hung for good in a
    worker blocked in Pyomo's output capture (TeeStream.close joining its reader thread; seen with
    py-spy, 0 CPU for 17 min); CI's last run was in this study when it hit its limit. The sweep's
    local executor spawns for the same reason."""
    return ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"))


def experiments_path(name: str) -> Path:
    """docs/studies/<name>_experiments.json: a paper's isolating experiments as run."""
    return STUDIES_DIR / f"{name}_experiments.json"


def committed_experiments(name: str, experiments) -> list[dict] | None:
    """The committed experiments of `name`, each described by `experiments`' current text (its "what";
    the runs' figures as run); None when none were committed."""
    p = experiments_path(name)
    if not p.exists():
        return None
    what = {x["id"]: x["what"] for x in experiments}
    return [dict(x, what=what.get(x["id"], x["what"])) for x in json.loads(p.read_text())["experiments"]]


def attach_committed(name: str, module) -> dict:
    """The committed study JSON of `name` with its committed experiments attached (module.attach),
    written back."""
    p = json_path(name)
    res = module.attach(json.loads(p.read_text()), committed_experiments(name, module.EXPERIMENTS))
    p.write_text(json.dumps(res, indent=1) + "\n")
    return res


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


def metric_label(metric: str) -> str:
    """'label (unit)' of a glossary metric, else the text itself."""
    t = glossary.term(metric)
    return f"{t.label} ({t.unit})" if t else metric


def metric_value(metric: str, value) -> str:
    """`value` of a glossary metric scaled to its unit and formatted; other values as cells."""
    t = glossary.term(metric)
    if t is not None and isinstance(value, (int, float)) and not isinstance(value, bool):
        return t.show(value)
    return _cell(value)


def markdown_table(result: dict) -> str:
    """The rows of one study result as a Markdown table (the docs embed these, generated);
    glossary metrics carry their label and unit (metric_label, metric_value)."""
    head = "| claim | metric | paper | paper's setting | ours | our setting | reproduced | why |"
    lines = [head, "|" + "---|" * len(ROW_KEYS)]
    for r in result["rows"]:
        cells = {k: _cell(r[k]) for k in ROW_KEYS}
        cells["metric"] = _cell(metric_label(str(r["metric"])))
        cells["value"] = metric_value(str(r["metric"]), r["value"])
        lines.append("| " + " | ".join(cells[k] for k in ROW_KEYS) + " |")
    return "\n".join(lines)


# Isolating experiments: one change from our setting toward the paper's, the value before and after.


def closes(before: float, after: float, paper: float) -> float:
    """The share of the gap between ours (`before`) and the paper's value that one change closed
    (1: all of it; negative: it moved away from the paper)."""
    return (after - before) / (paper - before) if paper != before else 0.0


def experiment_text(e: dict) -> str:
    """One experiment as a clause: what changed, the value before and after, the gap closed.
    `e`: {"change", "before", "after", "paper", "closes", "unit" ("%", a change, the default; "x",
    a ratio; "share", a share in %; "number", a plain number such as U; "per100", a count per 100)}."""
    if e.get("unit", "%") == "x":
        nums = f"{e['after']:.2f}x (ours {e['before']:.2f}x, paper {e['paper']:g}x"
    elif e.get("unit") == "number":
        nums = f"{e['after']:.3f} (ours {e['before']:.3f}, paper {e['paper']:g}"
    elif e.get("unit") == "per100":
        nums = f"{e['after']:+.1f} per 100 (ours {e['before']:+.1f}, paper {e['paper']:+g}"
    elif e.get("unit") == "share":
        nums = f"{e['after']:.1f} % (ours {e['before']:.1f} %, paper {e['paper']:g} %"
    else:
        nums = f"{e['after']:+.1f} % (ours {e['before']:+.1f} %, paper {e['paper']:+g} %"
    return f"{e['change']}: {nums}; closes {100 * e['closes']:.0f} % of the gap)"


def explain(experiments: list[dict], mechanisms: dict | None = None) -> str:
    """The `why` of a row from its experiments: those that closed at least half of the gap explain
    it (in that share, with `mechanisms[key]` when given); the others are listed as what did not.
    Without one, "not yet explained"."""
    hit = [e for e in experiments if e["closes"] >= 0.5]
    miss = [e for e in experiments if e["closes"] < 0.5]
    mech = [(mechanisms or {}).get(e["key"], "") for e in hit]
    parts = []
    if hit:
        parts.append("explained by experiment (one change each from our setting): "
                     + "; ".join(experiment_text(e) for e in hit) + "".join(f". {m}" for m in mech if m))
    else:
        parts.append("not yet explained")
    if miss:
        parts.append(("the other changes closed less than half of the gap: " if hit else "experiments that did "
                      "not explain it (one change each, none closes half of the gap): ")
                     + "; ".join(experiment_text(e) for e in miss))
    return ". ".join(parts)
