"""Adapters that let agent frameworks read hermes-memory (each needs its framework's extra)."""

__all__: list[str] = []
