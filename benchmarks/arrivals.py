"""Arrival times of calls at a server, against a rate limit: shared by the benchmarks that count
calls at their fake explorers (bench_auto_verify, bench_targets)."""


def window_stats(times: list[float], rate: float) -> dict:
    """The most calls that arrived within any one second (a window starting at each call), how many
    such windows held more than `rate`, and the smallest gap between two arrivals."""
    times = sorted(times)
    peak, j, over = 0, 0, 0
    for i, start in enumerate(times):
        while j < len(times) and times[j] < start + 1.0:
            j += 1
        peak = max(peak, j - i)
        over += (j - i) > rate
    gaps = [b - a for a, b in zip(times, times[1:])]
    return {"peak": peak, "over": over, "min_gap_ms": round(min(gaps) * 1000, 1) if gaps else None}


def call_stats(calls: list[tuple[float, str]], rate: float) -> dict:
    """A server's recorded (arrival time, action) calls: their sorted times, the count per action,
    and `window_stats` of the arrivals (arrival times at the server, not send times)."""
    times = sorted(t for t, _ in calls)
    actions: dict[str, int] = {}
    for _, action in calls:
        actions[action] = actions.get(action, 0) + 1
    return {"times": times, "by_action": actions, **window_stats(times, rate)}
