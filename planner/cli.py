"""`planner`: headless commands over the library, JSON out with --json.

Exit codes: 0 ok, 2 bad input (one-line message on stderr), 1 anything unexpected.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import math
import os
import pkgutil
import sys

import planner.commands
from planner.errors import InputError
from planner.paths import os_error_text
from planner.report import glossary


def _commands():
    mods = []
    for info in sorted(pkgutil.iter_modules(planner.commands.__path__), key=lambda i: i.name):
        mods.append(importlib.import_module(f"planner.commands.{info.name}"))
    return mods


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="planner", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    for mod in _commands():
        sp = sub.add_parser(mod.NAME, help=mod.HELP, description=mod.HELP)
        mod.add_arguments(sp)
        sp.add_argument("--json", action="store_true", help="print the result as JSON")
        sp.set_defaults(_run=mod.run, _streams=getattr(mod, "STREAMS_JSON", False))
    return p


def _clean(obj):
    """JSON-safe: NaN/inf -> None, numpy scalars -> Python."""
    if isinstance(obj, dict):
        return {str(k): _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    if hasattr(obj, "item") and not isinstance(obj, (str, bytes)):
        try:
            obj = obj.item()
        except (ValueError, TypeError):
            pass
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def _human(obj, indent=0, path: str = "") -> str:
    """The result for people: a metric the glossary knows (planner.report.glossary) is printed
    with its label and unit, scaled as the app shows it ("max time per decision (ms): 12.5");
    every other key as it is in the JSON."""
    pad = "  " * indent
    if isinstance(obj, dict):
        lines = []
        for k, v in obj.items():
            key = f"{path}.{k}" if path else str(k)
            if isinstance(v, (dict, list)) and v:
                lines.append(f"{pad}{k}:")
                lines.append(_human(v, indent + 1, key))
            elif (t := glossary.term(key)) is not None and isinstance(v, (int, float)) and not isinstance(v, bool):
                lines.append(f"{pad}{t.label} ({t.unit}): {t.show(v)}")
            else:
                lines.append(f"{pad}{k}: {v}")
        return "\n".join(lines)
    if isinstance(obj, list):
        return "\n".join(_human(v, indent) if isinstance(v, dict) else f"{pad}- {v}" for v in obj)
    return f"{pad}{obj}"


@contextlib.contextmanager
def _stdout_to_stderr(enabled: bool):
    """With --json, stdout carries only the JSON: whatever a library prints while the command
    runs (a Pyomo warning, a solver's log, at Python or C level) goes to stderr instead."""
    if not enabled:
        yield
        return
    sys.stdout.flush()
    try:
        saved = os.dup(1)
    except OSError:  # no file descriptor 1 (embedded use): Python-level only
        with contextlib.redirect_stdout(sys.stderr):
            yield
        return
    try:
        # fd 1 onto stderr's file; sys.stdout stays its own object (writing to fd 1, now stderr). Not
        # redirect_stdout(sys.stderr) as well: with sys.stdout the very object sys.stderr is, Pyomo's
        # capture_output around a HiGHS solve (appsi's set_instance) never saw its reader thread end, and
        # `planner simulate --allocator horizon-milp --json` hung at the first decision
        os.dup2(2, 1)
        yield
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved, 1)
        os.close(saved)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        # a command that prints JSON lines while it runs (planner live) keeps stdout for them
        with _stdout_to_stderr(args.json and not args._streams):
            result = args._run(args)
    except InputError as e:
        print(f"planner {args.command}: error: {e}", file=sys.stderr)
        return 2
    except OSError as e:  # a path the command reads or writes: permission, space, name too long...

        print(f"planner {args.command}: error: {os_error_text(e)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    result = _clean(result)
    compact = isinstance(result, list) or args._streams  # JSON lines stay one object per line
    text = json.dumps(result, indent=None if compact else 2) if args.json else _human(result)
    try:
        print(text)
        sys.stdout.flush()
    except BrokenPipeError:  # the reader (e.g. `| head`) went away: not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
