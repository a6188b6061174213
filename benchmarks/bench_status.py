"""`ape verify status` costs what the explorers' rate limits cost, and no more.

    python benchmarks/bench_status.py [--deployments 50] [--rate 5] [--repeat 3]

The real command (Ape's CLI object, in this process, as tests/support/e2e.ape_in_process runs it;
once more as the `ape` executable for the whole process's time) over --deployments deployments
recorded in the plugin's ledger on an anvil (one in five an EIP-1167 clone of another, so proxies
are read on chain and their links judged), on three targets of ethereum:local, each limited to
--rate calls/s: two Etherscan-style ones and one Sourcify API v2 one. The targets are loopback
servers in this process answering getsourcecode (verified; a clone linked to its implementation)
and the Sourcify lookup (exact_match) in the explorers' shapes, recording each call's arrival.

The bound: status needs one call per deployment per target, and each target takes --rate calls a
second; the targets are read side by side, so no schedule is shorter than deployments / rate
(50 / 5 = 10 s). The ratio is the command's median wall time over that bound (and the span from
the first call's arrival to the last's, over it). Checked: exactly one call per deployment on
each target, no second holding more than --rate calls at any server, every row verified or
linked. Target: ratio <= 1.25; exits 1 when missed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import parse_qs

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "benchmarks"))

from bench_targets import TargetServer, save_figures  # noqa: E402

from support.service import Anvil  # noqa: E402

RESULTS = REPO / "benchmarks" / "results" / "bench_status.json"
BIN = Path(sys.executable).parent
TARGET_RATIO = 1.25
RUNTIME = bytes.fromhex("600160005260206000f3")  # returns 1: ten bytes, no DELEGATECALL
PLAIN = bytes.fromhex("69") + RUNTIME + bytes.fromhex("600052600a6016f3")  # init code returning RUNTIME


def clone_of(implementation: str) -> bytes:
    """EIP-1167's init code for a clone of `implementation`."""
    return bytes.fromhex(
        "3d602d80600a3d3981f3363d3d373d3d3d363d73" + implementation[2:].lower() + "5af43d82803e903d91602b57fd5bf3"
    )


class Answering(TargetServer):
    """A target that only answers reads; `links`: clone address (lower case) -> its implementation."""

    def __init__(self, links: dict):
        super().__init__(0.0)
        self.links = links


class Etherscan(Answering):
    """getsourcecode only: every address verified; a clone linked to its implementation."""

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api"

    def answer(self, method, url, body, now):
        params = {k: v[-1] for k, v in parse_qs(url.query).items()}
        if url.path != "/api" or params.get("action") != "getsourcecode":
            raise ValueError(f"unexpected {method} {url.path} {params.get('action')!r}")
        address = params["address"]
        implementation = self.links.get(address.lower(), "")
        item = {
            "SourceCode": "contract C {}",
            "ABI": "[]",
            "ContractName": "C",
            "CompilerVersion": "v0.8.26+commit.8a97fa7a",
            "OptimizationUsed": "1",
            "Runs": "200",
            "ConstructorArguments": "",
            "EVMVersion": "Default",
            "Library": "",
            "LicenseType": "MIT",
            "Proxy": "1" if implementation else "0",
            "Implementation": implementation,
            "SwarmSource": "",
        }
        return 200, {"status": "1", "message": "OK", "result": [item]}, "getsourcecode"


class Sourcify(Answering):
    """GET v2/contract/{chainId}/{address}: exact_match, with proxyResolution."""

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def answer(self, method, url, body, now):
        parts = [p for p in url.path.split("/") if p]
        if method != "GET" or len(parts) != 4 or parts[:2] != ["v2", "contract"]:
            raise ValueError(f"unexpected {method} {url.path}")
        implementation = self.links.get(parts[3].lower())
        proxy = (
            {"isProxy": True, "proxyType": "EIP1167Proxy", "implementations": [{"address": implementation}]}
            if implementation
            else {"isProxy": False, "proxyType": None, "implementations": []}
        )
        return (
            200,
            {
                "match": "exact_match",
                "creationMatch": "exact_match",
                "runtimeMatch": "exact_match",
                "chainId": parts[2],
                "address": parts[3],
                "verifiedAt": "2026-01-01T00:00:00Z",
                "matchId": "1",
                "proxyResolution": proxy,
            },
            "lookup",
        )


def record(project: Path, anvil_url: str, deployments: list[tuple[str, str]]) -> None:
    """The plugin's ledger, as `ape run` leaves it with auto off."""
    from ape import networks

    from ape_contract_verify.workflow.ledger import Ledger
    from support.e2e import forget_connections

    try:
        with networks.parse_network_choice("ethereum:local:foundry", provider_settings={"host": anvil_url}):
            ledger = Ledger.for_chain(SimpleNamespace(path=project), 31337)
            for name, address in deployments:
                ledger.recorded(name, address, "ethereum:local:foundry")
                ledger.ended(name, address, "verified")
    finally:
        forget_connections(networks)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deployments", type=int, default=50)
    parser.add_argument("--rate", type=float, default=5.0, help="calls per second per target (client limit)")
    parser.add_argument("--repeat", type=int, default=3, help="rounds; the figures are medians")
    options = parser.parse_args()
    if options.deployments < 2 or options.repeat < 1 or options.rate <= 0:
        parser.error("--deployments needs at least 2, --repeat at least 1, --rate more than 0")
    os.environ["PATH"] = f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"
    from support.e2e import ape_in_process

    scratch = Path(tempfile.mkdtemp(prefix="bench-status-"))
    anvil = Anvil()
    servers: dict = {}
    figures: dict = {
        "deployments": options.deployments,
        "targets": 3,
        "calls_per_second": options.rate,
        "repeat": options.repeat,
        "cpus": os.cpu_count(),
        "load_average_at_start": list(os.getloadavg()),
    }
    try:
        deployed, links = [], {}
        for index in range(options.deployments):
            if index % 5 == 4:  # a clone of the plain contract before it
                implementation = deployed[-1][1]
                address = anvil.deploy(clone_of(implementation))
                links[address.lower()] = implementation
                deployed.append((f"Clone{index}", address))
            else:
                deployed.append((f"Plain{index}", anvil.deploy(PLAIN)))
        servers = {"etherscan": Etherscan(links), "second": Etherscan(links), "sourcify": Sourcify(links)}
        project = scratch / "project"
        (project / "contracts").mkdir(parents=True)
        rate = options.rate
        config = {
            "name": "bench-status",
            "foundry": {"host": anvil.url},
            "contract_verify": {
                "max_retries": 1,
                "explorers": {
                    "ethereum": {
                        "local": {
                            "url": servers["etherscan"].url,
                            "calls_per_second": rate,
                            "second": {"url": servers["second"].url, "kind": "etherscan", "calls_per_second": rate},
                            "sourcify": {"url": servers["sourcify"].url, "calls_per_second": rate},
                        }
                    }
                },
            },
        }
        (project / "ape-config.yaml").write_text(json.dumps(config))  # JSON is YAML
        record(project, anvil.url, deployed)
        bound = options.deployments / rate
        figures["bound_s"] = round(bound, 3)
        figures["bound_note"] = (
            "deployments / calls_per_second: each target needs one call per deployment; targets in parallel"
        )

        def one_round(run) -> dict:
            for server in servers.values():
                server.calls.clear()
            started, since = time.perf_counter(), time.monotonic()
            proc = run()
            wall = time.perf_counter() - started
            if proc.returncode != 0:
                raise SystemExit(f"exit {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
            rows = json.loads(proc.stdout)["rows"]
            states = sorted({s["state"] for r in rows for s in r["targets"].values()})
            stats = {name: server.stats(rate, since) for name, server in servers.items()}
            arrivals = [t for server in servers.values() for t, _ in server.calls]
            problems = [f"{name}: {s['calls']} calls" for name, s in stats.items() if s["calls"] != options.deployments]
            problems += [
                f"{name}: {s['max_calls_in_any_1s']} calls in one second"
                for name, s in stats.items()
                if not s["rate_held"]
            ]
            if len(rows) != options.deployments or states != ["linked", "verified"] or problems:
                raise SystemExit(f"{len(rows)} rows, states {states}; {problems}")
            return {
                "wall_s": round(wall, 3),
                "calls_span_s": round(max(arrivals) - min(arrivals), 3),
                "first_call_s": round(min(arrivals) - since, 3),
                "servers": {
                    name: {k: s[k] for k in ("calls", "by_action", "max_calls_in_any_1s", "min_gap_ms", "rate_held")}
                    for name, s in stats.items()
                },
            }

        command = ["verify", "status", "--network", "ethereum:local:foundry", "--json"]
        rounds = []
        for index in range(options.repeat):
            print(f"round {index + 1}…", file=sys.stderr, flush=True)
            rounds.append(one_round(lambda: ape_in_process(project, *command)))
        process = one_round(
            lambda: subprocess.run(
                [str(BIN / "ape"), *command], cwd=project, capture_output=True, text=True, timeout=600
            )
        )
        wall = statistics.median(r["wall_s"] for r in rounds)
        span = statistics.median(r["calls_span_s"] for r in rounds)
        figures.update(
            {
                "wall_s_rounds": [r["wall_s"] for r in rounds],
                "wall_s_median": wall,
                "calls_span_s_median": span,
                "ratio": round(wall / bound, 3),
                "ratio_calls_span": round(span / bound, 3),
                "target_ratio": TARGET_RATIO,
                "ape_executable": {
                    "wall_s": process["wall_s"],
                    "first_call_s": process["first_call_s"],
                    "note": "the whole `ape verify status` process: Ape's start and connection, then the same calls",
                },
                "last_round": rounds[-1],
                "load_average_at_end": list(os.getloadavg()),
            }
        )
        figures["meets_target"] = figures["ratio"] <= TARGET_RATIO
    finally:
        for server in servers.values():
            server.stop()
        anvil.stop()
    save_figures(RESULTS, figures)


if __name__ == "__main__":
    main()
