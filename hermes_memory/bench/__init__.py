"""Benchmarks that ship with the package (``python -m hermes_memory.bench.locomo``)."""
