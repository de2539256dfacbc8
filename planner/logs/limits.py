"""Limits on what one input may hold or cost (beyond them it is broken or hostile input).

One place for every bound of the log readers; the CLI exposes MAX_INPUT_BYTES as
`planner ingest --max-bytes` and the app uses it for uploads. Every limit is enforced while
reading (decompressed bytes are counted as they stream, host lists are counted before they are
expanded), so a small file cannot take the machine's memory before it is refused.
"""

from __future__ import annotations

# Decompressed bytes of one input file (plain or gzip). The 851,590-row Summit log is 26 MB;
# a 5 GB node-state log still streams in bounded memory, so the default is generous.
MAX_INPUT_BYTES = 8 * 1024**3
# Bytes read per chunk while streaming an input (memory per chunk is a small multiple of this).
CHUNK_BYTES = 32 * 1024**2
# Largest machine (the largest machines have ~160,000 nodes).
MAX_MACHINE_NODES = 1_000_000
# Longest log, node or job name; longest host list text.
MAX_NAME_CHARS = 1024
# Names one host list may stand for (counted before expanding).
MAX_HOSTS_PER_LIST = MAX_MACHINE_NODES
# Expanded host entries over all jobs of one log: 10 million is e.g. 1 million jobs of 10 nodes.
MAX_TOTAL_HOSTS = 10_000_000
# Node state changes (after dropping repeats) of one node log: the arrays built from them must
# stay well under 2 GiB (the Summit log has 0.85 million).
MAX_EVENTS = 20_000_000
# Jobs kept from one job log (after skipping steps, zero runs...): the arrays built from them
# must stay well under 2 GiB (the largest Parallel Workloads Archive logs hold ~1 million).
MAX_JOBS = 5_000_000
# The first bytes read for format detection; how far detection looks past a long header.
HEAD_BYTES = 65536
HEAD_SCAN_BYTES = 64 * 1024**2
# Longest line of any input (a longer one is refused while reading: no log has such lines).
MAX_LINE_BYTES = 16 * 1024**2


def parse_bytes(text: str) -> int:
    """'500M', '2G', '1.5GiB', '123' -> bytes (binary units); ValueError on anything else."""
    s = str(text).strip().upper().removesuffix("IB").removesuffix("B")
    mult = {"K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4}.get(s[-1:], 1)
    num = s[:-1] if s[-1:] in "KMGT" and s[-1:] else s
    v = float(num)  # ValueError on text
    if not (v > 0 and v * mult < 2**63):
        raise ValueError(f"not a positive size: {text!r}")
    return int(v * mult)
