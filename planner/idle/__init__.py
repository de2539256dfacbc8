"""Idle capacity of a log.

window (Window: which log, span and pool; every function below takes one), fragments (N(t),
events, idle fragments), views and job_views (the operator views), warmup
(the warm-up exclusion).
"""
