"""When the plugin's own threads may call into Ape's project, dependency and compiler managers.

Ape's managers are not thread-safe: a dependency installed on one thread is copied half-written
by a compile on another (`contracts/.cache` then lacks files until deleted by hand). While a
user's script runs, only the script calls into them. The deploy hook resolves what a deployment
needs on the script's own thread, at the deploy; a worker that needs Ape anyway waits here until
the script waits for the plugin (a network's queue being drained) or has ended, and the script
resumes only once every worker is out again. One plugin thread at a time is inside, too.

With no script running (the CLI, `ape verify serve`, a test) the gate is open and only serialises.
"""

import contextlib
import threading
from collections.abc import Iterator


class ApeGate:
    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._scripts = 0  # deploy queues whose script may be running
        self._script_threads: set[int] = set()  # the threads that deployed: they pass
        self._parked = 0  # script threads waiting inside the plugin
        self._inside = 0  # plugin threads inside Ape's managers now
        self._depth = threading.local()
        self._serial = threading.RLock()
        self.waits = 0  # how often a worker had to wait for the script (tests read it)

    # -- the script's side ------------------------------------------------------------------

    def script_started(self) -> None:
        """A script deploys on this thread (a deploy queue began): other threads stay out."""
        with self._cond:
            self._scripts += 1
            self._script_threads.add(threading.get_ident())

    def script_thread(self) -> None:
        """This thread deploys for the running script: it is the script, so it passes."""
        with self._cond:
            self._script_threads.add(threading.get_ident())

    def script_ended(self) -> None:
        with self._cond:
            self._scripts = max(0, self._scripts - 1)
            if not self._scripts:
                self._script_threads.clear()
            self._cond.notify_all()

    @contextlib.contextmanager
    def script_waits(self) -> Iterator[None]:
        """The script's thread blocks in the plugin for the duration: workers may call into Ape,
        and the script goes on only once they are out."""
        with self._cond:
            self._parked += 1
            self._cond.notify_all()
        try:
            yield
        finally:
            with self._cond:
                self._parked -= 1
                self._cond.wait_for(lambda: not self._inside or self._open_to_workers())

    # -- the workers' side ------------------------------------------------------------------

    def _open_to_workers(self) -> bool:
        return self._scripts == 0 or self._parked > 0

    def _passes(self, ident: int) -> bool:
        return self._open_to_workers() or ident in self._script_threads

    @contextlib.contextmanager
    def entered(self) -> Iterator[None]:
        """Inside Ape's managers; waits while the script may be using them. Also a decorator
        (`@GATE.entered()`): the function runs inside the gate."""
        # getattr: a threading.local has `value` only on threads that set it.
        depth = getattr(self._depth, "value", 0)
        if depth == 0:
            ident = threading.get_ident()
            with self._cond:
                if not self._passes(ident):
                    self.waits += 1
                    self._cond.wait_for(lambda: self._passes(ident))
                self._inside += 1
        self._depth.value = depth + 1
        try:
            with self._serial:
                yield
        finally:
            self._depth.value = depth
            if depth == 0:
                with self._cond:
                    self._inside -= 1
                    self._cond.notify_all()


GATE = ApeGate()
