"""Reporting: glossary holds the label, unit, scale and better/worse of every headline metric (CLI, studies and app)."""
