"""Child processes whose wall time and peak RSS are the bench's measurements (``wait4`` gives the
child's own peak resident set, including what it held while exiting)."""

from __future__ import annotations

import os
import signal
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import hermes_memory


@dataclass(frozen=True)
class Finished:
    returncode: int
    stdout: str
    stderr: str
    wall_s: float
    peak_rss_mb: float  # the child's maximum resident set size (ru_maxrss of wait4)


def run_measured(
    argv: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    timeout: float | None = None,
    pass_stderr: bool = False,
) -> Finished:
    """Run ``argv`` (stdin from /dev/null) and return its output, wall time and peak RSS. The child
    imports the same hermes_memory as this process (see ``child_env``). With ``pass_stderr`` its
    stderr goes to ours as it is written (progress of long runs) and ``Finished.stderr`` is empty.

    Raises TimeoutError (after killing the child) when it runs longer than ``timeout`` seconds, and
    FileNotFoundError when the program does not exist.
    """
    program = argv[0] if os.sep in argv[0] else _which(argv[0])
    with tempfile.TemporaryDirectory(prefix="hm-perf-") as tmp:
        out_path, err_path = Path(tmp) / "out", Path(tmp) / "err"
        out_fd = os.open(out_path, os.O_WRONLY | os.O_CREAT, 0o600)
        err_fd = os.open(err_path, os.O_WRONLY | os.O_CREAT, 0o600)
        null_fd = os.open(os.devnull, os.O_RDONLY)
        actions = [(os.POSIX_SPAWN_DUP2, null_fd, 0), (os.POSIX_SPAWN_DUP2, out_fd, 1)]
        if not pass_stderr:
            actions.append((os.POSIX_SPAWN_DUP2, err_fd, 2))
        old_cwd = os.getcwd()
        try:
            if cwd is not None:
                os.chdir(cwd)  # posix_spawn has no cwd argument; the child inherits ours
            started = time.monotonic()
            pid = os.posix_spawn(program, list(argv), child_env(env), file_actions=actions)
        finally:
            os.chdir(old_cwd)
            for fd in (out_fd, err_fd, null_fd):
                os.close(fd)
        deadline = None if timeout is None else started + timeout
        while True:
            waited, status, usage = os.wait4(pid, os.WNOHANG)
            if waited == pid:
                break
            if deadline is not None and time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                os.wait4(pid, 0)
                raise TimeoutError(f"{' '.join(argv)[:200]} ran longer than {timeout} s")
            time.sleep(0.005)
        wall = time.monotonic() - started
        return Finished(
            returncode=os.waitstatus_to_exitcode(status),
            stdout=out_path.read_text(encoding="utf-8", errors="replace"),
            stderr=err_path.read_text(encoding="utf-8", errors="replace"),
            wall_s=wall,
            peak_rss_mb=usage.ru_maxrss / 1024,
        )


def child_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """``env`` (default: ours) with the folder this hermes_memory was imported from first on
    PYTHONPATH, so a child (a phase, ``hermes``, ``hermes-memory``) measures this very code."""
    out = dict(os.environ if env is None else env)
    root = str(Path(hermes_memory.__file__).resolve().parents[1])
    rest = [p for p in out.get("PYTHONPATH", "").split(os.pathsep) if p and p != root]
    out["PYTHONPATH"] = os.pathsep.join([root, *rest])
    return out


def _which(name: str) -> str:
    for folder in [str(Path(sys.executable).parent), *os.environ.get("PATH", "").split(os.pathsep)]:
        candidate = Path(folder) / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    raise FileNotFoundError(f"{name} is not on PATH")


def proc_status_mb(field: str, pid: int | str = "self") -> float:
    """A memory field of /proc/<pid>/status (VmRSS, VmHWM...) in MB. Raises KeyError when absent."""
    for line in Path(f"/proc/{pid}/status").read_text(encoding="utf-8").splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise KeyError(f"{field} is not in /proc/{pid}/status")


def thread_cpu_ns(native_id: int) -> int:
    """Nanoseconds a thread of this process has run on a CPU (first field of its schedstat)."""
    return int(Path(f"/proc/self/task/{native_id}/schedstat").read_text(encoding="utf-8").split()[0])
