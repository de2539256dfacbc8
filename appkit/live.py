"""The Live page's Streamlit side: per-workspace settings, one poller per session and workspace, the
recording's file (the workspace's live/recording.duckdb: private to the workspace)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pandas as pd
import streamlit as st

from appkit import workspace
from planner.errors import InputError
from planner.idle import states as S
from planner.live import report

RECORDING_LOG = "live"
META_KEY = "live"


def _dir(d: Path) -> Path:
    p = Path(d) / "live"
    workspace.private_dir(p)
    return p


def recording_path(d: Path) -> Path:
    return _dir(d) / "recording.duckdb"


def settings(d: Path) -> dict:
    return dict(workspace.read_meta(d).get(META_KEY) or {})


def save_settings(d: Path, slurm_conf: str, rest: str, partitions: str, interval: int, jobs: str) -> None:
    """Validate and keep the settings in the workspace's meta (InputError naming the form field)."""
    slurm_conf, rest, partitions, jobs = (str(x or "").strip() for x in (slurm_conf, rest, partitions, jobs))
    if slurm_conf and not Path(slurm_conf).is_file():
        raise InputError(f"no such file: {slurm_conf[:200]}", field="SLURM_CONF")
    if rest and not rest.startswith(("http://", "https://", "unix:/")):
        raise InputError("expected an http://, https:// or unix:/socket URL", field="slurmrestd URL")
    if slurm_conf and rest:
        raise InputError("give SLURM_CONF or a slurmrestd URL, not both", field="slurmrestd URL")
    if any(not p.replace("-", "").replace("_", "").isalnum() for p in partitions.split(",") if p.strip()):
        raise InputError("partition names are letters, digits, '-' and '_', separated by commas",
                         field="Harvestable partitions")
    if jobs:
        f = _dir(d) / ".jobs-check.json"
        f.write_text(jobs)
        try:
            from planner.live.advisor import load_jobs

            load_jobs(f)
        except InputError as e:
            raise InputError(str(e).replace(str(f), "jobs").replace(f.name, "jobs"), field="Elastic jobs") from None
        finally:
            f.unlink(missing_ok=True)
    workspace.update_meta(d, **{META_KEY: {"slurm_conf": slurm_conf, "rest": rest, "partitions": partitions,
                                           "interval": int(interval), "jobs": jobs, "saved": True}})
    st.session_state.pop(_poller_key(d), None)


def _poller_key(d: Path) -> str:
    return f"_live_poller_{Path(d).name}"


def _poller(d: Path, cfg: dict):
    from planner.live import runner
    from planner.live.advisor import Advisor, load_jobs
    from planner.live.source import CliSource, RestSource

    sig = hashlib.sha256(json.dumps(cfg, sort_keys=True).encode()).hexdigest()
    key = _poller_key(d)
    cur = st.session_state.get(key)
    if cur is not None and cur[0] == sig:
        return cur[1]
    source = RestSource(cfg["rest"]) if cfg.get("rest") else CliSource(
        {"SLURM_CONF": cfg["slurm_conf"]} if cfg.get("slurm_conf") else None)
    advisor = None
    if cfg.get("jobs"):
        f = _dir(d) / "jobs.json"
        f.write_text(cfg["jobs"])
        jobs, opts = load_jobs(f)
        advisor = Advisor(jobs, "auto", opts)
    parts = [p.strip() for p in cfg.get("partitions", "").split(",") if p.strip()] or None
    warnings: list[str] = []
    p = runner.Poller(recording_path(d), RECORDING_LOG, source, parts, advisor, warn=warnings.append)
    p.page_warnings = warnings
    st.session_state[key] = (sig, p)
    return p


def poll_once(d: Path, cfg: dict) -> str | None:
    """One poll + decision; a one-line error text when Slurm did not answer."""
    from planner.live.source import SlurmUnreachable

    try:
        p = _poller(d, cfg)
        p.cycle()
    except SlurmUnreachable as e:
        return f"Slurm not reachable: {e}"
    except InputError as e:
        return str(e)
    return None


def recording_con(d: Path):
    """A read-only connection to the workspace's recording, or None when there is none."""
    from planner.store import db

    p = recording_path(d)
    if not p.exists():
        return None
    try:
        return db.connect(p, read_only=True)
    except InputError:
        return None


def latest(con) -> dict | None:
    return report.latest(con, RECORDING_LOG)


def partition_table(last: dict) -> pd.DataFrame:
    rows = []
    for p, v in sorted(last.get("partitions", {}).items()):
        rows.append({"partition": p, "harvestable": v.get("harvestable", 0), "nodes": v.get("nodes", 0),
                     **{S_LABEL[s]: v.get(s, 0) for s in S.STATES if s != S.IDLE},
                     "idle (all)": v.get(S.IDLE, 0), "free CPUs": v.get("free_cpus"),
                     "free GPUs": v.get("free_gpus"), "offered": "yes" if v.get("offered", True) else "no"})
    return pd.DataFrame(rows)


S_LABEL = {S.ALLOCATED: "allocated", S.DOWN: "down", S.PLANNED_DOWN: "planned down / maint.",
           S.RESERVED: "reserved", S.DRAINED: "drained"}


def series(con, hours: float = 6.0) -> dict:
    return report.partition_series(con, RECORDING_LOG, hours)


def recs(con) -> pd.DataFrame:
    return report.recommendations(con, RECORDING_LOG)


def export(d: Path, name: str) -> dict:
    name = str(name or "").strip()
    if not workspace.LOG_FILE_RE.match(name) or name.startswith("."):
        raise InputError("a log name is 1-80 letters, digits, '.', '-' or '_'", field="Log name for the recording")
    src = recording_path(d)
    if not src.exists():
        raise InputError("nothing recorded yet", field="Log name for the recording")
    dst = workspace.log_file(d, name)
    dst.parent.mkdir(parents=True, exist_ok=True)
    out = report.export_log(src, RECORDING_LOG, dst, name)
    st.cache_data.clear()
    return out
