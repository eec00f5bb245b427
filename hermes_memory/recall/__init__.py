"""Cross-tier recall: candidate generation, fusion and rendering within a token budget."""

__all__: list[str] = []
