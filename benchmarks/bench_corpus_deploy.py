"""A real protocol's deployment: Uniswap V2 core (corpus/uniswap-v2) deployed alone, against
deployed with verification after deploy, in one run.

    python benchmarks/bench_corpus_deploy.py [--repeat 3]

A scratch copy of corpus/uniswap-v2 (the npm package's sources; solc 0.5.16, 999999 runs,
istanbul) is compiled once by `ape compile`, which keeps Ape's build in a seed compile cache
(workflow/ape_builds.py). Each round starts fresh anvils and runs the project's own
`ape run deploy` (a factory, three test ERC20 tokens, two pairs the factory creates with CREATE2):
- baseline: `contract_verify.auto: false` (the plugin only records what was deployed);
- auto: `contract_verify.auto: true`, nothing else configured, the compile cache as `ape compile`
  left it (Ape's build and nothing else): the embedded local explorer verifies all six while the
  script runs, and `ape run` ends when the last verification has ended;
- warm: auto on again with that round's compile cache kept;
- no build: auto on with an empty compile cache, as for a project compiled before the plugin was
  installed: every input is compiled (the contracts' own, as `minimal_input` sends them).
All timed end to end, as a user waits for them (Ape's start-up included). Figures are medians of
--repeat rounds, alternating; the ratio is auto / baseline, and the added times are also given as a
share of Ape's own compile of the package (`ape compile`).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import requests
import yaml

REPO = Path(__file__).resolve().parents[1]
PROJECT = REPO / "corpus" / "uniswap-v2"
RESULTS = REPO / "benchmarks" / "results" / "bench_corpus_deploy.json"
BIN = REPO / ".venv" / "bin"
NETWORK = "ethereum:local:foundry"
CONTRACTS = 6
ROW = re.compile(
    r"^(\S.*?)\s{2,}(0x[0-9a-fA-F]{40})\s{2,}(verified|already verified|failed|pre-check failed|error|skipped)\b", re.M
)


def tool_env(**extra: str) -> dict:
    env = dict(os.environ)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env["SOLCX_BINARY_PATH"] = str(REPO / ".solcx")
    env.update(extra)
    return env


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

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)


def configure(project: Path, **sections) -> None:
    path = project / "ape-config.yaml"
    config = yaml.safe_load(path.read_text())
    for key, value in sections.items():
        config[key] = {**config.get(key, {}), **value}
    path.write_text(yaml.safe_dump(config, sort_keys=False))


def deploy(project: Path, auto: bool, cache: Path) -> tuple[float, str]:
    anvil = Anvil()
    try:
        configure(project, foundry={"host": anvil.url}, contract_verify={"auto": auto})
        start = time.perf_counter()
        proc = subprocess.run(
            [str(BIN / "ape"), "run", "deploy", "--network", NETWORK],
            cwd=project,
            capture_output=True,
            text=True,
            timeout=900,
            env=tool_env(APE_CONTRACT_VERIFY_COMPILE_CACHE=str(cache)),
        )
        elapsed = time.perf_counter() - start
    finally:
        anvil.stop()
    if proc.returncode != 0:
        raise SystemExit(
            f"ape run deploy (auto={auto}) exited {proc.returncode}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        )
    return elapsed, proc.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-corpus-") as scratch:
        project = Path(scratch) / "uniswap-v2"
        # The copy follows the project's link into toolchain/: it holds the package's own files.
        shutil.copytree(PROJECT, project, ignore=shutil.ignore_patterns(".build", ".cache"))
        seed = Path(scratch) / "cache-seed"
        start = time.perf_counter()
        subprocess.run(
            [str(BIN / "ape"), "compile"],
            cwd=project,
            check=True,
            capture_output=True,
            timeout=900,
            env=tool_env(APE_CONTRACT_VERIFY_COMPILE_CACHE=str(seed)),
        )
        compile_s = time.perf_counter() - start
        if not list(seed.glob("build-*.json")):
            raise SystemExit("`ape compile` kept no build in the compile cache")
        alone, verified, warm, unbuilt, outcomes = [], [], [], [], {}
        for round_ in range(options.repeat):
            alone.append(deploy(project, False, Path(scratch) / f"cache-off-{round_}")[0])
            cache = shutil.copytree(seed, Path(scratch) / f"cache-on-{round_}")
            elapsed, stdout = deploy(project, True, cache)
            verified.append(elapsed)
            warm.append(deploy(project, True, cache)[0])
            unbuilt.append(deploy(project, True, Path(scratch) / f"cache-empty-{round_}")[0])
            rows = ROW.findall(stdout)
            outcomes = {}
            for _, _, outcome in rows:
                outcomes[outcome] = outcomes.get(outcome, 0) + 1
            if len(rows) != CONTRACTS:
                raise SystemExit(f"the summary has {len(rows)} rows, not {CONTRACTS}:\n{stdout[-3000:]}")
            if compiled := [path.name for path in cache.iterdir() if not path.name.startswith("build-")]:
                raise SystemExit(f"verification compiled what Ape had built: {compiled}")
    baseline, auto, hits = statistics.median(alone), statistics.median(verified), statistics.median(warm)
    no_build = statistics.median(unbuilt)
    figures = {
        "protocol": "@uniswap/v2-core 1.0.1 (solc 0.5.16, 999999 runs, istanbul)",
        "contracts": CONTRACTS,
        "repeat": options.repeat,
        "compile_s": round(compile_s, 2),
        "deploy_alone_s": round(baseline, 2),
        "deploy_and_verify_s": round(auto, 2),
        "ratio": round(auto / baseline, 2),
        "verification_adds_s": round(auto - baseline, 2),
        "adds_per_ape_compile": round((auto - baseline) / compile_s, 2),
        "warm_deploy_and_verify_s": round(hits, 2),
        "warm_verification_adds_s": round(hits - baseline, 2),
        "warm_adds_per_ape_compile": round((hits - baseline) / compile_s, 2),
        "no_build_deploy_and_verify_s": round(no_build, 2),
        "no_build_adds_per_ape_compile": round((no_build - baseline) / compile_s, 2),
        "outcomes": outcomes,
        "rounds_alone_s": [round(t, 2) for t in alone],
        "rounds_verified_s": [round(t, 2) for t in verified],
        "rounds_warm_s": [round(t, 2) for t in warm],
        "rounds_no_build_s": [round(t, 2) for t in unbuilt],
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(figures, indent=2) + "\n")
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
