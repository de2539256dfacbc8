"""Shared pieces of the paper studies: one result row, verdicts, the committed JSON and its table."""

from __future__ import annotations

import json
import multiprocessing
import re
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from planner.paths import ROOT
from planner.report import glossary
from planner.studies import module

VERDICTS = ("yes", "partly", "no")
ROW_KEYS = ("claim", "metric", "paper_value", "paper_setting", "value", "setting", "reproduced", "why")
# a row may also carry the experiments that isolate its gap (issue 22), one change each from the
# row's setting, in explain()'s shape: [{"key", "change" (text), "unit", "before", "after", "paper",
# "closes", ...details}, ...]; every study stores them there (rows[i]["experiments"]), and its `why`
# is regenerated from them without replaying (rewhy, `planner study NAME --rewhy`)
OPTIONAL_ROW_KEYS = ("experiments", "kind")
# "kind": "calibration" marks a row that checks a fitted setting (e.g. ModelArts' arrival span fitted to
# the paper's queue), not a reproduced headline: shown as such and not counted (docs.verdict_counts)
CALIBRATION = "calibration"


def verdict_label(r: dict) -> str:
    """A row's verdict as the tables show it: yes / partly / no, or "calibration (holds: ...)" for a
    calibration row (the docs' tables and the Papers page)."""
    return f"{CALIBRATION} (holds: {r['reproduced']})" if r.get("kind") == CALIBRATION else str(r["reproduced"])
EXPERIMENT_KEYS = ("key", "change", "unit", "before", "after", "paper", "closes")
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
    return dict(zip(ROW_KEYS, (claim, metric, paper_value, paper_setting, value, setting, reproduced,
                               capitalize_sentences(why))))


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


def rewhy(name: str, write: bool = True) -> dict:
    """Every row's `why` of the committed study `name` regenerated from what its JSON stores (and
    docs/studies/<name>_experiments.json, where a study keeps its experiments' runs apart), replaying
    nothing: the study module's `rewhy(result)` puts each row's experiments on the row
    (rows[i]["experiments"]) and writes its why (explain); every why's sentences start with a
    capital letter. Written back unless `write` is False. `planner study NAME --rewhy` runs it and
    then regenerates the docs' tables."""
    p = json_path(name)
    res = module(name).rewhy(json.loads(p.read_text()))
    res.pop("experiments", None)  # the old top-level shape: the rows carry them now
    for r in res["rows"]:
        r["why"] = capitalize_sentences(r["why"])
    if write:
        p.write_text(json.dumps(res, indent=1) + "\n")
    return res


def json_path(name: str) -> Path:
    return STUDIES_DIR / f"{name}.json"


def load(name: str) -> dict | None:
    """The committed full run of study `name`, or None when none is committed."""
    p = json_path(name)
    return json.loads(p.read_text()) if p.exists() else None


def value_text(v) -> str:
    """A study value as text (the docs' tables and the Papers page): floats to 3 significant digits below
    1,000, whole numbers with thousands separators (1,337,720 beside a paper's 1,030,000), text as it is."""
    if isinstance(v, float):
        return f"{v:,.3g}" if abs(v) < 1000 else f"{v:,.0f}"
    if isinstance(v, int) and not isinstance(v, bool):
        return f"{v:,}"
    return "-" if v is None else str(v)


def _cell(v) -> str:
    """value_text as a Markdown table cell."""
    return value_text(v).replace("|", "\\|").replace("\n", " ")


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


WHY_CHARS = 240  # a table cell's share of a row's "why" (the Papers page, the docs); the whole text follows


def short_why(text: str, more: str) -> str:
    """The start of a row's "why" for a table cell: whole up to WHY_CHARS, else cut at the last sentence
    or clause end before that, followed by `more` (where the whole text is)."""
    if len(text) <= WHY_CHARS:
        return text
    head = text[:WHY_CHARS]
    cut = max(head.rfind(". "), head.rfind("; "), head.rfind(": "))
    return (head[:cut] if cut > 60 else head.rsplit(" ", 1)[0]) + more


def why_anchor(name: str, i: int) -> str:
    """The docs' anchor of study `name`'s row i (from 1): its reason in full (markdown_reasons)."""
    return f"{name}-why-{i}"


def row_heading(i: int, r: dict) -> str:
    """'5. claim — verdict (paper P, ours V)': a row's reason's heading (the Papers page, the docs)."""
    return f"{i}. {r['claim']} — {verdict_label(r)} (paper {_cell(r['paper_value'])}, ours {_cell(r['value'])})"


def markdown_table(result: dict, name: str | None = None) -> str:
    """The rows of one study result as a Markdown table (the docs embed these, generated);
    glossary metrics carry their label and unit (metric_label, metric_value). With the study's `name`
    a long why is cut (short_why) with a link to its row's reason in full (markdown_reasons)."""
    head = "| claim | metric | paper | paper's setting | ours | our setting | reproduced | why |"
    lines = [head, "|" + "---|" * len(ROW_KEYS)]
    for i, r in enumerate(result["rows"], 1):
        cells = {k: _cell(r[k]) for k in ROW_KEYS}
        cells["metric"] = _cell(metric_label(str(r["metric"])))
        cells["value"] = metric_value(str(r["metric"]), r["value"])
        cells["reproduced"] = verdict_label(r)
        if name:
            cells["why"] = _cell(short_why(r["why"], f" ... ([in full](#{why_anchor(name, i)}))"))
        lines.append("| " + " | ".join(cells[k] for k in ROW_KEYS) + " |")
    return "\n".join(lines)


def markdown_reasons(name: str, result: dict) -> str:
    """Every row's reason in full, one section per row (its anchor: why_anchor): its one-change experiments
    as a table, most closing first (experiment_rows), then the why in paragraphs (why_paragraphs)."""
    out = []
    for i, r in enumerate(result["rows"], 1):
        part = [f'<a id="{why_anchor(name, i)}"></a>**{_cell(row_heading(i, r))}**']
        table = experiment_rows(r)
        if table:
            part.append(experiments_summary(r))
            keys = list(table[0])
            part.append("\n".join(["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
                                  + ["| " + " | ".join(_cell(t[k]) for k in keys) + " |" for t in table]))
        part += why_paragraphs(r["why"])
        out.append("\n\n".join(part))
    return "\n\n".join(out)


# Isolating experiments: one change from our setting toward the paper's, the value before and after.


def closes(before: float, after: float, paper: float) -> float:
    """The share of the gap between ours (`before`) and the paper's value that one change closed
    (1: all of it; negative: it moved away from the paper)."""
    return (after - before) / (paper - before) if paper != before else 0.0


# an experiment's "unit": how its before, after and paper values are written (value format, paper's
# format, suffix): "%" a change (the default), "x" a ratio, "share" a share in %, "number" a plain
# number such as U, "per100" a count per 100, "h" hours
_UNIT_FORMATS = {"%": ("+.1f", "+g", " %"), "x": (".2f", "g", "x"), "share": (".1f", "g", " %"),
                 "number": (".3f", "g", ""), "per100": ("+.1f", "+g", " per 100"), "h": (".2f", "g", " h")}


def experiment_values(e: dict, unit: bool = True) -> tuple[str, str, str]:
    """An experiment's (before, after, paper) values as text, in its unit (_UNIT_FORMATS; `unit` False:
    the numbers alone)."""
    value, paper, suffix = _UNIT_FORMATS.get(e.get("unit", "%"), _UNIT_FORMATS["%"])
    suffix = suffix if unit else ""
    return f"{e['before']:{value}}{suffix}", f"{e['after']:{value}}{suffix}", f"{e['paper']:{paper}}{suffix}"


def experiment_move(e: dict) -> str:
    """'ours -> after (paper P) unit' in one cell: '+1.0 → +12.0 (paper +17.4) per 100'; a unit that is
    a suffix ("x") on every number: '0.72x → 0.89x (paper 2.39x)'."""
    suffix = _UNIT_FORMATS.get(e.get("unit", "%"), _UNIT_FORMATS["%"])[2]
    before, after, paper = experiment_values(e, unit=not suffix.startswith(" "))
    return f"{before} → {after} (paper {paper})" + (suffix if suffix.startswith(" ") else "")


def experiment_text(e: dict) -> str:
    """One experiment as a clause: what changed, the value before and after, the gap closed.
    `e`: {"change", "before", "after", "paper", "closes", "unit" (_UNIT_FORMATS)}."""
    before, after, paper = experiment_values(e)
    if e.get("unit") == "per100":  # the count's unit once, after the value
        before, paper = before.removesuffix(" per 100"), paper.removesuffix(" per 100")
    return f"{e['change']}: {after} (ours {before}, paper {paper}; closes {100 * e['closes']:.0f} % of the gap)"


# A change explains a gap when our value lands within half the original gap of the paper's value:
# it closes between EXPLAINS[0] and EXPLAINS[1] of the gap (50 % to 150 %). Past EXPLAINS[1] it moved
# our value far beyond the paper's: it shows the direction, not the cause of the gap's size.
EXPLAINS = (0.5, 1.5)


def verdict_of(e: dict) -> str:
    """"explains" (closes 50-150 % of the gap), "past" (over 150 %: the direction, not the size) or
    "miss" (under 50 %, or away from the paper's value) for one experiment (its "closes")."""
    c = e["closes"]
    return "explains" if EXPLAINS[0] <= c <= EXPLAINS[1] else ("past" if c > EXPLAINS[1] else "miss")


# the shares of a gap that one change must close to explain it, in words: "50-150 %"
EXPLAINS_TEXT = f"{100 * EXPLAINS[0]:.0f}-{100 * EXPLAINS[1]:.0f} %"
# how one experiment reads against its gap (verdict_of, or fitted), in words: the Papers page's tables
READINGS = {"explains": f"explains ({EXPLAINS_TEXT})",
            "past": f"past the paper (> {100 * EXPLAINS[1]:.0f} %)",
            "miss": f"under half (< {100 * EXPLAINS[0]:.0f} %)", "fitted": "fitted to the figure"}


def reading_of(e: dict) -> str:
    """"fitted" for an experiment fitted to the row's own figure (it explains nothing), else verdict_of."""
    return "fitted" if e.get("fitted") else verdict_of(e)


def ranked_experiments(row: dict) -> list[dict]:
    """A row's experiments, the one that closes most of the gap first (the Papers page numbers them so)."""
    return sorted(row.get("experiments") or [], key=lambda e: -e["closes"])


def experiment_rows(row: dict) -> list[dict]:
    """A row's experiments as table rows (ranked_experiments' order): #, the share of the gap closed (%),
    how it reads (READINGS), ours before and after it beside the paper's value (experiment_move), and the
    one change (the long text last)."""
    return [{"#": i, "closes (% of the gap)": round(100 * e["closes"]), "reading": READINGS[reading_of(e)],
             "ours → after the change": experiment_move(e), "one change from our setting": e["change"]}
            for i, e in enumerate(ranked_experiments(row), 1)]


def experiments_summary(row: dict) -> str:
    """One sentence on a row's experiments: how many, and how many explain its gap, move past the
    paper's value, were fitted or do not explain it ("" without experiments)."""
    es = row.get("experiments") or []
    if not es:
        return ""
    n = {k: sum(reading_of(e) == k for e in es) for k in READINGS}
    parts = [f"{n['explains']} explain{'s' if n['explains'] == 1 else ''} the gap (close {EXPLAINS_TEXT} of it)",
             f"{n['past']} move{'s' if n['past'] == 1 else ''} past the paper's value"]
    if n["fitted"]:
        parts.append(f"{n['fitted']} fitted to this figure (no explanation)")
    parts.append(f"{n['miss']} close{'s' if n['miss'] == 1 else ''} less than half of it")
    return (f"{len(es)} one-change experiment{'s' if len(es) > 1 else ''}: " + ", ".join(parts[:-1])
            + " and " + parts[-1] + ".")


# the sentences that start a part of a why (explain's parts, the verdict's rule, the measured mechanism):
# the Papers page and docs/papers.md start a paragraph at each (why_paragraphs)
WHY_PARTS = ("Verdict:", "Rule:", "Explained by experiment", "Not yet explained", "Fitted to this figure",
             "Moves past the paper's value", "The other changes", "Experiments that did not", "Measured",
             "Mechanism", "Sensitivity", "Not one change", "Quick setting", "In the quick setting", "Each experiment")
_WHY_PART = re.compile(r"(?<=[.)]) (?=(?:" + "|".join(re.escape(w) for w in WHY_PARTS) + r"))")


def why_paragraphs(text: str) -> list[str]:
    """A row's why cut into paragraphs, each starting at a sentence that opens one of WHY_PARTS; the
    text itself unchanged (" ".join gives it back)."""
    return [t for t in _WHY_PART.split(text) if t]


# abbreviations after which ". " does not end a sentence (capitalize_sentences)
_ABBREV = ("Sec", "Fig", "Tab", "Eq", "e.g", "i.e", "vs", "cf", "approx", "et al", "No", "resp")
_SENTENCE = re.compile(r"(^|[.!?]\)?\s+|^)([a-z])")


def capitalize_sentences(text: str, first: bool = True) -> str:
    """`text` with the first letter of every sentence capitalised: after ". ", "! " or "? " (also
    after a closing parenthesis), not after an abbreviation such as "Sec." or "e.g.", and at its
    start unless `first` is False (a clause that its caller puts inside a sentence)."""
    def up(m):
        before = text[:m.start()]
        if not m.group(1) and not first:
            return m.group(0)
        if m.group(1) and any(before.endswith(" " + a) or before.endswith("(" + a) or before == a
                              for a in _ABBREV):
            return m.group(0)
        return m.group(1) + m.group(2).upper()

    return _SENTENCE.sub(up, text)


def explain(experiments: list[dict], mechanisms: dict | None = None) -> str:
    """The `why` of a row from its experiments (one change each from our setting), by EXPLAINS:
    those that closed 50-150 % of the gap explain it (with `mechanisms[key]` when given); those that
    closed more moved our value past the paper's and are listed apart (the direction, not the size);
    the rest as what did not explain it. Without an explaining one, "not yet explained". An
    experiment marked "fitted" (its change was fitted to the row's own figure) explains nothing,
    whatever it closes (a quantity fitted to a figure cannot explain that figure): it is listed apart
    as "fitted to this figure; not an explanation". Every sentence but the first starts with a capital
    letter; the first does where it starts the why (row, rewhy), not where a caller puts it after a
    clause."""
    group = {"explains": [], "past": [], "miss": []}
    fitted = [e for e in experiments if e.get("fitted")]
    for e in experiments:
        if not e.get("fitted"):
            group[verdict_of(e)].append(e)
    hit, past, miss = group["explains"], group["past"], group["miss"]

    def mech(es):
        return "".join(f". {m}" for m in ((mechanisms or {}).get(e.get("key"), "") for e in es) if m)

    parts = []
    if hit:
        parts.append("explained by experiment (one change each from our setting): "
                     + "; ".join(experiment_text(e) for e in hit) + mech(hit))
    else:
        parts.append("not yet explained")
    if fitted:
        parts.append("fitted to this figure; not an explanation: " + "; ".join(experiment_text(e) for e in fitted)
                     + mech(fitted))
    if past:
        parts.append("moves past the paper's value (closes over 150 % of the gap: the direction, not the size): "
                     + "; ".join(experiment_text(e) for e in past) + mech(past))
    if miss:
        parts.append(("the other changes closed less than half of the gap: " if hit or past or fitted else
                      "experiments that did not explain it (one change each, none closes half of the gap): ")
                     + "; ".join(experiment_text(e) for e in miss))
    return capitalize_sentences(". ".join(parts), first=False)
