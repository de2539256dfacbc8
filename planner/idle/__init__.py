"""Idle capacity of a log.

fragments (N(t), events, idle fragments), views and job_views (the operator views), warmup
(the warm-up exclusion).
"""
