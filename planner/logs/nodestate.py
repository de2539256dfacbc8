"""Node-state event logs: `time,node,idle` (idle 1 = idle, 0 = busy), as datasets' Summit log,
or `time,node,state` with a state word per row (planner.idle.states: allocated, idle, down,
planned_down / maint, reserved, drained, and Slurm's state names such as MIXED, DRAIN, MAINT).
A state log keeps its states (the idle split reads them); only `idle` counts as idle.

The rows at the first timestamp are the opening snapshot (every node's state); every later row
is one node's state at that time. Times must not go backwards. Node order = order of first
appearance, i.e. the snapshot rows' order (BFTrainer's subset order). A node first named after
the snapshot is taken as busy until then.

Streamed: the file is parsed in chunks and reduced to real state changes as it goes (a row
repeating its node's state is dropped), so memory follows the number of changes, not the file
size. The rows of the last timestamp of a chunk wait for the next chunk (several rows for one
node at one time: the last wins, wherever the chunk boundary falls).
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np
import pandas as pd

from planner.idle import states as node_states
from planner.logs import limits
from planner.logs.common import (
    UNSAFE_TEXT,
    LineMap,
    NodeLog,
    check_text,
    factorize_stripped,
    fail,
    find_columns,
    numeric,
    offset_lines,
    times,
)
from planner.logs.store import changes_only
from planner.logs.stream import csv_chunks, open_input

FORMAT = "nodestate"
COLUMNS = ("time", "node", "idle")
STATE_COLUMNS = ("time", "node", "state")
MAX_ROWS_AT_ONE_TIME = 2 * limits.MAX_MACHINE_NODES  # a snapshot names each node about once


def header_fields(line: str) -> list[str]:
    """The column names of a CSV header line (quotes removed, lower case)."""
    try:
        row = next(csv.reader([line.lstrip("\ufeff")], skipinitialspace=True), [])
    except csv.Error:
        row = line.split(",")
    return [c.strip().lower() for c in row]


def looks_like(head_lines: list[str]) -> bool:
    if not head_lines:
        return False
    cols = header_fields(head_lines[0])
    return all(c in cols for c in COLUMNS) or all(c in cols for c in STATE_COLUMNS)


def _node_column(path, max_bytes) -> str:
    """The header's name of the node column (as pandas will name it)."""
    with open_input(path, max_bytes) as raw:
        head = pd.read_csv(io.TextIOWrapper(raw, encoding="utf-8-sig", newline=""), nrows=0,
                           skipinitialspace=True)
    return find_columns(head, {"node": "node"}, path)["node"]


class _Reducer:
    """Change-only node events, fed batches of complete timestamps in time order
    (planner.logs.store.changes_only, incrementally). States are codes (int8): 0/1 for an idle
    column (busy/idle), planner.idle.states codes for a state column (0 allocated, 1 idle)."""

    def __init__(self):
        self.t0 = None
        self.state = np.zeros(0, dtype=np.int8)  # per node: state after the rows so far
        self.at_t0 = np.zeros(0, dtype=bool)  # per node: named in the opening snapshot
        self.snap = np.zeros(0, dtype=np.int8)  # per node: state in the opening snapshot
        self.out_t, self.out_n, self.out_i = [], [], []
        self.kept = 0

    def _grow(self, n_nodes: int):
        if n_nodes > len(self.state):
            add = n_nodes - len(self.state)
            self.state = np.r_[self.state, np.zeros(add, np.int8)]
            self.at_t0 = np.r_[self.at_t0, np.zeros(add, bool)]
            self.snap = np.r_[self.snap, np.zeros(add, np.int8)]

    def feed(self, t, node, idle, n_nodes: int):
        self._grow(n_nodes)
        if len(t) == 0:
            return
        if self.t0 is None:
            self.t0 = float(t[0])
        o = np.argsort(node, kind="stable")
        tn, nn, inn = t[o], node[o], idle[o]
        last = np.ones(len(tn), dtype=bool)
        last[:-1] = (nn[1:] != nn[:-1]) | (tn[1:] != tn[:-1])
        at0 = last & (tn <= self.t0)
        self.state[nn[at0]] = inn[at0]
        self.snap[nn[at0]] = inn[at0]
        self.at_t0[nn[at0]] = True
        sel = np.flatnonzero(last & (tn > self.t0))
        ns, is_ = nn[sel], inn[sel]
        prev = np.empty(len(sel), dtype=np.int8)
        if len(sel):
            first = np.ones(len(sel), dtype=bool)
            first[1:] = ns[1:] != ns[:-1]
            prev[1:] = is_[:-1]
            prev[first] = self.state[ns[first]]
            lastn = np.r_[ns[1:] != ns[:-1], True]
            self.state[ns[lastn]] = is_[lastn]
        keep = np.sort(o[sel[is_ != prev]])
        self.kept += len(keep)
        if self.kept > limits.MAX_EVENTS:
            raise OverflowError
        self.out_t.append(t[keep])
        self.out_n.append(node[keep].astype(np.int32))
        self.out_i.append(idle[keep])

    def state_at_t0(self, n_nodes: int):
        """Every node's state in the opening snapshot (nodes not in it: busy until first named)."""
        self._grow(n_nodes)
        return self.snap.copy()


def read(path, max_bytes: int | None = None, chunk_rows: int | None = None) -> NodeLog:
    path = Path(path)
    line_of = LineMap(path, header=True)
    index: dict[str, int] = {}
    red = _Reducer()
    snap = None  # node states at t0
    pend = None  # rows of the newest timestamp, waiting for the next chunk
    cols, rows, last_t = None, 0, -np.inf
    with_states = False
    # the node column as text: names `1`, `01` and `1e3` stay distinct (no per-chunk inference)
    for off, df in csv_chunks(path, max_bytes=max_bytes, chunk_rows=chunk_rows, skipinitialspace=True,
                              dtype={_node_column(path, max_bytes): str}, keep_default_na=False):
        if cols is None:
            lower = {str(c).lstrip("\ufeff").strip().lower() for c in df.columns}
            with_states = "state" in lower and "idle" not in lower
            cols = find_columns(df, {c: c for c in (STATE_COLUMNS if with_states else COLUMNS)}, path)
        if len(df) == 0:
            continue
        lm = offset_lines(line_of, off)
        t = times(df[cols["time"]], "time", path, lm)
        if with_states:
            idle = _state_codes(df[cols["state"]], path, lm)
        else:
            idle = numeric(df[cols["idle"]], "idle", path, lm)
            bad = (idle != 0) & (idle != 1)
            if bad.any():
                i = int(np.argmax(bad))
                fail(f"idle must be 0 or 1, got {df[cols['idle']].iloc[i]!s}", path, lm, i, "idle")
        back = np.diff(np.r_[last_t, t]) < 0
        if back.any():
            fail("time goes backwards", path, lm, int(np.argmax(back)), "time")
        codes, uniq = factorize_stripped(df[cols["node"]])
        empty = (uniq == "").to_numpy()
        if empty.any():
            fail("empty node name", path, lm, int(np.argmax(empty[codes])), "node")
        bad = uniq.str.contains("\n", regex=False) | uniq.str.contains(UNSAFE_TEXT.pattern, regex=True)
        if bad.any():
            check_text(df[cols["node"]], "node", path, lm)
        glob = np.fromiter((index.setdefault(u, len(index)) for u in uniq), dtype=np.int64, count=len(uniq))
        if len(index) > limits.MAX_MACHINE_NODES:
            fail(f"more than {limits.MAX_MACHINE_NODES:,} distinct node names", path, lm, len(df) - 1, "node")
        node = glob[codes]
        rows += len(df)
        last_t = float(t[-1])
        if pend is not None:
            t, node, idle = (np.concatenate([a, b]) for a, b in zip(pend, (t, node, idle)))
        cut = int(np.searchsorted(t, t[-1], side="left"))  # rows of the newest time wait
        if len(t) - cut > MAX_ROWS_AT_ONE_TIME:
            fail(f"more than {MAX_ROWS_AT_ONE_TIME:,} rows at one time", path, lm, len(df) - 1, "time")
        try:
            red.feed(t[:cut], node[:cut], idle[:cut].astype(np.int8), len(index))
        except OverflowError:
            fail(f"more than {limits.MAX_EVENTS:,} node state changes (the event limit)", path, lm,
                 len(df) - 1)
        pend = (t[cut:], node[cut:], idle[cut:])
    if cols is None or rows == 0:
        fail("no data rows (header only)", path)
    try:
        red.feed(pend[0], pend[1], pend[2].astype(np.int8), len(index))
    except OverflowError:
        fail(f"more than {limits.MAX_EVENTS:,} node state changes (the event limit)", path)
    n_nodes = len(index)
    snap = red.state_at_t0(n_nodes)
    t0 = red.t0
    ev_t = np.concatenate([np.full(n_nodes, t0)] + red.out_t)
    ev_n = np.concatenate([np.arange(n_nodes, dtype=np.int32)] + red.out_n)
    ev_i = np.concatenate([snap] + red.out_i)
    late = int(n_nodes - red.at_t0.sum())
    if not with_states:
        return NodeLog(t_s=ev_t, node=ev_n, idle=ev_i.astype(bool), names=list(index), rows=rows, reduced=True,
                       end_s=last_t, late=late)
    # the state changes stay (node_states); the idle events are the changes of idle-or-not
    is_idle = ev_i == node_states.CODE[node_states.IDLE]
    it, inode, iidle = changes_only(ev_t, ev_n, is_idle, t0, n_nodes)
    return NodeLog(t_s=it, node=inode.astype(np.int32), idle=iidle, names=list(index), rows=rows, reduced=True,
                   end_s=last_t, late=late, states=(ev_t, ev_n, ev_i))


def _state_codes(col, path, lm) -> np.ndarray:
    """A state column as planner.idle.states codes; an unknown word fails at its line."""
    words = col.astype("str")
    uniq = words.unique()
    code = {}
    for w in uniq:
        s = node_states.state_of(w)
        if s is None:
            i = int(np.argmax((words == w).to_numpy()))
            fail(f"unknown node state {str(w)[:40]!r} (use one of {', '.join(node_states.STATES)}, or a "
                 "Slurm state name)", path, lm, i, "state")
        code[w] = node_states.CODE[s]
    return words.map(code).to_numpy(dtype=np.int8)
