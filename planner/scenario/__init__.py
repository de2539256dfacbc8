"""Scenarios: every knob of a replay and the run of one.

schema (each knob declared once: type, default, bounds, help), record (Scenario, run_scenario).
"""
