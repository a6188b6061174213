"""Fakes and helpers shared by the service tests (tests/test_service_*.py).

The fakes stand in for the verification engine and the chain only where a test is about the
service itself (protocol, queue, storage, keys, bad input); the end-to-end tests use the real engine.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any, Optional

import requests

ADDRESS_A = "0x" + "a1" * 20
ADDRESS_B = "0x" + "b2" * 20
PROXY_ADDR = "0x" + "c3" * 20
IMPL_ADDR = "0x" + "d4" * 20
EMPTY_ADDR = "0x" + "00" * 19 + "01"
PLAIN_ADDR = "0x" + "e5" * 20  # code without DELEGATECALL
DELEGATING_ADDR = "0x" + "f6" * 20  # DELEGATECALL, but no known proxy slot


class FakeChain:
    """A ChainReader over a dict of codes; counts calls so tests can see what was read."""

    def __init__(self, codes: Optional[dict[str, bytes]] = None, chain_id: int = 31337):
        self.codes = {k.lower(): v for k, v in (codes or default_codes()).items()}
        self._chain_id = chain_id
        self.calls = 0

    def chain_id(self) -> int:
        return self._chain_id

    def get_code(self, address: str) -> bytes:
        self.calls += 1
        return self.codes.get(address.lower(), b"")

    def get_storage_at(self, address: str, slot: int) -> bytes:
        return b"\x00" * 32

    def call(self, to: str, data: bytes) -> bytes:
        return b""

    def find_creation(self, address: str) -> Any:
        if address.lower() not in self.codes:
            return None
        return {"deployer": "0x" + "99" * 20, "tx_hash": "0x" + "ab" * 32, "block": 7}


def default_codes() -> dict[str, bytes]:
    return {
        ADDRESS_A: bytes.fromhex("6080604052"),
        ADDRESS_B: bytes.fromhex("6080604053"),
        PROXY_ADDR: bytes.fromhex("3660008037f4"),
        IMPL_ADDR: bytes.fromhex("6080604054"),
        PLAIN_ADDR: bytes.fromhex("600160015500"),
        DELEGATING_ADDR: bytes.fromhex("36f400"),
    }


@dataclass
class FakeResult:
    verified: bool
    match: Optional[str] = None
    reason: str = ""
    abi: Any = field(default_factory=list)
    contract_name: str = ""
    compiler_version: str = ""
    settings: dict = field(default_factory=dict)
    constructor_arguments: str = ""
    libraries: dict = field(default_factory=dict)
    license_type: Optional[int] = None


@dataclass
class FakeProxyInfo:
    kind: str
    implementation: Optional[str]
    beacon: Optional[str] = None


class FakeEngine:
    """Verifies a submission when its source contains `contract <Name>` for the submitted name;
    sources containing `// FAIL: <reason>` fail with that reason, `// PARTIAL` match partially,
    `// CRASH` raise, and every verify takes `delay` seconds (to keep jobs queued)."""

    def __init__(self, chain: FakeChain, delay: float = 0.0):
        self.chain = chain
        self.delay = delay
        self.verified: list[str] = []
        self.gate = threading.Event()
        self.gate.set()

    def verify(self, request) -> FakeResult:
        self.gate.wait(30)
        if self.delay:
            time.sleep(self.delay)
        self.verified.append(request.address)
        source = request.source_code
        if "// CRASH" in source:
            raise RuntimeError("solc died with signal 11")
        if "// FAIL:" in source:
            return FakeResult(False, reason=source.split("// FAIL:", 1)[1].splitlines()[0].strip())
        if f"contract {request.bare_name}" not in source:
            return FakeResult(False, reason=f"Unable to locate ContractName {request.bare_name}")
        abi = [{"type": "function", "name": "value", "inputs": [], "outputs": [{"type": "uint256", "name": ""}],
                "stateMutability": "view"}]
        return FakeResult(
            True,
            match="partial" if "// PARTIAL" in source else "full",
            abi=abi,
            contract_name=request.contract_name,
            compiler_version=request.compiler_version,
            constructor_arguments=request.constructor_arguments,
            libraries=dict(request.libraries),
            license_type=request.license_type,
        )

    def detect_proxy(self, address: str):
        self.gate.wait(30)
        if address.lower() == PROXY_ADDR:
            return FakeProxyInfo("eip1967", IMPL_ADDR)
        return None

    def has_delegatecall(self, code: bytes) -> bool:
        return b"\xf4" in code

    def get_code(self, address: str) -> bytes:
        return self.chain.get_code(address)


SOURCE = "// SPDX-License-Identifier: MIT\npragma solidity 0.8.26;\ncontract Box { uint256 public value; }\n"


def form(address: str = ADDRESS_A, source: str = SOURCE, **extra: str) -> dict[str, str]:
    data = {
        "module": "contract",
        "action": "verifysourcecode",
        "contractaddress": address,
        "sourceCode": source,
        "codeformat": "solidity-single-file",
        "contractname": "Box",
        "compilerversion": "v0.8.26+commit.8a97fa7a",
        "optimizationUsed": "1",
        "runs": "200",
        "constructorArguements": "",
    }
    data.update(extra)
    return data


def get(base_url: str, timeout: float = 10, **params: str) -> dict:
    params.setdefault("module", "contract")
    response = requests.get(base_url, params=params, timeout=timeout)
    assert response.status_code == 200, response.text
    return response.json()


def post(base_url: str, data: dict, timeout: float = 10, **kwargs) -> dict:
    response = requests.post(base_url, data=data, timeout=timeout, **kwargs)
    assert response.status_code == 200, response.text
    return response.json()


def poll(base_url: str, guid: str, action: str = "checkverifystatus", timeout: float = 60.0,
         method: str = "GET") -> dict:
    """checkverifystatus (or checkproxyverification) until it is not pending; bounded by `timeout`."""
    deadline = time.monotonic() + timeout
    answer: dict = {}
    while time.monotonic() < deadline:
        params = {"module": "contract", "action": action, "guid": guid}
        if method == "POST":
            answer = post(base_url, params)
        else:
            answer = get(base_url, **params)
        if answer["result"] not in ("Pending in queue", "Verification in progress"):
            return answer
        time.sleep(0.1)
    raise AssertionError(f"{guid} still pending after {timeout} s: {answer}")
