"""Verification after deploy (auto mode) against one contract at a time after the script.

    python benchmarks/bench_auto_verify.py [--deployments 50] [--job-seconds 2] [--rate 5] [--cli-sample 1]

A real anvil and a local explorer run on 127.0.0.1. The explorer runs in this process: the real
engine (solc-js compiles, chain comparison) behind a wrapper that sleeps --job-seconds per
verification, as a busy explorer does, with 16 server workers so jobs overlap as on a real one. A
middleware counts every API call, to check the client's --rate limit at the explorer's end.

The project is a scratch copy of benchmarks/projects/auto_bench (a loop deploying Box, Token and
Counter variants), with `calls_per_second: --rate` and `poll_interval: 1`. Each mode gets its own
fresh explorer database, so nothing is "already verified":
- auto: `contract_verify.auto: true`; `ape run deploy` timed end to end (script + queue);
- baseline: auto off; `ape run deploy`, then one process verifying each deployment in turn and
  waiting for it (scripts/verify_sequential.py, the objects `ape verify contract` builds; its loop
  is timed inside the process, which leaves out Ape's start-up and so favours the baseline);
- cli: `ape verify contract NAME ADDRESS` per contract, on --cli-sample contracts (each pays Ape's
  start-up), extrapolated to all deployments.
Target: auto >= 5x faster than the baseline.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import parse_qs

import requests
import yaml
from arrivals import call_stats  # benchmarks/, beside this script

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
PROJECT = REPO / "benchmarks" / "projects" / "auto_bench"
RESULTS = REPO / "benchmarks" / "results" / "bench_auto_verify.json"
BIN = REPO / ".venv" / "bin"
TARGET_RATIO = 5.0
NETWORK = "ethereum:local:foundry"
DEPLOYED = re.compile(r"^(Box|Token|Counter) (0x[0-9a-fA-F]{40})$", re.M)
ROW = re.compile(
    r"^(\S.*?)\s{2,}(0x[0-9a-fA-F]{40})\s{2,}(verified|already verified|failed|pre-check failed|error|skipped)\b", re.M
)


def tool_env(**extra: str) -> dict:
    env = dict(os.environ)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env["SOLCX_BINARY_PATH"] = str(REPO / ".solcx")
    env.update(extra)
    return env


def run(args: list, cwd: Path, timeout: float, **env: str) -> tuple[subprocess.CompletedProcess, float]:
    started = time.perf_counter()
    proc = subprocess.run(
        [str(a) for a in args], cwd=cwd, env=tool_env(**env), capture_output=True, text=True, timeout=timeout
    )
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(
            f"{' '.join(map(str, args))} failed ({proc.returncode}):\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
        )
    return proc, elapsed


def run_timed_lines(args: list, cwd: Path, timeout: float, **env: str) -> tuple[str, str, float, float]:
    """Like run(), and also when the last deployment line was printed (the script's own end)."""
    started = time.perf_counter()
    last_deploy = [0.0]
    with tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(
            [str(a) for a in args], cwd=cwd, env=tool_env(**env), stdout=subprocess.PIPE, stderr=err, text=True
        )
        lines: list[str] = []

        def read():
            for line in proc.stdout:
                lines.append(line)
                if DEPLOYED.match(line.strip()):
                    last_deploy[0] = time.perf_counter() - started

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
            raise SystemExit(f"{' '.join(map(str, args))} did not finish in {timeout:.0f} s")
        reader.join(timeout=10)
        elapsed = time.perf_counter() - started
        err.seek(0)
        stderr = err.read()
    stdout = "".join(lines)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(map(str, args))} failed ({proc.returncode}):\n{stdout[-4000:]}\n{stderr[-4000:]}")
    return stdout, stderr, elapsed, last_deploy[0]


class Anvil:
    def __init__(self, timeout: float = 30.0):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        self.proc = subprocess.Popen(
            [str(BIN / "anvil"), "--host", "127.0.0.1", "--port", str(port), "--silent"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + timeout
        while True:
            try:
                requests.post(
                    self.url, json={"jsonrpc": "2.0", "id": 1, "method": "eth_chainId", "params": []}, timeout=5
                )
                return
            except requests.RequestException:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    self.stop()
                    raise SystemExit("anvil did not start")
                time.sleep(0.1)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)


class SlowEngine:
    """The real engine, after --job-seconds of queueing: a busy explorer's verification time."""

    def __init__(self, inner, seconds: float):
        self.inner = inner
        self.seconds = seconds
        self._lock = threading.Lock()
        self.running = 0
        self.peak = 0
        self.jobs = 0

    def verify(self, request):
        with self._lock:
            self.running += 1
            self.jobs += 1
            self.peak = max(self.peak, self.running)
        try:
            time.sleep(self.seconds)
            return self.inner.verify(request)
        finally:
            with self._lock:
                self.running -= 1

    def detect_proxy(self, address):
        return self.inner.detect_proxy(address)

    def get_code(self, address):
        return self.inner.get_code(address)


class CallCounter:
    """ASGI middleware: the arrival time and action of every API call."""

    def __init__(self, app):
        self.app = app
        self.calls: list[tuple[float, str]] = []
        self._lock = threading.Lock()

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http" and scope["path"].startswith("/api"):
            arrived = time.monotonic()
            action = (parse_qs(scope.get("query_string", b"").decode()).get("action") or [""])[0]
            if scope["method"] == "POST":
                chunks, more = [], True
                while more:
                    message = await receive()
                    chunks.append(message.get("body", b""))
                    more = message.get("more_body", False)
                body = b"".join(chunks)
                action = action or (parse_qs(body.decode("utf8", "replace")).get("action") or ["POST"])[0]
                replayed = False

                async def receive():  # noqa: F811  hand the read body to the app once
                    nonlocal replayed
                    if not replayed:
                        replayed = True
                        return {"type": "http.request", "body": body, "more_body": False}
                    return {"type": "http.disconnect"}

            with self._lock:
                self.calls.append((arrived, action))
        await self.app(scope, receive, send)

    def stats(self, rate: float, started: float) -> dict:
        window = call_stats(self.calls, rate)
        times, peak, over = window["times"], window["peak"], window["over"]
        span = times[-1] - times[0] if len(times) > 1 else 0.0
        return {
            "calls": len(times),
            "by_action": window["by_action"],
            "span_s": round(span, 2),
            "mean_calls_per_s": round((len(times) - 1) / span, 2) if span else None,
            "max_calls_in_any_1s": peak,
            "first_call_after_start_s": round(times[0] - started, 2) if times else None,
            "last_call_after_start_s": round(times[-1] - started, 2) if times else None,
            "windows_over_limit": over,
            "min_gap_between_arrivals_ms": window["min_gap_ms"],
            "rate_limit_held": peak <= rate,
        }


class Explorer:
    """A fresh local explorer (its own temporary DB) with the slow engine and the call counter."""

    def __init__(self, rpc_url: str, job_seconds: float, workers: int = 16):
        from ape_contract_verify.evm.chain import JsonRpcChain
        from ape_contract_verify.explorer.jobs import RealEngine
        from ape_contract_verify.server.runner import LocalExplorer

        chain = JsonRpcChain(rpc_url)
        self.engine = SlowEngine(RealEngine(chain), job_seconds)
        self.server = LocalExplorer(chain, engine=self.engine, workers=workers)
        self.counter = CallCounter(self.server.app)
        self.server.app = self.counter  # before start(): uvicorn serves the wrapped app
        self.server.start()
        self.base_url = self.server.base_url

    def verified(self) -> int:
        import sqlite3

        with sqlite3.connect(self.server.db_path) as conn:
            rows = conn.execute("SELECT state, COUNT(*) FROM submissions GROUP BY state").fetchall()
        return dict(rows)

    def stop(self) -> None:
        self.server.stop()


def configure(project: Path, anvil_url: str, explorer_url: str, auto: bool, rate: float, workers: int = 0) -> None:
    path = project / "ape-config.yaml"
    config = yaml.safe_load(path.read_text())
    config["foundry"] = {"host": anvil_url}
    config["contract_verify"] = {
        "auto": auto,
        "calls_per_second": rate,
        "poll_interval": 1,
        "timeout": 300,
        **({"workers": workers} if workers else {}),
        "explorers": {"ethereum": {"local": {"url": explorer_url}}},
    }
    path.write_text(yaml.safe_dump(config, sort_keys=False))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deployments", type=int, default=50)
    parser.add_argument("--job-seconds", type=float, default=2.0, help="explorer time per verification job")
    parser.add_argument("--rate", type=float, default=5.0, help="explorer calls per second (client limit)")
    parser.add_argument(
        "--cli-sample", type=int, default=1, help="contracts verified with `ape verify contract` each (0: skip)"
    )
    parser.add_argument("--workers", type=int, default=0, help="contract_verify.workers (0: the plugin's default)")
    parser.add_argument(
        "--auto-only", action="store_true", help="run auto mode only, print its figures and its log (no baseline)"
    )
    options = parser.parse_args()
    n = options.deployments

    scratch = Path(tempfile.mkdtemp(prefix="bench-auto-verify-"))
    anvil = explorer = None
    figures: dict = {"deployments": n, "job_seconds": options.job_seconds, "calls_per_second": options.rate}
    try:
        project = scratch / "auto_bench"
        shutil.copytree(PROJECT, project, ignore=shutil.ignore_patterns(".build", ".cache", "__pycache__"))
        _, compile_s = run([BIN / "ape", "compile"], project, 600)
        figures["compile_s"] = round(compile_s, 2)
        anvil = Anvil()

        # (a) auto mode: deploy and verify beside it, wait for the queue.
        explorer = Explorer(anvil.url, options.job_seconds)
        configure(project, anvil.url, explorer.base_url, auto=True, rate=options.rate, workers=options.workers)
        print(f"auto: ape run deploy ({n} deployments)…", file=sys.stderr)
        started = time.monotonic()
        stdout, stderr, auto_s, script_s = run_timed_lines(
            [BIN / "ape", "run", "deploy", "--network", NETWORK], project, 900, BENCH_DEPLOYMENTS=str(n)
        )
        deployed = DEPLOYED.findall(stdout)
        rows = ROW.findall(stdout)
        figures["auto"] = {
            "wall_s": round(auto_s, 2),
            "last_deploy_printed_s": round(script_s, 2),
            "queue_wait_after_script_s": round(auto_s - script_s, 2),
            "deployed": len(deployed),
            "summary_verified": sum(1 for r in rows if r[2] == "verified"),
            "summary_rows": len(rows),
            "explorer_submissions": explorer.verified(),
            "explorer_jobs_peak_concurrency": explorer.engine.peak,
            "explorer_calls": explorer.counter.stats(options.rate, started),
        }
        explorer.stop()
        explorer = None
        if options.auto_only:
            print(stderr[-20000:], file=sys.stderr)
            print(json.dumps(figures, indent=2))
            return
        if len(deployed) != n or figures["auto"]["summary_verified"] != n:
            raise SystemExit(
                f"auto mode: {len(deployed)} deployed, {figures['auto']['summary_verified']} verified:\n{stdout[-3000:]}\n{stderr[-3000:]}"
            )

        # (b) baseline: deploy with auto off, then one contract at a time, in one process.
        explorer = Explorer(anvil.url, options.job_seconds)
        configure(project, anvil.url, explorer.base_url, auto=False, rate=options.rate)
        print("baseline: ape run deploy, then one at a time…", file=sys.stderr)
        started = time.monotonic()
        proc, deploy_s = run(
            [BIN / "ape", "run", "deploy", "--network", NETWORK], project, 900, BENCH_DEPLOYMENTS=str(n)
        )
        deployed = DEPLOYED.findall(proc.stdout)
        addresses = scratch / "addresses.txt"
        addresses.write_text("".join(f"{name} {address}\n" for name, address in deployed))
        result = scratch / "sequential.json"
        _, sequential_process_s = run(
            [BIN / "ape", "run", "verify_sequential", "--network", NETWORK],
            project,
            1800,
            BENCH_ADDRESSES=str(addresses),
            BENCH_RESULT=str(result),
        )
        sequential = json.loads(result.read_text())
        verified = sum(1 for o in sequential["outcomes"] if o == "verified")
        figures["baseline"] = {
            "deploy_wall_s": round(deploy_s, 2),
            "verify_loop_s": round(sequential["seconds"], 2),
            "verify_process_wall_s": round(sequential_process_s, 2),
            "wall_s": round(deploy_s + sequential["seconds"], 2),
            "verified": verified,
            "per_contract_s": round(sequential["seconds"] / max(1, len(deployed)), 2),
            "explorer_jobs_peak_concurrency": explorer.engine.peak,
            "explorer_calls": explorer.counter.stats(options.rate, started),
        }
        explorer.stop()
        explorer = None
        if verified != n:
            raise SystemExit(f"baseline: {verified} of {n} verified: {sequential['outcomes']}")

        # (c) `ape verify contract NAME ADDRESS` per contract, on a sample, against a fresh DB.
        if options.cli_sample > 0:
            explorer = Explorer(anvil.url, options.job_seconds)
            configure(project, anvil.url, explorer.base_url, auto=False, rate=options.rate)
            times = []
            for name, address in deployed[: options.cli_sample]:
                print(f"cli: ape verify contract {name} {address}…", file=sys.stderr)
                _, seconds = run([BIN / "ape", "verify", "contract", name, address, "--network", NETWORK], project, 600)
                times.append(seconds)
            explorer.stop()
            explorer = None
            per = sum(times) / len(times)
            figures["cli_sample"] = {
                "contracts": len(times),
                "per_contract_s": round(per, 2),
                "extrapolated_wall_s": round(deploy_s + per * n, 2),
                "note": "deploy_wall_s + per_contract_s x deployments (each command pays Ape's start-up)",
            }

        auto = figures["auto"]["wall_s"]
        figures["ratio"] = round(figures["baseline"]["wall_s"] / auto, 2)
        figures["ratio_with_baseline_process_startup"] = round((deploy_s + sequential_process_s) / auto, 2)
        if "cli_sample" in figures:
            figures["ratio_cli_extrapolated"] = round(figures["cli_sample"]["extrapolated_wall_s"] / auto, 2)
        figures["target_ratio"] = TARGET_RATIO
        figures["meets_target"] = figures["ratio"] >= TARGET_RATIO
        calls = figures["auto"]["explorer_calls"]["calls"]
        figures["auto_floor_s"] = {
            "rate_limit": round(calls / options.rate, 1),
            "note": "explorer calls made in auto mode / calls_per_second: no schedule under the limit is shorter",
        }
    finally:
        if explorer is not None:
            explorer.stop()
        if anvil is not None:
            anvil.stop()
        shutil.rmtree(scratch, ignore_errors=True)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(figures, indent=2) + "\n")
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
