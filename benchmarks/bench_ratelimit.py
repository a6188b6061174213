"""Does the client-side limiter hold the configured rate across threads?

8 threads share one ExplorerClient-side limiter (3 calls/s by default) and make N status checks
against a local HTTP server on 127.0.0.1, which stamps each arrival and, like Etherscan, answers
`Max calls per sec rate limit reached (3/sec)` to any call that would put more than 3 in a
one-second window. Baseline, same run: the same threads and calls with no limiter (and no retries,
so it shows how many calls the explorer would have refused).

    python benchmarks/bench_ratelimit.py            # 60 calls (~20 s)
    python benchmarks/bench_ratelimit.py --calls 200

Writes benchmarks/results/bench_ratelimit.json and prints it.
"""

import argparse
import json
import logging
import statistics
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from ape_contract_verify.client.etherscan import ExplorerClient
from ape_contract_verify.retry import RateLimiter

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # support/: the explorer's texts
from support.client import Texts  # noqa: E402

GUID = "a7lpxkm9ub8mnbz4x2hvsyqxnwe1bxqzd3ckkcf9ahqurzenvx"
RESULTS = Path(__file__).resolve().parent / "results" / "bench_ratelimit.json"


class Explorer(ThreadingHTTPServer):
    """Stamps arrivals; enforces `limit` calls in any trailing one-second window."""

    daemon_threads = True

    def __init__(self, limit: int):
        self.limit = limit
        self.lock = threading.Lock()
        self.arrivals: list[float] = []  # every request
        self.accepted: list[float] = []  # requests not rate limited
        self.rate_limited = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                now = time.monotonic()
                with server.lock:
                    server.arrivals.append(now)
                    recent = sum(1 for t in server.accepted if now - t < 1.0)
                    if recent >= server.limit:
                        server.rate_limited += 1
                        body = {
                            "status": "0",
                            "message": "NOTOK",
                            "result": Texts.RATE_LIMIT_PER_SEC.format(n=server.limit),
                        }
                    else:
                        server.accepted.append(now)
                        body = {"status": "1", "message": "OK", "result": Texts.PASS}
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        super().__init__(("127.0.0.1", 0), Handler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/api"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def max_in_window(times: list[float], window: float = 1.0) -> int:
    times = sorted(times)
    best, start = 0, 0
    for end, t in enumerate(times):
        while t - times[start] >= window:
            start += 1
        best = max(best, end - start + 1)
    return best


def run(calls: int, threads: int, rate: float, limit: int, limited: bool) -> dict:
    server = Explorer(limit)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        limiter = RateLimiter(rate if limited else 1e9)
        # With the limiter, retries stay on as in production (none should be needed).
        client = ExplorerClient(
            server.url, limiter=limiter, max_retries=10 if limited else 0, backoff=0.2, max_backoff=1.0
        )
        counter = iter(range(calls))
        counter_lock = threading.Lock()
        failures = []

        def worker():
            while True:
                with counter_lock:
                    if next(counter, None) is None:
                        return
                try:
                    client.job_status(GUID)
                except Exception as err:  # recorded, reported
                    failures.append(type(err).__name__)

        started = time.monotonic()
        pool = [threading.Thread(target=worker) for _ in range(threads)]
        for t in pool:
            t.start()
        for t in pool:
            t.join(timeout=calls / min(rate, 1e3) * 3 + 60)
        elapsed = time.monotonic() - started
    finally:
        server.shutdown()
        server.server_close()

    arrivals = sorted(server.arrivals)
    gaps = [b - a for a, b in zip(arrivals, arrivals[1:])]
    span = arrivals[-1] - arrivals[0] if len(arrivals) > 1 else 0.0
    return {
        "requests": len(arrivals),
        "duration_s": round(elapsed, 3),
        "achieved_rate": round((len(arrivals) - 1) / span, 4) if span else None,
        "spacing_s": {
            "min": round(min(gaps), 4),
            "p1": round(percentile(gaps, 1), 4),
            "p50": round(statistics.median(gaps), 4),
            "p99": round(percentile(gaps, 99), 4),
            "max": round(max(gaps), 4),
        },
        "max_calls_in_any_1s_window": max_in_window(arrivals),
        "rate_limit_answers": server.rate_limited,
        "client_errors": len(failures),  # calls that ended in an error (baseline: refused, not retried)
    }


def main(argv=None) -> dict:
    logging.getLogger("ape.contract_verify.client").setLevel(logging.ERROR)  # the baseline's retries are expected
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=60, help="calls in the limited run (the issue asks 200)")
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--rate", type=float, default=3.0, help="configured calls per second")
    args = parser.parse_args(argv)
    limit = int(args.rate)

    limited = run(args.calls, args.threads, args.rate, limit, limited=True)
    baseline = run(args.calls, args.threads, args.rate, limit, limited=False)
    expected = 1.0 / args.rate
    figures = {
        "benchmark": "bench_ratelimit",
        "calls": args.calls,
        "threads": args.threads,
        "configured_rate": args.rate,
        "expected_spacing_s": round(expected, 4),
        "with_limiter": limited,
        "baseline_without_limiter": baseline,
        "achieved_rate_over_configured": round(limited["achieved_rate"] / args.rate, 4),
        "p99_spacing_over_expected": round(limited["spacing_s"]["p99"] / expected, 4),
        "min_spacing_over_expected": round(limited["spacing_s"]["min"] / expected, 4),
        "baseline_rate_over_configured": round((baseline["achieved_rate"] or 0) / args.rate, 2),
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(figures, indent=2) + "\n")
    print(json.dumps(figures, indent=2))
    return figures


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
