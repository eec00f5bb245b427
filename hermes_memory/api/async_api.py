"""AsyncMemoryAPI: every public method of MemoryAPI as a coroutine, generated from MemoryAPI itself.

No method is written twice: when the class is created, each public method of the sync class (whatever
it holds then, so a method added to MemoryAPI gets its twin with no edit here) becomes an ``async def``
with the same name, signature and docstring (``functools.wraps``: ``inspect.signature`` and
``typing.get_type_hints`` read the sync method's) that runs the sync call and returns its result.

Where the call runs: on one worker thread that belongs to the instance. Its calls therefore run one at a
time and in the order they were awaited, as they would in a synchronous program — the stores' locks and
SQLite connections see the same access as from one sync caller, while the event loop never blocks on a
database, a vector search or an embedder. Tasks may await several calls at once; a cancelled await
stops a call that has not started, while one already running finishes in the worker (its result is
dropped). Callbacks passed in (``progress``) are called on the worker thread. After ``close`` the
worker is let go; later calls (``wait_closed``, or whatever the closed sync API answers) run on a
short-lived thread of their own. Static methods (``restore``) have no instance and run on their own
thread too.

Typing (mypy strict): the generated twins are not visible to a type checker, so the class declares
``__getattr__`` for it only, returning ``Callable[..., Awaitable[Any]]`` (arguments unchecked, result
``Any``). ``call(MemoryAPI.recall, ...)`` is the fully typed way: its arguments are checked against the
sync method (``ParamSpec``) and the result keeps the sync method's type.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import inspect
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, Self, TypeVar

from hermes_memory.api.memory_api import MemoryAPI
from hermes_memory.errors import ValidationError

P = ParamSpec("P")
R = TypeVar("R")

# After these calls return, the instance's stores are closed and its worker thread is let go.
_CLOSING = frozenset({"close"})


def _public_methods(sync_class: type) -> dict[str, Any]:
    """The public methods of ``sync_class`` (its ancestors' included) by name, as stored on the class:
    plain functions, staticmethods and classmethods; properties and other attributes are not methods."""
    found: dict[str, Any] = {}
    for name in dir(sync_class):
        if name.startswith("_"):
            continue
        member = inspect.getattr_static(sync_class, name)
        if inspect.isfunction(member) or isinstance(member, (staticmethod, classmethod)):
            found[name] = member
    return found


def _instance_twin(name: str, method: Callable[..., Any]) -> Callable[..., Awaitable[Any]]:
    @functools.wraps(method)
    async def twin(self: AsyncMemoryAPI, *args: Any, **kwargs: Any) -> Any:
        # Looked up on the wrapped object at call time: a MemoryAPI subclass's override is the one run.
        bound = getattr(self._api, name)
        result = await self._submit(functools.partial(bound, *args, **kwargs))
        if name in _CLOSING:
            self._release_worker()
        return result

    return twin


def _class_twin(target: Callable[..., Any]) -> Callable[..., Awaitable[Any]]:
    # ``target`` is the static function or the bound classmethod: no instance, so no worker of one.
    @functools.wraps(target)
    async def twin(*args: Any, **kwargs: Any) -> Any:
        return await _in_thread(None, functools.partial(target, *args, **kwargs))

    return twin


async def _in_thread(executor: ThreadPoolExecutor | None, call: Callable[[], R]) -> R:
    """``call()`` on ``executor`` (None: a thread of the loop's default pool), with the caller's
    context variables, as ``asyncio.to_thread`` does."""
    loop = asyncio.get_running_loop()
    context = contextvars.copy_context()
    return await loop.run_in_executor(executor, functools.partial(context.run, call))


class _AsyncTwins:
    """Base that gives a subclass, when it is created, an async twin of every public method of the sync
    class named by ``of`` (a method the subclass defines itself is kept)."""

    _sync_class: type[MemoryAPI] = MemoryAPI

    def __init_subclass__(cls, *, of: type[MemoryAPI] | None = None, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if of is None:
            of = cls._sync_class  # a subclass without ``of``: its parent's sync class
        cls._sync_class = of
        for name, member in _public_methods(of).items():
            if name in cls.__dict__:
                continue
            if isinstance(member, (staticmethod, classmethod)):
                twin: Any = staticmethod(_class_twin(getattr(of, name)))
            else:
                twin = _instance_twin(name, member)
            twin_fn = twin.__func__ if isinstance(twin, staticmethod) else twin
            twin_fn.__qualname__ = f"{cls.__qualname__}.{name}"
            twin_fn.__module__ = cls.__module__
            setattr(cls, name, twin)


class AsyncMemoryAPI(_AsyncTwins, of=MemoryAPI):
    """MemoryAPI for asyncio code: ``await amem.recall("...")`` for every MemoryAPI method.

    ``AsyncMemoryAPI(api)`` wraps an open MemoryAPI (closing this closes it);
    ``await AsyncMemoryAPI.open(...)`` opens one (MemoryAPI's arguments) on the worker thread, so the
    event loop does not wait for the database to open and migrate. ``async with`` closes it.
    Raises ValidationError when ``api`` is not a MemoryAPI.
    """

    def __init__(self, api: MemoryAPI) -> None:
        if not isinstance(api, MemoryAPI):
            raise ValidationError(f"AsyncMemoryAPI wraps a MemoryAPI, got {type(api).__name__}")
        self._api = api
        self._executor: ThreadPoolExecutor | None = _worker()

    @classmethod
    async def open(cls, *args: Any, **kwargs: Any) -> Self:
        """Open a MemoryAPI (same arguments; its errors propagate: ConfigError, StorageError) on a new
        worker thread and return it wrapped; that thread then runs every call."""
        executor = _worker()
        try:
            api = await _in_thread(executor, functools.partial(cls._sync_class, *args, **kwargs))
        except BaseException:
            executor.shutdown(wait=False)
            raise
        self = cls.__new__(cls)
        self._api, self._executor = api, executor
        return self

    @property
    def api(self) -> MemoryAPI:
        """The wrapped sync API (its properties: ``config``, ``scope``, ``tier2``, ``core``). Calling it
        directly from the event loop blocks the loop; ``call`` runs a function of it on the worker."""
        return self._api

    async def call(
        self, method: Callable[Concatenate[MemoryAPI, P], R], /, *args: P.args, **kwargs: P.kwargs
    ) -> R:
        """``method(api, *args, **kwargs)`` on the worker thread, typed: ``await amem.call(MemoryAPI.recall,
        "where?", limit=5)`` is checked like ``api.recall("where?", limit=5)`` and returns its type."""
        return await self._submit(functools.partial(method, self._api, *args, **kwargs))

    async def _submit(self, call: Callable[[], R]) -> R:
        return await _in_thread(self._executor, call)

    def _release_worker(self) -> None:
        executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=False)  # calls already queued still run, in order

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    if TYPE_CHECKING:
        # The generated twins, as a type checker sees them (see the module docstring).
        def __getattr__(self, name: str) -> Callable[..., Awaitable[Any]]: ...


def _worker() -> ThreadPoolExecutor:
    # One thread: the calls of one instance run in order, as a sync caller's would. It ends with the
    # instance (an executor dropped without shutdown lets its idle thread exit) or after ``close``.
    return ThreadPoolExecutor(max_workers=1, thread_name_prefix="hermes-memory-async")


def _open_signature() -> inspect.Signature:
    # ``open(cls, <MemoryAPI's parameters>)``: what ``inspect.signature`` shows for ``AsyncMemoryAPI.open``.
    init = inspect.signature(MemoryAPI.__init__)
    params = list(init.parameters.values())
    return init.replace(parameters=[params[0].replace(name="cls"), *params[1:]], return_annotation="Self")


AsyncMemoryAPI.open.__func__.__signature__ = _open_signature()  # type: ignore[attr-defined]


__all__ = ["AsyncMemoryAPI"]
