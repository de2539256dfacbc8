"""`planner fit-curve`: fit Optimus' speed model to a few measured points (planner.workload.fitcurve)."""

from __future__ import annotations

import json

from planner.errors import InputError
from planner.workload.fitcurve import MAX_NODES, fit_file

NAME = "fit-curve"
HELP = "fit Optimus' speed model 1/O(n) = a/n + b + c*n (NNLS) to measured (nodes, samples/s) points"


def add_arguments(p):
    p.add_argument("file", help="CSV with columns nodes,samples_per_s (or JSON {nodes, samples_per_s})")
    p.add_argument("--nodes", default=None,
                   help="node counts to print the curve at, comma-separated (default: the measured ones "
                        "and powers of two up to twice the largest)")
    p.add_argument("--out", default=None,
                   help="write the fitted curve as JSON {\"curve\": {nodes, samples_per_s}}, the form an "
                        "instance file's Trainer takes")


def run(args):
    at = None
    if args.nodes:
        try:
            at = [int(x) for x in args.nodes.split(",") if x.strip()]
        except ValueError:
            raise InputError("a comma-separated list of whole numbers", field="nodes") from None
        if not at or any(n < 0 or n > MAX_NODES for n in at):
            raise InputError(f"node counts in 0..{MAX_NODES}", field="nodes")
    res = fit_file(args.file, at)
    if args.out:
        try:
            with open(args.out, "w") as fh:
                json.dump({"curve": res["curve"]}, fh, indent=1)
        except OSError as e:
            raise InputError(f"cannot write: {e.strerror or e}", file=args.out) from None
        res["written"] = args.out
    return res
