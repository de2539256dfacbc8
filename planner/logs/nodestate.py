"""Node-state event logs: `time,node,idle` (idle 1 = idle, 0 = busy), as datasets' Summit log.

The rows at the first timestamp are the opening snapshot (every node's state); every later row
is one node's state at that time. Times must not go backwards. Node order = order of first
appearance, i.e. the snapshot rows' order (BFTrainer's subset order). A node first named after
the snapshot is taken as busy until then.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from planner.logs.common import LineMap, NodeLog, factorize_stripped, fail, find_columns, numeric, times

FORMAT = "nodestate"
COLUMNS = ("time", "node", "idle")


def looks_like(head_lines: list[str]) -> bool:
    if not head_lines:
        return False
    cols = [c.strip().lower() for c in head_lines[0].split(",")]
    return all(c in cols for c in COLUMNS)


def read(path) -> NodeLog:
    path = Path(path)
    df = pd.read_csv(path, compression="infer", skipinitialspace=True)
    if len(df) == 0:
        fail("no data rows (header only)", path)
    cols = find_columns(df, {c: c for c in COLUMNS}, path)
    line_of = LineMap(path, header=True)
    t = times(df[cols["time"]], "time", path, line_of)
    idle = numeric(df[cols["idle"]], "idle", path, line_of)
    badidle = (idle != 0) & (idle != 1)
    if badidle.any():
        i = int(np.argmax(badidle))
        fail(f"idle must be 0 or 1, got {df[cols['idle']].iloc[i]!s}", path, line_of, i, "idle")
    back = np.diff(t) < 0
    if back.any():
        i = int(np.argmax(back)) + 1
        fail("time goes backwards", path, line_of, i, "time")
    codes, uniq = factorize_stripped(df[cols["node"]])
    empty = (uniq == "").to_numpy()
    if empty.any():
        i = int(np.argmax(empty[codes]))
        fail("empty node name", path, line_of, i, "node")
    return NodeLog(t_s=t, node=codes.astype(np.int64), idle=idle.astype(bool),
                   names=[str(u) for u in uniq])
