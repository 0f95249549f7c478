"""Drills graded on the server: one module per drill, registered by name (see docs/drills.md)."""
