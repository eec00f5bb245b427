"""Durable renames: after ``os.replace`` the directory entry itself must reach the disk."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def fsync_dir(directory: Path) -> None:
    """fsync ``directory`` so a rename inside it survives a power loss. Raises OSError."""
    if sys.platform == "win32":
        return  # directories cannot be opened for fsync on Windows
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


__all__ = ["fsync_dir"]
