"""Trainer CSVs uploaded on the Planner: kept in the session's workspace, named `upload:<file>` in
the scenario (a link never carries a server path), resolved to the file only when a replay runs.

The format is the CLI's (planner.workload.generators.from_csv): header `id,model,submit_s,
work_samples` and optional `nmin,nmax,rup_s,rdw_s,priority,eta_node_h`.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pandas as pd

from planner.errors import InputError

PREFIX = "upload:"
FOLDER = "trainers"
MAX_BYTES = 20 * 1024 * 1024
_NAME = re.compile(r"^[A-Za-z0-9._-]{1,120}\.csv$")


def folder(ws_dir) -> Path:
    return Path(ws_dir) / FOLDER


def listed(ws_dir) -> list[str]:
    """The workspace's uploaded Trainer CSVs as workload names (upload:<file>), newest first."""
    d = folder(ws_dir)
    if not d.is_dir():
        return []
    files = sorted(d.glob("*.csv"), key=lambda p: p.stat().st_mtime, reverse=True)
    return [PREFIX + p.name for p in files]


def save(ws_dir, filename: str, data: bytes) -> tuple[str, pd.DataFrame]:
    """Check an uploaded Trainer CSV with the CLI's reader, keep it; (workload name, preview).
    InputError (one line naming the file, line and field) when it does not read."""
    from planner.workload.generators import from_csv

    if len(data) > MAX_BYTES:
        raise InputError(f"larger than {MAX_BYTES // (1024 * 1024)} MiB", file=filename)
    stem = re.sub(r"[^A-Za-z0-9._-]", "_", Path(filename).stem)[:60] or "trainers"
    name = f"{stem}-{hashlib.sha256(data).hexdigest()[:10]}.csv"
    d = folder(ws_dir)
    d.mkdir(parents=True, exist_ok=True)
    tmp = d / (name + ".part")
    tmp.write_bytes(data)
    try:
        specs = from_csv(tmp)
    except InputError as e:
        tmp.unlink(missing_ok=True)
        # the one line names the uploaded file, never the server path
        raise InputError(str(e).replace(str(tmp), filename).replace(tmp.name, filename)) from None
    if not specs:
        tmp.unlink(missing_ok=True)
        raise InputError("no Trainers (header only)", file=filename)
    tmp.replace(d / name)
    return PREFIX + name, preview(specs)


def preview(specs) -> pd.DataFrame:
    return pd.DataFrame([{"id": s.id, "model": s.model, "submit (s)": s.submit_s,
                          "work (samples)": f"{s.work_samples:,.3g}", "Nmin": s.nmin, "Nmax": s.nmax}
                         for s in specs])


def resolve(workload: str, ws_dir) -> str:
    """The file of an uploaded workload name (others unchanged); InputError when it is not there."""
    w = str(workload)
    if not w.startswith(PREFIX):
        return w
    name = w[len(PREFIX):]
    if not _NAME.match(name):
        raise InputError(f"bad uploaded workload name {name[:60]!r}", field="workload")
    p = folder(ws_dir) / name
    if not p.is_file():
        raise InputError(f"the uploaded Trainer CSV {name!r} is not in this workspace (upload it again)",
                         field="workload")
    return str(p)
