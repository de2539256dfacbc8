"""The Logs page's upload form and load report, without Streamlit.

preview_lines  the first lines of a stored upload (plain or gzip, bounded read)
csv_columns    a CSV upload's own header, for the column choices
guess_mapping  a first choice of the job CSV columns from the header's names
csv_mapping    the form's choices -> the mapping dict of planner.logs.csvjobs (time options included)
form_error     an InputError's text with CLI field names replaced by the form's labels (Markdown-inert)
md             user-given text made inert for Streamlit's Markdown (no links, images, HTML)
report_view    a load report as readable lines: loaded, skipped by reason, warnings
"""

from __future__ import annotations

import csv
import gzip
import io
import re
from collections.abc import Mapping
from pathlib import Path

PREVIEW_BYTES = 64 * 1024
# decompressed bytes the page's format guess may read (in its worker, appkit.jobs.job_probe; the
# load itself reads up to planner.logs.limits.HEAD_SCAN_BYTES): a few ms whatever the file holds
DETECT_SCAN_BYTES = 4 * 2**20
# the budget of the worker that reads the preview and guesses the format (appkit.jobs.job_probe)
PROBE_MEM_MB = 1024
PROBE_TIME_S = 60.0
NO_PROBE = {"lines": [], "detected": None, "note": None}  # what the page shows when the probe failed
TIME_MODES = {"ISO text or epoch seconds": {}, "epoch milliseconds": {"time_unit": "ms"},
              "seconds from an origin": {}, "milliseconds from an origin": {"time_unit": "ms"}}
# CLI option / reader field -> the label of the form field that sets it
FORM_LABELS = {"time-origin": "Time origin", "time_origin": "Time origin", "time-unit": "Time columns",
               "time_unit": "Time columns", "machine-nodes": "Machine nodes", "format": "Format",
               "name": "Log name", "workspace": "Workspace", "start": "Start column", "end": "End column",
               "nodes": "Nodes column", "partition": "Partition column"}


def preview_lines(path: Path, max_lines: int = 12) -> list[str]:
    """Up to max_lines first lines (each cut at 300 characters), reading at most 64 KiB."""
    path = Path(path)
    with open(path, "rb") as fh:
        magic = fh.read(2)
    opener = gzip.open if magic == b"\x1f\x8b" else open
    try:
        with opener(path, "rb") as fh:
            raw = fh.read(PREVIEW_BYTES)
    except (OSError, EOFError):
        return []
    text = raw.decode("utf-8", errors="replace")
    lines = text.splitlines()
    if len(raw) == PREVIEW_BYTES and lines:
        lines = lines[:-1]  # the last one may be cut
    return [ln[:300] for ln in lines[:max_lines]]


def csv_columns(lines: list[str]) -> list[str]:
    """The header's column names ([] when the first line does not look like a CSV header)."""
    if not lines or "," not in lines[0]:
        return []
    row = next(csv.reader(io.StringIO(lines[0].lstrip("\ufeff"))), [])
    return [c.strip() for c in row if c.strip()][:200]


_GUESS = {"start": (r"^(start|begin)", r"start|begin"), "end": (r"^end", r"end|finish|stop"),
          "duration": (r"^(duration|run_?time|elapsed)$", r"duration|runtime"),
          "nodes": (r"^(nodes|num_?nodes|n_?nodes|gpus?|num_?gpus?|plan_?gpu)$", r"node|gpu"),
          "node_list": (r"^(node_?list|nodelist|hosts?)$", r"nodelist|node_list|host"),
          "submit": (r"^submit", r"submit|queue|create"), "job_id": (r"^(job_?id|job|id)$", r"job"),
          "partition": (r"^(partition|queue|queue_?name|vc|virtual_?cluster)$", r"partition")}


def guess_mapping(columns: list[str]) -> dict[str, str]:
    """{key: column} from the names (exact-ish matches of every key first, then substrings, so a
    column named e.g. `queue` is the partition, not a loosely matched submit time); "" when none fits."""
    out: dict[str, str] = {}
    used: set[str] = set()
    for which in (0, 1):
        for key, pats in _GUESS.items():
            if out.get(key):
                continue
            hit = next((c for c in columns if c not in used and re.search(pats[which], c.lower())), None)
            if hit:
                out[key] = hit
                used.add(hit)
    out = {key: out.get(key, "") for key in _GUESS}
    if out["nodes"] and out["node_list"] == out["nodes"]:
        out["node_list"] = ""
    return out


def csv_mapping(choices: Mapping[str, str], time_mode: str, origin: str, skip_incomplete: bool) -> dict:
    """The reader's mapping: chosen columns (empty ones left out) plus the time options."""
    m = {k: v for k, v in choices.items() if v}
    m.update(TIME_MODES.get(time_mode, {}))
    if "origin" in time_mode:
        m["time_origin"] = (origin or "").strip() or "missing"
    if skip_incomplete:
        m["skip_incomplete"] = "1"
    return m


_MD_SPECIAL = re.compile(r"([\\`\[\]<>$!*~|])")


def show_upload_limit(key: str, text: str) -> None:
    """The file uploader `key` states `text` (e.g. "500 MiB per file") instead of Streamlit's own size
    line, which rounds any limit above 500 MB up to "1GB" (its client, whatever server.maxUploadSize
    says). Style only, constant but for `text` (the app's own limit, never user input)."""
    import streamlit as st

    if not re.fullmatch(r"[\w ,.;:()/-]+", text):
        raise ValueError(f"not a plain limit text: {text!r}")
    sel = f".st-key-{key} [data-testid='stFileUploaderDropzoneInstructions'] span"
    st.html(f"<style>{sel} {{font-size: 0}} {sel}::after {{content: '{text}'; font-size: 0.875rem}}</style>")


def md(text) -> str:
    """User-given text (a file name, a value quoted in an error) made inert for Streamlit's
    Markdown: link, image and HTML brackets, code ticks, LaTeX dollars and emphasis are
    backslash-escaped, so `![x](https://...)` shows as text and the browser fetches nothing."""
    return _MD_SPECIAL.sub(r"\\\1", str(text))


def code_parts(text: str) -> list[str] | None:
    """`text` split at its backticks, the odd items code spans (`dp`), the even ones text around them;
    None when the ticks are unpaired (no code span to draw)."""
    parts = str(text).split("`")
    return parts if len(parts) % 2 else None


def md_code(text) -> str:
    """The project's own text that marks code with backticks (a study's reason, a policy's rule) for
    Markdown: each `code` span drawn as code, the rest inert (md). Unpaired ticks: all of it inert."""
    parts = code_parts(str(text))
    if parts is None:
        return md(text)
    return "".join(md(t) if i % 2 == 0 else f"`{t}`" for i, t in enumerate(parts))


def form_error(message: str) -> str:
    """'field 'time-origin'' -> 'field 'Time origin'' (the form's words, not the CLI's), as
    Markdown-inert text (md)."""
    def sub(m):
        return f"field '{FORM_LABELS.get(m.group(1), m.group(1))}'"
    text = re.sub(r"field '([^']+)'", sub, str(message))
    return md(text.replace("--time-origin", "Time origin").replace("--machine-nodes", "Machine nodes"))


def report_view(rep: Mapping) -> dict:
    """{"headline": str, "skipped": [str], "warnings": [str], "details": dict (no server paths)}."""
    head = (f"Loaded **{md(rep.get('log'))}**: {int(rep.get('rows', 0)):,} "
            f"{'jobs' if rep.get('kind') == 'jobs' else 'rows'} on {int(rep.get('nodes', 0)):,} nodes "
            f"(machine size from {rep.get('machine_nodes_from', '?')}), {rep.get('start')} to {rep.get('end')} "
            f"({float(rep.get('span_h', 0)):,.1f} h).")
    skipped = [f"{n:,} rows skipped: {why}" for why, n in (rep.get("skipped_why") or {}).items() if n]
    if rep.get("skipped") and not skipped:
        skipped = [f"{int(rep['skipped']):,} rows skipped"]
    warnings = [md(n) for n in (rep.get("notes") or [])]
    over = rep.get("oversubscription") or {}
    if over.get("oversub_intervals"):
        warnings.append(f"busy nodes exceeded the machine by up to {int(over.get('oversub_max_nodes', 0)):,} "
                        f"for {float(over.get('oversub_s', 0)):,.0f} s in {int(over['oversub_intervals']):,} "
                        "interval(s) (idle capacity is counted as 0 there)")
    wu = rep.get("warmup") or {}
    if wu.get("detected"):
        warnings.append(f"the first {float(wu['hours']):,.1f} h look like a warm-up (the log starts with the machine "
                        f"filling up): {100 * float(wu['idle_share_during']):.0f} % idle against "
                        f"{100 * float(wu['idle_share_after']):.0f} % after; every page leaves it out of "
                        "harvestable capacity")
    if rep.get("already_loaded"):
        warnings.append("this file was loaded before: the earlier load's report is shown")
    details = {k: v for k, v in rep.items() if k not in ("source",)}
    return {"headline": head, "skipped": skipped, "warnings": warnings, "details": details}


def drop_staged(staged: dict | None) -> None:
    """Delete a staged upload's server copy (after its load, or when the user drops the file)."""
    if staged and staged.get("path"):
        Path(staged["path"]).unlink(missing_ok=True)
