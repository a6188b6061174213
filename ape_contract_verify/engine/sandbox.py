"""The bounds every compiler process runs in: memory, CPU time, how many at once, and its parent's life.

A submission is code from anyone; its compile must not grow without bound, spin forever, outnumber
the CPUs, or outlive the explorer that started it (a SIGKILLed server leaves no compiler behind).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import math
import os
import resource
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from ape_contract_verify.exceptions import ContractVerifyError

MEMORY_ENV = "APE_VERIFY_COMPILE_MEMORY_MB"
CPU_ENV = "APE_VERIFY_COMPILE_CPU_SECONDS"
CONCURRENCY_ENV = "APE_VERIFY_MAX_COMPILES"
# An OpenZeppelin Governor needs about 300 MB in solc-js; vyper far less.
DEFAULT_MEMORY_MB = 2048
# Beyond the wall-clock timeout: the kernel stops a compile even when nobody is left to.
CPU_MARGIN_SECONDS = 10

_PR_SET_PDEATHSIG = 1


class CompileLimitError(ContractVerifyError):
    """A bound set through the environment is not usable; `str()` names the variable and the fix."""


@dataclass(frozen=True)
class Limits:
    memory_mb: int
    cpu_seconds: int


def _positive_int(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    if not raw.isascii() or not raw.isdigit() or int(raw) < 1:
        raise CompileLimitError(
            f"{name}={raw!r} is not a whole number above 0; set it to e.g. {default or 1}, or unset it"
        )
    return int(raw)


def limits_for(timeout: float) -> Limits:
    """The bounds of one compile that may run `timeout` seconds of wall-clock time."""
    cpu = max(1, math.ceil(timeout)) + CPU_MARGIN_SECONDS
    return Limits(memory_mb=_positive_int(MEMORY_ENV, DEFAULT_MEMORY_MB), cpu_seconds=_positive_int(CPU_ENV, cpu))


def _load_prctl() -> Callable[..., int] | None:
    # Resolved here, in the parent: the child between fork and exec must not load libraries.
    if not os.uname().sysname == "Linux":
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return libc.prctl
    except (OSError, AttributeError):
        return None


_prctl = _load_prctl()


def preexec(limits: Limits) -> Callable[[], None]:
    """What the child runs before exec: its rlimits, and SIGKILL when the server dies."""
    parent = os.getpid()
    memory = limits.memory_mb * 1024 * 1024
    # RLIMIT_DATA, not RLIMIT_AS: V8 reserves ~10 GB of address space for a WebAssembly memory up
    # front (solc-js is wasm), so an AS limit either breaks every solc-js or bounds nothing; DATA
    # counts what a process writes to, wasm memory as it grows included.

    def run() -> None:
        resource.setrlimit(resource.RLIMIT_DATA, (memory, memory))
        # SIGXCPU at the soft limit, SIGKILL at the hard one should SIGXCPU be ignored.
        resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds + 5))
        if _prctl is not None:
            _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            if os.getppid() != parent:  # the server died before prctl took effect
                os._exit(1)

    return run


_slots_lock = threading.Lock()
_slots: threading.BoundedSemaphore | None = None
_slot_count = 0


def max_compiles() -> int:
    """At most one compile per CPU this process may use (each solc-js is ~200 MB), or $APE_VERIFY_MAX_COMPILES."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return _positive_int(CONCURRENCY_ENV, max(1, cpus))


@contextmanager
def compile_slot() -> Iterator[None]:
    """Hold one of the process-wide compile slots; waits while all are taken.

    Each holder is bounded by its compile's timeout, so the wait is bounded too."""
    global _slots, _slot_count
    count = max_compiles()
    with _slots_lock:
        if _slots is None or count != _slot_count:
            _slots, _slot_count = threading.BoundedSemaphore(count), count
        slots = _slots
    with slots:
        yield


def cpu_reason(returncode: int, limits: Limits) -> str | None:
    """The words for a compiler the CPU bound stopped (SIGXCPU); None for any other end."""
    if returncode != -signal.SIGXCPU:
        return None
    return (
        f"used more than its {limits.cpu_seconds} s of CPU time and was stopped "
        f"(the explorer's bound; raise {CPU_ENV} if the contract needs more)"
    )


_MEMORY_MARKERS = (
    "out of memory",
    "bad_alloc",
    "memoryerror",
    "cannot allocate",
    "allocation failed",
    "could not allocate",
)


def memory_line(stderr: str) -> str | None:
    """The line of a failed compiler's stderr that says it could not get memory, if one does."""
    for line in stderr.splitlines():
        if any(marker in line.lower() for marker in _MEMORY_MARKERS):
            return line.strip().lstrip("#").strip()[:200]
    return None


def memory_hint(limits: Limits) -> str:
    return (
        f"it ran out of memory at the explorer's bound of {limits.memory_mb} MB per compile "
        f"(raise {MEMORY_ENV} if the contract needs more)"
    )
