"""Where things live: the project root, shipped datasets, the default database."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATASETS = ROOT / "datasets"
SCALING_DIR = DATASETS / "scaling"
SUMMIT_LOG = DATASETS / "summit-2021-node_idle_transitions.csv.gz"
PHILLY_LOG = DATASETS / "philly_jobs.csv.gz"
IMAGENET_SCALING = SCALING_DIR / "imagenet_summit_samples_per_sec.csv"
EXAMPLES = ROOT / "examples"

# The default database: $PLANNER_DB, else data/planner.duckdb under the project.
DATA_DIR = Path(os.environ.get("PLANNER_DATA_DIR", ROOT / "data"))


def default_db() -> Path:
    env = os.environ.get("PLANNER_DB")
    return Path(env) if env else DATA_DIR / "planner.duckdb"
