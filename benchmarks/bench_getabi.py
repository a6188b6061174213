"""getabi throughput and latency of the local explorer under 32 concurrent keep-alive connections.

    python benchmarks/bench_getabi.py [--connections 32] [--seconds 5] [--rounds 2]

The explorer runs as it does embedded (uvicorn on 127.0.0.1, a background thread of this process)
with one verified contract in its SQLite store. The load comes from a second process: an asyncio
client on raw sockets, one coroutine per connection, HTTP/1.1 keep-alive, a request at a time.
Baseline, measured on the same server in the same run: a static Starlette endpoint of the same app
(same uvicorn, same middleware, no parameter parsing, no database). Rounds alternate the two; the
figures reported are those of the median round of each.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ADDRESS = "0x5fbdb2315678afecb367f032d93f642f64180aa3"
ABI = [
    {"type": "constructor", "inputs": [{"name": "initial", "type": "uint256"}], "stateMutability": "nonpayable"},
    {
        "type": "function",
        "name": "value",
        "inputs": [],
        "outputs": [{"name": "", "type": "uint256"}],
        "stateMutability": "view",
    },
    {
        "type": "function",
        "name": "set",
        "inputs": [{"name": "v", "type": "uint256"}],
        "outputs": [],
        "stateMutability": "nonpayable",
    },
    {
        "type": "event",
        "name": "Changed",
        "inputs": [{"name": "v", "type": "uint256", "indexed": False}],
        "anonymous": False,
    },
]


# -- the load generator (runs in the second process) -----------------------------------------


async def _connection(
    host: str, port: int, request: bytes, stop_at: float, latencies: list, errors: list, expect: bytes = b'"status":"1"'
):
    reader, writer = await asyncio.open_connection(host, port)
    try:
        while time.perf_counter() < stop_at:
            started = time.perf_counter()
            writer.write(request)
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n"):
                if line[:15].lower() == b"content-length:":
                    length = int(line[15:])
            body = await reader.readexactly(length)
            latencies.append(time.perf_counter() - started)
            if not head.startswith(b"HTTP/1.1 200") or expect not in body:
                errors.append(head.split(b"\r\n", 1)[0].decode() + " " + body[:80].decode(errors="replace"))
    finally:
        writer.close()


async def _load(
    host: str, port: int, path: str, connections: int, seconds: float, expect: bytes = b'"status":"1"'
) -> dict:
    request = f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode()
    latencies: list[float] = []
    errors: list[str] = []
    started = time.perf_counter()
    stop_at = started + seconds
    await asyncio.gather(
        *(_connection(host, port, request, stop_at, latencies, errors, expect) for _ in range(connections))
    )
    elapsed = time.perf_counter() - started
    latencies.sort()
    return {
        "requests": len(latencies),
        "errors": len(errors),
        "first_error": errors[0] if errors else None,
        "seconds": round(elapsed, 3),
        "req_per_s": round(len(latencies) / elapsed, 1),
        "p50_ms": round(latencies[len(latencies) // 2] * 1000, 2) if latencies else None,
        "p99_ms": round(latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] * 1000, 2)
        if latencies
        else None,
    }


def load_main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--path", required=True)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=5)
    parser.add_argument("--expect", default='"status":"1"', help="bytes every 200 answer's body must hold")
    args = parser.parse_args(argv)
    result = asyncio.run(_load(args.host, args.port, args.path, args.connections, args.seconds, args.expect.encode()))
    print(json.dumps(result))


# -- the orchestrator ------------------------------------------------------------------------


class _NoChain:
    """getabi never reads the chain; anything else would be a bug this benchmark should expose."""

    def __getattr__(self, name):
        raise RuntimeError(f"the getabi path read the chain ({name})")


def _run_load(port: int, path: str, connections: int, seconds: float, expect: str = '"status":"1"') -> dict:
    command = [
        sys.executable,
        __file__,
        "--load",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--path",
        path,
        "--connections",
        str(connections),
        "--seconds",
        str(seconds),
        "--expect",
        expect,
    ]
    out = subprocess.run(command, capture_output=True, text=True, timeout=seconds + 60)
    if out.returncode != 0:
        raise SystemExit(f"load generator failed: {out.stderr[-2000:]}")
    return json.loads(out.stdout)


def main() -> dict:
    parser = argparse.ArgumentParser()
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    from starlette.responses import Response
    from starlette.routing import Route

    from ape_contract_verify.explorer.store import VerifiedContract
    from ape_contract_verify.server.api import envelope
    from ape_contract_verify.server.runner import LocalExplorer

    static_body = envelope("1", json.dumps(ABI, separators=(",", ":")))

    async def static(request):
        return Response(static_body, media_type="application/json")

    with tempfile.TemporaryDirectory() as tmp:
        explorer = LocalExplorer(_NoChain(), db_path=Path(tmp) / "bench.sqlite")
        explorer.store.save_contract(
            VerifiedContract(
                address=ADDRESS,
                contract_name="Box",
                compiler_version="v0.8.26+commit.8a97fa7a",
                code_format="solidity-single-file",
                source_code="contract Box {}",
                abi=json.dumps(ABI, separators=(",", ":")),
            )
        )
        explorer.app.router.routes.append(Route("/baseline", static))
        explorer.start()
        try:
            getabi_path = f"/api?module=contract&action=getabi&address={ADDRESS}"
            _run_load(explorer.port, getabi_path, args.connections, 1.0)  # warm-up
            baseline_runs, getabi_runs = [], []
            for _ in range(args.rounds):
                baseline_runs.append(_run_load(explorer.port, "/baseline", args.connections, args.seconds))
                getabi_runs.append(_run_load(explorer.port, getabi_path, args.connections, args.seconds))
        finally:
            explorer.stop()

    def median(runs: list[dict]) -> dict:
        """The median round by throughput (the machine is shared: one round can be hit by noise)."""
        return sorted(runs, key=lambda r: r["req_per_s"])[len(runs) // 2]

    import uvicorn

    try:
        import httptools  # noqa: F401

        http = "httptools"
    except ImportError:
        http = "h11"
    getabi, baseline = median(getabi_runs), median(baseline_runs)
    result = {
        "connections": args.connections,
        "seconds_per_run": args.seconds,
        "rounds": args.rounds,
        "cpu_count": os.cpu_count(),
        "uvicorn": uvicorn.__version__,
        "http_parser": http,
        "statistic": "median round by req/s",
        "getabi": getabi,
        "baseline_static_endpoint": baseline,
        "getabi_req_per_s": getabi["req_per_s"],
        "getabi_p99_ms": getabi["p99_ms"],
        "baseline_req_per_s": baseline["req_per_s"],
        "getabi_vs_baseline": round(getabi["req_per_s"] / baseline["req_per_s"], 3),
        "all_getabi_runs_req_per_s": [r["req_per_s"] for r in getabi_runs],
        "all_baseline_runs_req_per_s": [r["req_per_s"] for r in baseline_runs],
        "errors": sum(r["errors"] for r in getabi_runs + baseline_runs),
        "target_req_per_s": 1000,
    }
    result["meets_target"] = result["getabi_req_per_s"] >= 1000 and result["errors"] == 0
    out_dir = Path(__file__).parent / "results"
    out_dir.mkdir(exist_ok=True)
    (out_dir / "bench_getabi.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--load":
        load_main(sys.argv[2:])
    else:
        main()
