"""The example's deploy through a hosted node against one through a node with traces.

    python benchmarks/bench_hosted.py [--rounds 1]

Both deploy example/ (20 verifications, auto on) with `ape run deploy` to a fresh anvil, verified
on a standalone local explorer that reads the anvil directly. The baseline's Ape talks to the anvil
(traces on); the hosted run's Ape talks to tests/support/rpc_proxy.HostedNodeProxy in front of it,
which refuses `trace_*`/`debug_*`/`ots_*`/`parity_*` as hosted plans do, so the factory children's
creation (the ProxyAdmin, the clone) is replayed on a local anvil fork. Rounds alternate baseline
and hosted; the figures are the medians. Result: the hosted deploy's wall time / the baseline's.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))  # support/: the tests' example deploy and the proxy

from support import BIN, EXAMPLE, run  # noqa: E402
from support.e2e import deploy_example_on_anvil, stop, summary  # noqa: E402
from support.rpc_proxy import HostedNodeProxy  # noqa: E402

RESULTS = REPO / "benchmarks" / "results" / "bench_hosted.json"
DONE = ("verified", "already verified")


def compiled_example(root: Path) -> tuple[Path, float]:
    dest = root / "example"
    shutil.copytree(EXAMPLE, dest, ignore=shutil.ignore_patterns(".build", ".cache", "__pycache__"))
    config = dest / "ape-config.yaml"
    config.write_text(config.read_text().replace("local: ../toolchain/", f"local: {REPO}/toolchain/"))
    started = time.perf_counter()
    run([BIN / "ape", "compile", "--include-dependencies"], cwd=dest, timeout=900)
    return dest, time.perf_counter() - started


def one_deploy(project: Path, root: Path, hosted: bool) -> dict:
    started = time.perf_counter()
    example = deploy_example_on_anvil(project, root, node=HostedNodeProxy if hosted else None)
    wall = time.perf_counter() - started
    try:
        rows = summary(example.proc.stdout)
        figures = {
            "wall_s": round(wall, 2),
            "summary_rows": len(rows),
            "verified": sum(1 for _, outcome, _ in rows.values() if outcome in DONE),
            "proxy_admin_verified": any(n.endswith("ProxyAdmin") and o in DONE for n, (_, o, _) in rows.items()),
        }
        if hosted:
            figures["refused_calls"] = dict(example.node.refused)
            figures["node_calls"] = sum(example.node.calls.values())
            figures["fork_replay_named"] = "from fork replay" in example.proc.stdout + example.proc.stderr
        return figures
    finally:
        stop(example)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1)
    options = parser.parse_args()
    load = [round(x, 2) for x in os.getloadavg()]
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        project, compile_s = compiled_example(root)
        runs: dict[str, list[dict]] = {"traces": [], "hosted": []}
        for index in range(options.rounds):
            for kind in ("traces", "hosted"):
                where = root / f"{kind}-{index}"
                where.mkdir()
                runs[kind].append(one_deploy(project, where, kind == "hosted"))
                print(kind, runs[kind][-1], flush=True)
    baseline = statistics.median(r["wall_s"] for r in runs["traces"])
    hosted = statistics.median(r["wall_s"] for r in runs["hosted"])
    result = {
        "rounds": options.rounds,
        "cpus": os.cpu_count(),
        "load_average_at_start": load,
        "compile_s": round(compile_s, 2),
        "baseline_traces_wall_s": baseline,
        "hosted_wall_s": hosted,
        "extra_s": round(hosted - baseline, 2),
        "ratio": round(hosted / baseline, 3),
        "runs": runs,
    }
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps({k: v for k, v in result.items() if k != "runs"}, indent=2))


if __name__ == "__main__":
    main()
