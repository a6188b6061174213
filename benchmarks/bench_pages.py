"""Time to serve the explorer's pages, against getsourcecode for the same contract as the baseline.

    python benchmarks/bench_pages.py [--files 40] [--contracts 200] [--rounds 20]

A real uvicorn on loopback (the embedded LocalExplorer) over a store holding --contracts verified
contracts, one of them a standard-json input of --files OpenZeppelin sources. Measured, each the
median of --rounds GETs:
- baseline: getsourcecode of the big contract (the same record, as JSON, no highlighting);
- contract page, first view (sources highlighted by Pygments), and repeat views (highlight cache);
- the Verified Contracts page (25 rows) and a search.
Target: a repeat contract page within 3 x the baseline; a first view under 1 s.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import requests

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from ape_contract_verify.explorer.store import VerifiedContract  # noqa: E402
from ape_contract_verify.server import code_tab  # noqa: E402
from ape_contract_verify.server.runner import start_embedded  # noqa: E402

OZ = REPO / "toolchain" / "node_modules" / "@openzeppelin" / "contracts"
RESULTS = REPO / "benchmarks" / "results" / "bench_pages.json"


class QuietChain:
    """The pages read no chain for a verified contract; this answers the explorer's start-up."""

    def chain_id(self) -> int:
        return 31337

    def get_code(self, address: str) -> bytes:
        return b"\x60\x80"

    def get_storage_at(self, address: str, slot: int) -> bytes:
        return b"\0" * 32

    def call(self, to: str, data: bytes) -> bytes:
        return b""

    def find_creation(self, address: str):
        return None


def big_contract(files: int) -> VerifiedContract:
    paths = sorted(OZ.glob("**/*.sol"))[:files]
    if len(paths) < files:
        raise SystemExit(f"OpenZeppelin sources missing under {OZ}: run `make` (toolchain/install.sh)")
    sources = {f"@openzeppelin/contracts/{p.relative_to(OZ)}": {"content": p.read_text()} for p in paths}
    return VerifiedContract(
        address="0x" + "ee" * 20,
        contract_name=f"{next(iter(sources))}:Big",
        compiler_version="v0.8.26+commit.8a97fa7a",
        code_format="solidity-standard-json-input",
        source_code=json.dumps(
            {"language": "Solidity", "sources": sources, "settings": {"optimizer": {"enabled": True}}}
        ),
        abi=json.dumps([{"type": "function", "name": "f", "stateMutability": "view", "inputs": [], "outputs": []}]),
    )


def small_contract(number: int) -> VerifiedContract:
    return VerifiedContract(
        address="0x" + f"{number:040x}",
        contract_name=f"src/C{number}.sol:C{number}",
        compiler_version="v0.8.26+commit.8a97fa7a",
        code_format="solidity-single-file",
        source_code=f"// SPDX-License-Identifier: MIT\ncontract C{number} {{}}\n",
        abi="[]",
    )


def timed(url: str, rounds: int, **params) -> tuple[float, int]:
    samples, size = [], 0
    session = requests.Session()
    for _ in range(rounds):
        started = time.perf_counter()
        response = session.get(url, params=params, timeout=60)
        samples.append(time.perf_counter() - started)
        assert response.status_code == 200, response.text[:300]
        size = len(response.content)
    return statistics.median(samples), size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=40)
    parser.add_argument("--contracts", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()

    explorer = start_embedded(QuietChain())
    try:
        for number in range(1, args.contracts):
            explorer.store.save_contract(small_contract(number))
        big = big_contract(args.files)
        explorer.store.save_contract(big)
        page_url = f"{explorer.url}/address/{big.address}"

        baseline, api_bytes = timed(
            explorer.base_url, args.rounds, module="contract", action="getsourcecode", address=big.address
        )
        code_tab.clear_highlighted()
        started = time.perf_counter()
        first = requests.get(page_url, timeout=60)
        first_view = time.perf_counter() - started
        assert first.status_code == 200
        repeat, page_bytes = timed(page_url, args.rounds)
        listing, list_bytes = timed(explorer.url + "/", args.rounds)
        search, _ = timed(explorer.url + "/", args.rounds, q="C1")
    finally:
        explorer.stop()

    figures = {
        "files": args.files,
        "contracts": args.contracts,
        "rounds": args.rounds,
        "source_bytes": len(big.source_code),
        "baseline_getsourcecode_s": round(baseline, 5),
        "getsourcecode_bytes": api_bytes,
        "contract_page_first_view_s": round(first_view, 5),
        "contract_page_repeat_s": round(repeat, 5),
        "contract_page_bytes": page_bytes,
        "verified_contracts_page_s": round(listing, 5),
        "verified_contracts_page_bytes": list_bytes,
        "search_page_s": round(search, 5),
        "ratio_first_view_to_baseline": round(first_view / baseline, 2),
        "ratio_repeat_to_baseline": round(repeat / baseline, 2),
        "ratio_list_to_baseline": round(listing / baseline, 2),
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(figures, indent=2) + "\n")
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
