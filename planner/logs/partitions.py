"""Partition labels at ingest: a job log's per-job partition (or queue) and each node's home partition.

A node's home partition is the partition of the jobs that held it for the most node-time (ties:
the partition named first in the log); its idle time counts toward that partition in
planner.idle.views.by_partition. Nodes no job held have no home partition (NULL).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from planner.logs.common import JobLog


def job_labels(job: JobLog):
    """The label per job the breakdown uses: partition when the log has one, else queue (None: neither)."""
    for lab in (job.partition, job.queue):
        if lab is not None and (np.asarray(lab, dtype=object) != "").any():
            return np.asarray(lab, dtype=object)
    return None


def node_home_partition(job: JobLog, names: list[str]):
    """Per node (in `names` order) its home partition, None where no job with a label held it;
    None when the log has no labels or no node lists."""
    labels = job_labels(job)
    if labels is None or job.node_list is None:
        return None
    lens = np.fromiter((len(h) for h in job.node_list), dtype=np.int64, count=len(job.node_list))
    flat = pd.Series([h for hosts in job.node_list for h in hosts], dtype=object)
    df = pd.DataFrame({"host": flat, "part": np.repeat(labels, lens),
                       "node_s": np.repeat(job.end_s - job.start_s, lens)})
    df = df[df["part"] != ""]
    if df.empty:
        return None
    order = {p: i for i, p in enumerate(pd.unique(df["part"]))}
    agg = df.groupby(["host", "part"], sort=False)["node_s"].sum().reset_index()
    agg["first"] = agg["part"].map(order)
    agg = agg.sort_values(["host", "node_s", "first"], ascending=[True, False, True], kind="stable")
    home = agg.drop_duplicates("host").set_index("host")["part"]
    return pd.Series(names, dtype=object).map(home).astype(object).where(lambda s: s.notna(), None).to_numpy()
