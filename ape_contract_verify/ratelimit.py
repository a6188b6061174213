"""Client-side rate limiting, shared by every thread that talks to one explorer.

Explorers count calls per second per key (Etherscan's free tier: about 3/s) and answer
`Max calls per sec rate limit reached` beyond it. Spacing calls evenly at 1/rate never lets a
one-second window hold more than `rate` calls, whatever the number of threads.
"""

import threading
import time
from typing import Callable, Optional


class RateLimiter:
    """Hands out evenly spaced call slots: at most `calls_per_second`, across threads."""

    def __init__(
        self,
        calls_per_second: float = 3.0,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ):
        if calls_per_second <= 0:
            raise ValueError("calls_per_second must be greater than 0")
        self._interval = 1.0 / calls_per_second
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        self._next = float("-inf")

    @property
    def calls_per_second(self) -> float:
        return 1.0 / self._interval

    def slow_down_to(self, calls_per_second: float) -> None:
        """Never speed up a shared limiter: the slowest configured rate wins."""
        with self._lock:
            self._interval = max(self._interval, 1.0 / calls_per_second)

    def reserve(self) -> float:
        """Book the next slot and return how long the caller must wait for it."""
        with self._lock:
            now = self._clock()
            slot = max(now, self._next)
            self._next = slot + self._interval
            return slot - now

    def acquire(self) -> None:
        """Block until this caller may send one request."""
        delay = self.reserve()
        if delay > 0:
            self._sleep(delay)

    def pause(self, seconds: float) -> None:
        """Hold back every thread for a while (the explorer said we were too fast)."""
        with self._lock:
            self._next = max(self._next, self._clock() + seconds)


_registry: dict[str, RateLimiter] = {}
_registry_lock = threading.Lock()


def limiter_for(base_url: str, calls_per_second: Optional[float] = None) -> RateLimiter:
    """The one limiter for an explorer base URL, shared by every client in the process."""
    key = base_url.rstrip("/").lower()
    rate = calls_per_second or 3.0
    with _registry_lock:
        limiter = _registry.get(key)
        if limiter is None:
            limiter = _registry[key] = RateLimiter(rate)
        else:
            limiter.slow_down_to(rate)
        return limiter
