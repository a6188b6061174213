"""What Vyper verification costs on the local explorer's engine, against a full match.

    python benchmarks/bench_vyper.py [--repeat 3]

A real anvil holds Escrow (tests/data/vyper_project: a .vyi interface, an initialized module,
immutables), deployed with optimize gas, and a Vyper 0.3.10 counter. Every measurement starts
with an empty compile cache and is the median of --repeat rounds:
- baseline: verify Escrow with vyper 0.4.3 (one vyper-json compile, then the comparisons);
- cached: the same submission again, the compile answered by the cache;
- wrong_mode: Escrow submitted with optimize codesize; the engine recompiles single-setting
  variants (at most 4) until one reproduces the chain, and names it;
- vyper_0_3_10: verify the 0.3.10 contract with the side-venv compiler (.vyper/0.3.10).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from ape_contract_verify.engine.compilers import CompileCache, compile_vyper_json  # noqa: E402
from ape_contract_verify.engine.verifier import Verifier  # noqa: E402
from ape_contract_verify.evm.chain import JsonRpcChain  # noqa: E402
from ape_contract_verify.request import CodeFormat, VerificationRequest  # noqa: E402
from support.service import Anvil, encode  # noqa: E402
from support.vyper import COUNTER_0310, ESCROW, ESCROW_TYPES, TOKEN, escrow_input  # noqa: E402

RESULTS = REPO / "benchmarks" / "results" / "bench_vyper.json"


def request(
    address: str, input_json: dict, name: str, args: bytes, version: str = "vyper:0.4.3"
) -> VerificationRequest:
    return VerificationRequest(
        address=address,
        contract_name=name,
        source_code=json.dumps(input_json),
        code_format=CodeFormat.VYPER_JSON,
        compiler_version=version,
        constructor_arguments=args.hex(),
    )


def timed(chain: JsonRpcChain, req: VerificationRequest, warm: bool = False) -> tuple[float, object]:
    verifier = Verifier(chain, CompileCache())
    if warm:
        verifier.verify(req)
    started = time.perf_counter()
    result = verifier.verify(req)
    return time.perf_counter() - started, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    options = parser.parse_args()
    anvil = Anvil()
    try:
        chain = JsonRpcChain(anvil.url)
        escrow_args = encode(ESCROW_TYPES, [TOKEN, 250, anvil.accounts[0]])
        gas = compile_vyper_json("vyper:0.4.3", escrow_input("gas"))["contracts"][ESCROW]["Escrow"]["evm"]
        escrow = anvil.deploy(gas["bytecode"]["object"], escrow_args)
        legacy_input = {
            "language": "Vyper",
            "sources": {"contracts/Counter310.vy": {"content": COUNTER_0310}},
            "settings": {"evmVersion": "shanghai", "optimize": "gas"},
        }
        legacy_evm = compile_vyper_json("vyper:0.3.10", legacy_input)["contracts"]["contracts/Counter310.vy"][
            "Counter310"
        ]["evm"]
        legacy_args = encode(["address", "uint256"], [anvil.accounts[1], 5])
        legacy = anvil.deploy(legacy_evm["bytecode"]["object"], legacy_args)

        cases = {
            "baseline": (request(escrow, escrow_input("gas"), f"{ESCROW}:Escrow", escrow_args), False, "full"),
            "cached": (request(escrow, escrow_input("gas"), f"{ESCROW}:Escrow", escrow_args), True, "full"),
            "wrong_mode": (request(escrow, escrow_input("codesize"), f"{ESCROW}:Escrow", escrow_args), False, None),
            "vyper_0_3_10": (
                request(legacy, legacy_input, "contracts/Counter310.vy:Counter310", legacy_args, "vyper:0.3.10"),
                False,
                "full",
            ),
        }
        seconds: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(options.repeat):
            for name, (req, warm, expected) in cases.items():
                elapsed, result = timed(chain, req, warm)
                assert result.match == expected, (name, result.reason)
                if name == "wrong_mode":
                    assert "compiled with settings.optimize=gas" in result.reason, result.reason
                seconds[name].append(elapsed)
    finally:
        anvil.stop()
    medians = {name: round(statistics.median(values), 4) for name, values in seconds.items()}
    base = medians["baseline"]
    figures = {
        "repeat": options.repeat,
        "seconds_median": medians,
        "ratio_to_baseline": {name: round(value / base, 3) for name, value in medians.items()},
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(figures, indent=2) + "\n")
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
