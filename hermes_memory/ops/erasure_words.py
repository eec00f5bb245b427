"""A forget's names in a form every host can match and nobody can read back.

A store shared by several hosts (Tier 2 on a server) is forgotten from on one of them, but each host
keeps its own files: its curated MEMORY.md/USER.md, its file of what the agent saw, its turn inbox.
Every other host must find what those files say about the forgotten name, later, from the erasure's
record alone, and the record must not keep the name. So the record holds each forgotten name (and each
forgotten record's text) as the sequence of its words' keyed hashes, under a key of its own: a host
hashes the words of a line with that key and looks for one of the sequences in it. Words are runs of
letters and digits, and every other visible character is a word of its own, compared case-folded: the
same whole-word, any-case, any-spacing match a forget makes on the host that issued it.

What this does not hide: someone who holds the database and guesses a name can hash it and confirm it
was forgotten.
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

_WORD = re.compile(r"\w+|[^\w\s]")
_DIGEST_BYTES = 8


def words(text: str) -> list[str]:
    """The words a match compares: runs of letters and digits, and each other visible character."""
    return _WORD.findall(text.casefold())


@dataclass(frozen=True)
class ErasureWords:
    """The hashed word sequences of one erasure (``key`` hex, ``sequences`` of hex digests) and the
    scope it forgot whole (None: a name or records)."""

    key: str
    sequences: tuple[tuple[str, ...], ...]
    scope: str | None = None

    @classmethod
    def of(cls, texts: Iterable[str], *, scope: str | None = None) -> ErasureWords:
        """Hash ``texts`` (names, forgotten records' texts) under a new random key."""
        key = secrets.token_hex(16)
        hashed = {tuple(_hash(bytes.fromhex(key), w) for w in words(t)) for t in texts}
        return cls(key, tuple(sorted(s for s in hashed if s)), scope)

    def empty(self) -> bool:
        return not self.sequences and self.scope is None

    def matches(self, text: str) -> bool:
        """Whether ``text`` contains one of the sequences as whole words (any case, any spacing)."""
        if not self.sequences:
            return False
        key = bytes.fromhex(self.key)
        hashed = [_hash(key, w) for w in words(text)]
        firsts: dict[str, list[tuple[str, ...]]] = {}
        for seq in self.sequences:
            firsts.setdefault(seq[0], []).append(seq)
        for at, digest in enumerate(hashed):
            for seq in firsts.get(digest, ()):
                if tuple(hashed[at : at + len(seq)]) == seq:
                    return True
        return False

    def to_json(self) -> str:
        sequences = [list(s) for s in self.sequences]
        return json.dumps({"key": self.key, "sequences": sequences, "scope": self.scope})

    @classmethod
    def from_json(cls, text: str) -> ErasureWords:
        """Raises ValueError for a record that is not one."""
        data: Any = json.loads(text)
        try:
            key = str(data["key"])
            bytes.fromhex(key)
            sequences = tuple(tuple(str(d) for d in seq) for seq in data["sequences"] if seq)
            scope = data.get("scope")
        except (KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"not an erasure's hashed words: {exc}") from exc
        return cls(key, sequences, None if scope is None else str(scope))


def _hash(key: bytes, word: str) -> str:
    return hashlib.blake2b(word.encode("utf-8"), key=key, digest_size=_DIGEST_BYTES).hexdigest()


__all__ = ["ErasureWords", "words"]
