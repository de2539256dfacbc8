"""Rewrite the docs' study tables from the committed runs: `python -m planner.studies.docs [--check]`.

Every table that reports a paper study is generated from docs/studies/NAME.json (written by
`planner study NAME --json --out docs/studies/NAME.json`, never edited by hand) and sits in a doc
between two markers:

    <!-- study:NAME:PART:begin -->  ...generated...  <!-- study:NAME:PART:end -->

PART is `table` (the headline rows: claim, paper, ours, verdict, why; planner.studies.common.
markdown_table), `readme` (one line per paper for README.md, NAME `all`), `detail` (the study
module's own `detail_markdown(result)`, e.g. BFTrainer's tables by T_fwd) or `experiments` (the
module's `experiments_markdown` of docs/studies/NAME_experiments.json: the isolating experiments). A block whose JSON is
not committed says so. `--check` exits 1 (naming the files) when a doc differs from what the
JSON gives, which is what tests/unit/test_study_docs.py asserts, so a table cannot drift from
its run.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from planner.paths import ROOT
from planner.studies import STUDIES, module
from planner.studies.common import CALIBRATION, json_path, load, markdown_reasons, markdown_table, reading_of

DOCS = ("README.md", "docs/papers.md", "docs/simulator.md", "docs/horizon.md")
BLOCK = re.compile(r"(<!-- study:([a-z0-9-]+):([a-z]+):begin -->\n)(.*?)(<!-- study:\2:\3:end -->)", re.S)
TITLES = {"bftrainer": "BFTrainer", "modelarts": "ModelArts", "ibm": "IBM", "optimus": "Optimus", "elan": "Elan"}


def _missing(name: str) -> str:
    return (f"_No full run of `{name}` is committed yet: `planner study {name} --json --out "
            f"docs/studies/{name}.json` writes it._")


def verdict_counts(result: dict) -> dict:
    """The headlines' verdicts counted; rows of kind "calibration" (a fitted setting checked, not a
    headline) apart, under "calibration"."""
    out = {"yes": 0, "partly": 0, "no": 0, "calibration": 0}
    for r in result.get("rows", []):
        k = CALIBRATION if r.get("kind") == CALIBRATION else r["reproduced"]
        out[k] = out.get(k, 0) + 1
    return out


def explained_gaps(result: dict) -> tuple[int, int]:
    """(explained, gaps): the headlines not reproduced (partly or no) and how many of them a one-change
    experiment explains (one that closes 50-150 % of the gap, not fitted to the figure: common.reading_of)."""
    gaps = [r for r in result.get("rows", []) if r.get("kind") != CALIBRATION and r["reproduced"] != "yes"]
    return sum(any(reading_of(e) == "explains" for e in r.get("experiments") or []) for r in gaps), len(gaps)


def gaps_note(result: dict) -> str:
    """'; 1 of 6 gaps explained by a one-change experiment' after a study's verdict counts ('' without gaps)."""
    explained, gaps = explained_gaps(result)
    return f"; {explained} of {gaps} gap{'s' if gaps > 1 else ''} explained by a one-change experiment" if gaps else ""


def calibrations_note(c: dict) -> str:
    """' (N calibration rows not counted)' after a study's verdict counts, or ''."""
    n = c.get(CALIBRATION, 0)
    return f" ({n} calibration row{'s' if n > 1 else ''} not counted)" if n else ""


def table_block(name: str, result: dict | None) -> str:
    if result is None:
        return _missing(name)
    c = verdict_counts(result)
    head = (f"_From [docs/studies/{name}.json](studies/{name}.json) (`planner study {name} --json`"
            + (", quick run" if result.get("quick") else "")
            + ("; cut: " + result["cut"] if result.get("cut") else "")
            + (f", {result['wall_s']:.0f} s on 2 shared cores" if result.get("wall_s") else "")
            + f"): {c['yes']} reproduced, {c['partly']} partly, {c['no']} not{calibrations_note(c)}"
            + f"{gaps_note(result)}._")
    rule = f"\n\nPolicy: {result['rule']}." if result.get("rule") else ""
    return (head + rule + "\n\n" + markdown_table(result, name) + "\n\n#### Why, row by row\n\n"
            + markdown_reasons(name, result))


def readme_block(results: dict) -> str:
    lines = []
    for name in STUDIES:
        r = results.get(name)
        if r is None:
            lines.append(f"- **{TITLES[name]}**: no full run committed yet (`planner study {name}`).")
            continue
        c = verdict_counts(r)
        lines.append(f"- **{TITLES[name]}** ([docs/papers.md](docs/papers.md#{name}), "
                     f"[docs/studies/{name}.json](docs/studies/{name}.json)): "
                     f"{c['yes'] + c['partly'] + c['no']} headlines: "
                     f"{c['yes']} reproduced, {c['partly']} partly, {c['no']} not{calibrations_note(c)}"
                     f"{gaps_note(r)}.")
    return "\n".join(lines)


def detail_block(name: str, result: dict | None) -> str:
    if result is None:
        return _missing(name)
    fn = getattr(module(name), "detail_markdown", None)
    return fn(result) if fn else markdown_table(result)


def experiments_block(name: str) -> str:
    """The study's isolating experiments (docs/studies/NAME_experiments.json) as its module's table."""
    mod = module(name)
    exps = mod.committed_experiments() if hasattr(mod, "committed_experiments") else None
    if not exps:
        return (f"_No experiments of `{name}` are committed yet: `python scripts/{name}_experiments.py` "
                "runs them._")
    return mod.experiments_markdown(exps)


def render(text: str, results: dict) -> str:
    def sub(m):
        name, part = m.group(2), m.group(3)
        if name == "all" and part == "readme":
            body = readme_block(results)
        elif name not in STUDIES:
            return m.group(0)
        elif part == "table":
            body = table_block(name, results.get(name))
        elif part == "detail":
            body = detail_block(name, results.get(name))
        elif part == "experiments":
            body = experiments_block(name)
        else:
            return m.group(0)
        return m.group(1) + body.rstrip("\n") + "\n" + m.group(5)

    return BLOCK.sub(sub, text)


def results() -> dict:
    return {n: load(n) for n in STUDIES if json_path(n).exists()}


def expected(root: Path = ROOT) -> dict[str, tuple[str, str]]:
    """{doc: (current text, generated text)} for every doc with study blocks."""
    res = results()
    out = {}
    for rel in DOCS:
        p = root / rel
        if p.exists():
            cur = p.read_text()
            out[rel] = (cur, render(cur, res))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 when a doc differs from its JSON; write nothing")
    a = ap.parse_args(argv)
    stale = []
    for rel, (cur, new) in expected().items():
        if cur != new:
            stale.append(rel)
            if not a.check:
                (ROOT / rel).write_text(new)
    if a.check and stale:
        print("stale study tables (run python -m planner.studies.docs): " + ", ".join(stale), file=sys.stderr)
        return 1
    print(("rewrote " if stale else "up to date: ") + (", ".join(stale) if stale else ", ".join(DOCS)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
