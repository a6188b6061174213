"""The offline solc shims: a compile in the shim's own solc-js against one in the run's daemon.

    python benchmarks/bench_solc_shim.py [--count 12] [--repeat 3]

Each round compiles --count distinct inputs (a small contract, its constant changed, so no answer is
kept) through `.solcx/solc-v0.8.26` one after the other:
- baseline: the shim alone (SOLC_NATIVE_CACHE unset: it loads solc-js for every compile);
- daemon: SOLC_NATIVE_CACHE set to a folder where toolchain/solc-daemon.js listens (the suite's setup).
Reported per compile: wall time, and CPU time (user + system) of the shim and, for the daemon, of the
daemon over the round too. Both answer every input byte for byte alike (checked). Medians of --repeat.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from support import SOLC_CACHE_ENV, cpu_seconds, start_solc_daemon, stop_solc_daemon  # noqa: E402

SHIM = REPO / ".solcx" / "solc-v0.8.26"
RESULTS = REPO / "benchmarks" / "results" / "bench_solc_shim.json"
SOURCE = """// SPDX-License-Identifier: MIT
pragma solidity ^0.8.0;
contract Counter {{
    uint256 public count;
    event Counted(address by, uint256 count);
    function add(uint256 by) external {{ count += by * {n}; emit Counted(msg.sender, count); }}
}}
"""


def body(n: int) -> str:
    selection = {"*": {"*": ["abi", "evm.bytecode.object", "evm.deployedBytecode.object", "metadata"]}}
    return json.dumps(
        {
            "language": "Solidity",
            "sources": {"Counter.sol": {"content": SOURCE.format(n=n)}},
            "settings": {"optimizer": {"enabled": True, "runs": 200}, "outputSelection": selection},
        }
    )


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def round_(inputs: list[str], env: dict, daemon_pid: int | None) -> tuple[float, float, list[str]]:
    """Wall and CPU seconds per compile over the inputs, and the answers."""
    answers = []
    cpu0, daemon0, start = children_cpu(), cpu_seconds(daemon_pid) if daemon_pid else 0.0, time.monotonic()
    for text in inputs:
        proc = subprocess.run(
            [SHIM, "--standard-json"], input=text, env=env, capture_output=True, text=True, check=True
        )
        answers.append(proc.stdout)
    wall = time.monotonic() - start
    cpu = children_cpu() - cpu0 + ((cpu_seconds(daemon_pid) - daemon0) if daemon_pid else 0.0)
    return wall / len(inputs), cpu / len(inputs), answers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=12)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    alone_env = {k: v for k, v in os.environ.items() if k != SOLC_CACHE_ENV}
    rows: dict[str, list[tuple[float, float]]] = {"baseline": [], "daemon": []}
    with tempfile.TemporaryDirectory(prefix="bench-solc-shim-") as scratch:
        folder = Path(scratch) / "kept"
        daemon = start_solc_daemon(folder)
        try:
            warm = round_([body(-1)], {**alone_env, SOLC_CACHE_ENV: str(folder)}, daemon.pid)  # solc-js loaded once
            assert warm[2][0]
            for r in range(args.repeat):
                inputs = [body(r * args.count + i) for i in range(args.count)]  # distinct: nothing kept
                alone = round_(inputs, alone_env, None)
                asked = round_(inputs, {**alone_env, SOLC_CACHE_ENV: str(folder)}, daemon.pid)
                assert alone[2] == asked[2], "the daemon answered differently"
                rows["baseline"].append(alone[:2])
                rows["daemon"].append(asked[:2])
                for f in folder.glob("*.json"):
                    f.unlink()
        finally:
            stop_solc_daemon(daemon)
    figures = {
        name: {
            "wall_s_per_compile": statistics.median(w for w, _ in values),
            "cpu_s_per_compile": statistics.median(c for _, c in values),
            "rounds": values,
        }
        for name, values in rows.items()
    }
    base, fast = figures["baseline"], figures["daemon"]
    figures["ratio"] = {
        "wall": fast["wall_s_per_compile"] / base["wall_s_per_compile"],
        "cpu": fast["cpu_s_per_compile"] / base["cpu_s_per_compile"],
    }
    figures["load_average"] = os.getloadavg()
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(figures, indent=2) + "\n")
    print(
        f"per compile: alone {base['wall_s_per_compile']:.3f} s wall, {base['cpu_s_per_compile']:.3f} CPU-s; "
        f"daemon {fast['wall_s_per_compile']:.3f} s wall ({figures['ratio']['wall']:.2f}x), "
        f"{fast['cpu_s_per_compile']:.3f} CPU-s ({figures['ratio']['cpu']:.2f}x)"
    )


if __name__ == "__main__":
    main()
