"""Benchmarks that ship with the package (``python -m hermes_memory.bench.locomo``)."""

__all__: list[str] = []
