"""Reading a large JSON document piece by piece: the import walks an export's objects and arrays and
decodes one row at a time, so memory holds one row and a read buffer, never the whole document.

Only what the walker asks for is decoded whole (``value``); ``members`` and ``items`` step through an
object or array. Standard JSON only: NaN and Infinity are refused, as are duplicate keys in a walked
object.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import IO, Any

from hermes_memory.errors import ValidationError

_CHUNK = 1 << 16
_MAX_VALUE = 64 << 20  # one decoded value (a row, the curated entries) may not exceed this
_WS = " \t\n\r"


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


_DECODER = json.JSONDecoder(parse_constant=_no_constant)


class JsonStream:
    """A cursor over the text of one JSON document read from ``fh``. Raises ValidationError (with the
    offset) for text that is not JSON or not the shape the walker expects."""

    def __init__(self, fh: IO[str], name: str):
        self._fh = fh
        self._name = name
        self._buf = ""
        self._pos = 0
        self._offset = 0  # characters consumed before _buf
        self._eof = False

    def _error(self, what: str) -> ValidationError:
        return ValidationError(
            f"export file {self._name} is not valid JSON: {what} (character {self._where()})"
        )

    def _where(self) -> int:
        return self._offset + self._pos

    def _fill(self) -> bool:
        if self._eof:
            return False
        chunk = self._fh.read(_CHUNK)
        if not chunk:
            self._eof = True
            return False
        if self._pos:
            self._offset += self._pos
            self._buf = self._buf[self._pos :]
            self._pos = 0
        self._buf += chunk
        return True

    def _peek(self) -> str:
        while True:
            while self._pos < len(self._buf) and self._buf[self._pos] in _WS:
                self._pos += 1
            if self._pos < len(self._buf):
                return self._buf[self._pos]
            if not self._fill():
                return ""

    def _take(self, char: str) -> bool:
        if self._peek() == char:
            self._pos += 1
            return True
        return False

    def expect(self, char: str) -> None:
        if not self._take(char):
            found = self._peek()
            raise self._error(
                f"expected {char!r}, found {found!r}" if found else f"expected {char!r}, found the end"
            )

    def value(self) -> Any:
        """Decode the next complete value."""
        self._peek()
        while True:
            try:
                found, end = _DECODER.raw_decode(self._buf, self._pos)
            except ValueError as exc:
                if len(self._buf) - self._pos > _MAX_VALUE:
                    raise self._error(f"a value longer than {_MAX_VALUE} characters") from exc
                if self._fill():
                    continue
                raise self._error(str(exc).split(":")[0]) from exc
            # A number that ends with the buffer may go on in the next chunk.
            if end == len(self._buf) and not self._eof and self._fill():
                continue
            self._pos = end
            return found

    def members(self) -> Iterator[str]:
        """The keys of the object that starts here; the caller reads or skips each member's value."""
        self.expect("{")
        seen: set[str] = set()
        if self._take("}"):
            return
        while True:
            if self._peek() != '"':
                raise self._error("expected a key")
            key = self.value()
            if key in seen:
                raise self._error(f"duplicate key {key!r}")
            seen.add(key)
            self.expect(":")
            yield key
            if self._take("}"):
                return
            self.expect(",")

    def items(self) -> Iterator[None]:
        """One step per element of the array that starts here; the caller reads each element."""
        self.expect("[")
        if self._take("]"):
            return
        while True:
            yield None
            if self._take("]"):
                return
            self.expect(",")

    def at(self, char: str) -> bool:
        """Whether the next value starts with ``char``."""
        return self._peek() == char

    def end(self) -> None:
        if self._peek():
            raise self._error("text after the document")


__all__ = ["JsonStream"]
