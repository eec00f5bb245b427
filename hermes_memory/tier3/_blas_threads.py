"""Cap numpy's OpenBLAS threads while our forward passes run, then give the host its setting back.

OpenBLAS (what numpy's wheels bundle) keeps ONE thread count per process: its
``openblas_set_num_threads_local`` is not thread-local in the pthreads build (measured: a worker
thread setting it changed what the main thread read). So there is no per-call limit; the closest
thing is to lower the count only while at least one forward pass is running and restore the host's
value when the last one ends. Another thread's BLAS call in that window runs on fewer threads (slower,
never wrong). With two OpenBLAS threads a query took 1.6x as long as with one under contention.

When numpy's BLAS is not OpenBLAS (MKL, Accelerate, a distro build without the symbols) the cap
is a no-op and ``BlasThreadCap.active`` says so.
"""

from __future__ import annotations

import ctypes
import functools
import importlib
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

# Symbol names by build: numpy's wheels (scipy-openblas, ILP64), scipy-openblas LP64, plain OpenBLAS.
_SETTERS = ("scipy_openblas_set_num_threads64_", "scipy_openblas_set_num_threads", "openblas_set_num_threads")
_GETTERS = ("scipy_openblas_get_num_threads64_", "scipy_openblas_get_num_threads", "openblas_get_num_threads")


def _openblas() -> tuple[Callable[[int], None], Callable[[], int]] | None:
    # dlsym on numpy's extension module searches the libraries it links, i.e. its BLAS.
    for module_name in ("numpy._core._multiarray_umath", "numpy.core._multiarray_umath"):
        try:
            lib = ctypes.CDLL(importlib.import_module(module_name).__file__)
            break
        except (ImportError, OSError, TypeError):  # TypeError: a module without __file__
            continue
    else:
        return None
    for set_name, get_name in zip(_SETTERS, _GETTERS, strict=True):
        setter = getattr(lib, set_name, None)
        getter = getattr(lib, get_name, None)
        if setter is not None and getter is not None:
            setter.argtypes = [ctypes.c_int]
            setter.restype = None
            getter.argtypes = []
            getter.restype = ctypes.c_int
            return setter, getter
    return None


class BlasThreadCap:
    """Reference-counted cap on OpenBLAS threads for the duration of ``with cap.limit(n):`` blocks.

    One per process (``blas_thread_cap()``): overlapping blocks from several threads lower the count to
    the smallest cap asked for and the host's own value comes back when the last block ends.
    """

    def __init__(self) -> None:
        self._api = _openblas()
        self._lock = threading.Lock()
        self._running = 0
        self._saved = 0

    @property
    def active(self) -> bool:
        """True when numpy's BLAS is an OpenBLAS whose thread count this can set."""
        return self._api is not None

    def current(self) -> int | None:
        """OpenBLAS's thread count now, or None when it cannot be read."""
        return None if self._api is None else self._api[1]()

    @contextmanager
    def limit(self, threads: int) -> Iterator[None]:
        """Run the block with at most ``threads`` BLAS threads."""
        if self._api is None:
            yield
            return
        setter, getter = self._api
        with self._lock:
            now = getter()
            if self._running == 0:
                self._saved = now
            if now > threads:
                setter(threads)
            self._running += 1
        try:
            yield
        finally:
            with self._lock:
                self._running -= 1
                if self._running == 0 and getter() != self._saved:
                    setter(self._saved)


@functools.cache
def blas_thread_cap() -> BlasThreadCap:
    """The process's one cap (built on first use: looking up the BLAS is not done at import)."""
    return BlasThreadCap()


__all__ = ["BlasThreadCap", "blas_thread_cap"]
