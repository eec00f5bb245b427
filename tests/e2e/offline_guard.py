"""Keep a process on loopback: refuse (and record) every non-loopback connect and DNS lookup.

``install()`` patches the socket module; imported via ``guard_site/sitecustomize.py`` (on PYTHONPATH)
it guards every Python subprocess too. Refusals are kept in ``REFUSED`` and, when the environment
variable ``E2E_GUARD_LOG`` names a file, appended there (one ``kind<TAB>host`` line each), so the test
that started the processes can assert nothing tried to leave the machine.
"""

from __future__ import annotations

import ipaddress
import os
import socket
from typing import Any

REFUSED: list[tuple[str, str]] = []
_LOOPBACK_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost", ""}
_installed: list[bool] = []


def is_loopback(host: Any) -> bool:
    if host is None:
        return True
    if isinstance(host, bytes):
        host = host.decode(errors="replace")
    name = str(host).strip("[]").lower()
    if name in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name.split("%")[0]).is_loopback
    except ValueError:
        return False


def _refuse(kind: str, host: Any) -> None:
    entry = (kind, str(host))
    REFUSED.append(entry)
    log = os.environ.get("E2E_GUARD_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as fh:
            fh.write(f"{kind}\t{host}\n")


def install() -> None:
    """Patch socket.connect/connect_ex/getaddrinfo/create_connection (idempotent)."""
    if _installed:
        return
    _installed.append(True)
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex
    real_getaddrinfo = socket.getaddrinfo

    def check(sock: socket.socket, address: Any) -> None:
        if sock.family in (socket.AF_INET, socket.AF_INET6) and not is_loopback(address[0]):
            _refuse("connect", address[0])
            raise ConnectionRefusedError(f"offline guard: refused connection to {address[0]!r}")

    def connect(self: socket.socket, address: Any) -> None:
        check(self, address)
        real_connect(self, address)

    def connect_ex(self: socket.socket, address: Any) -> int:
        check(self, address)
        return real_connect_ex(self, address)

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if not is_loopback(host):
            _refuse("dns", host)
            raise socket.gaierror(socket.EAI_NONAME, f"offline guard: refused DNS lookup of {host!r}")
        return real_getaddrinfo(host, *args, **kwargs)

    socket.socket.connect = connect
    socket.socket.connect_ex = connect_ex
    socket.getaddrinfo = getaddrinfo


def read_log(path: str | os.PathLike[str]) -> list[tuple[str, str]]:
    """The refusals recorded in a guard log file (empty when the file does not exist)."""
    try:
        with open(path, encoding="utf-8") as fh:
            return [tuple(line.rstrip("\n").split("\t", 1)) for line in fh if line.strip()]
    except FileNotFoundError:
        return []
