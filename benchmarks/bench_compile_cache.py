"""Time to verify N deployments of the same source at different addresses, against verifying one.

    python benchmarks/bench_compile_cache.py [--count 20] [--repeat 3]

A real anvil on loopback holds N deployments of one contract (tests/contracts_engine/Box.sol),
each with its own constructor arguments. Each measurement starts with an empty compile cache:
- baseline: verify one deployment (one solc-js compile, then the chain comparison);
- many: verify all N deployments (the compile cache answers every one after the first).
Each figure is the median of --repeat rounds. Also reported: the cost of one cache hit, and what N would cost if every verification compiled
(N x baseline). Target: many <= 2 x baseline.
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

import requests

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from ape_contract_verify.engine.compilers import CompileCache, compile_input, with_output_selection  # noqa: E402
from ape_contract_verify.engine.verifier import Verifier  # noqa: E402
from ape_contract_verify.evm.chain import JsonRpcChain  # noqa: E402
from ape_contract_verify.request import CodeFormat, VerificationRequest  # noqa: E402

SOLC = "v0.8.26+commit.8a97fa7a"
UNIT = "src/Box.sol"
RESULTS = REPO / "benchmarks" / "results" / "bench_compile_cache.json"


class Anvil:
    def __init__(self, timeout: float = 30.0):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        self.proc = subprocess.Popen(
            [str(REPO / ".venv" / "bin" / "anvil"), "--host", "127.0.0.1", "--port", str(port), "--silent"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.account = self.rpc("eth_accounts")[0]
                return
            except requests.RequestException:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    self.stop()
                    raise SystemExit("anvil did not start")
                time.sleep(0.1)

    def rpc(self, method, *params):
        body = requests.post(
            self.url, json={"jsonrpc": "2.0", "id": 1, "method": method, "params": list(params)}, timeout=30
        ).json()
        if "error" in body:
            raise RuntimeError(body["error"])
        return body["result"]

    def deploy(self, data: bytes) -> str:
        tx_hash = self.rpc(
            "eth_sendTransaction", {"from": self.account, "data": "0x" + data.hex(), "gas": hex(5_000_000)}
        )
        for _ in range(200):  # anvil mines at once; the receipt can lag a moment
            receipt = self.rpc("eth_getTransactionReceipt", tx_hash)
            if receipt:
                return receipt["contractAddress"]
            time.sleep(0.02)
        raise RuntimeError(f"no receipt for {tx_hash}")

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    options = parser.parse_args()

    from eth_abi import encode

    input_json = {
        "language": "Solidity",
        "sources": {UNIT: {"content": (REPO / "tests" / "contracts_engine" / "Box.sol").read_text()}},
        "settings": {"optimizer": {"enabled": True, "runs": 200}},
    }
    creation = compile_input(SOLC, with_output_selection(input_json, UNIT, "Box"))["contracts"][UNIT]["Box"]["evm"][
        "bytecode"
    ]["object"]
    anvil = Anvil()
    try:
        requests_ = []
        for index in range(options.count):
            args = encode(
                ["uint256", "address", "string", "bytes32", "int16[]"],
                [index, anvil.account, f"box {index}", bytes([index]) * 32, [index]],
            )
            address = anvil.deploy(bytes.fromhex(creation) + args)
            requests_.append(
                VerificationRequest(
                    address=address,
                    contract_name=f"{UNIT}:Box",
                    source_code=json.dumps(input_json),
                    code_format=CodeFormat.STANDARD_JSON,
                    compiler_version=SOLC,
                    constructor_arguments=args.hex(),
                )
            )
        chain = JsonRpcChain(anvil.url)
        chain.chain_id()

        def run(batch, cache=None):
            verifier = Verifier(chain, cache if cache is not None else CompileCache())
            start = time.perf_counter()
            results = [verifier.verify(request) for request in batch]
            elapsed = time.perf_counter() - start
            failed = [r.text for r in results if r.match != "full"]
            if failed:
                raise SystemExit(f"a verification failed: {failed[0]}")
            return elapsed, verifier.cache

        # Medians of --repeat rounds, alternating, each with an empty cache (the machine is shared).
        ones, manys = [], []
        for _ in range(options.repeat):
            ones.append(run(requests_[-1:])[0])
            elapsed, cache = run(requests_)
            manys.append(elapsed)
        one, many = statistics.median(ones), statistics.median(manys)
        warm, _ = run(requests_, cache)  # every one a cache hit: the chain comparison alone
        figures = {
            "count": options.count,
            "repeat": options.repeat,
            "verify_one_s": round(one, 3),
            f"verify_{options.count}_s": round(many, 3),
            "ratio": round(many / one, 2),
            "target_ratio": 2.0,
            "compiles_for_many": cache.compiles,
            "cache_hits_for_many": cache.hits - options.count,
            "per_cached_verify_ms": round(warm / options.count * 1000, 1),
            "without_cache_estimate_s": round(one * options.count, 2),
            "rounds_one_s": [round(t, 3) for t in ones],
            f"rounds_{options.count}_s": [round(t, 3) for t in manys],
            "compiler": SOLC + " (solc-js through toolchain/solc-native.js)",
        }
    finally:
        anvil.stop()
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(figures, indent=2) + "\n")
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
