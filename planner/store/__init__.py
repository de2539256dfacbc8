"""The store: the DuckDB database of loaded logs.

db (the connection, the schema, window queries), catalog (which log a command means, the shipped default).
"""
