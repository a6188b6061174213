"""Whether a target still answers, for one run: one record shared by every worker talking to it.

A refused connection or a timeout is a strike; any HTTP answer clears the strikes (a 429 or a 5xx
too: the explorer is there, and the limiter and backoff deal with it). Three strikes in a row,
spread over a few seconds, mark the target down for the rest of the run. From then on no request
goes to it and every call ends at once with one reason: a dead explorer costs the run seconds,
not each contract's full backoff. The spread keeps a blip (a restart, a load balancer swap), which
may fail many workers' requests at the same instant, from ending the run's work on a live target.
"""

import threading
import time
from collections.abc import Callable

from ape_contract_verify.exceptions import TargetDown
from ape_contract_verify.logs import get_logger

logger = get_logger()


class TargetHealth:
    def __init__(self, name: str, strikes: int = 3, seconds: float = 5.0, clock: Callable[[], float] = time.monotonic):
        self.name = name
        self.strikes = strikes
        self.seconds = seconds
        self.others = False  # the run has other targets for this network (the reason says they went on)
        self._clock = clock
        self._lock = threading.Lock()
        self._count = 0
        self._first: float | None = None
        self._down = threading.Event()
        self._reason = ""

    @property
    def down(self) -> bool:
        return self._down.is_set()

    @property
    def reason(self) -> str:
        return self._reason + ("; the other targets went on" if self.others else "")

    def answered(self) -> None:
        """The target sent an HTTP answer, whatever it said."""
        with self._lock:
            self._count, self._first = 0, None

    def unreachable(self, what: str) -> None:
        """A refused connection or a timeout; the strike that completes the streak marks it down."""
        with self._lock:
            if self.down:
                return
            now = self._clock()
            if self._first is None:
                self._first = now
            self._count += 1
            span = now - self._first
            if self._count < self.strikes or span < self.seconds:
                return
            self._reason = f"target {self.name} is down: {what} ({self._count} tries in {span:.0f} s)"
            self._down.set()
        logger.warning("%s; nothing more is sent to it in this run", self._reason)

    def now(self) -> float:
        return self._clock()

    def deciding(self, since: float, grace: float) -> bool:
        """Strikes are being counted and could still mark the target down: true for a streak not
        yet `seconds` (plus `grace`, one backoff) older than `since`, a caller's first strike."""
        with self._lock:
            return not self.down and self._count > 0 and self._clock() - since < self.seconds + grace

    def check(self) -> None:
        """Raise TargetDown once the target is down: no request is sent after that."""
        if self.down:
            raise TargetDown(self.reason)

    def sleeper(self, sleep: Callable[[float], None]) -> Callable[[float], None]:
        """`sleep`, woken when the target goes down so no worker waits out a backoff for nothing.
        An injected sleep (tests' fake clocks) is kept as it is."""
        if sleep is not time.sleep:
            return sleep

        def sleep_unless_down(seconds: float) -> None:
            self._down.wait(max(0.0, seconds))

        return sleep_unless_down
