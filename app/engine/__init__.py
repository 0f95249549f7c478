"""The simulated hardware and workloads: pure Python and pydantic, no web, no database."""
