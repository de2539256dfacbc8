"""CLI subcommands, one module each, discovered by planner.cli.

A module defines NAME, HELP, `add_arguments(parser)` and `run(args) -> dict | list`.
The returned value is printed as JSON with --json, or as readable text otherwise.
"""
