"""Fakes and helpers shared by the service tests (tests/unit/server/, tests/engine/test_service_*.py).

The fakes stand in for the verification engine and the chain only where a test is about the
service itself (protocol, queue, storage, keys, bad input); the end-to-end tests use the real engine.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import requests

from ape_contract_verify.engine.compilers import single_file_input
from ape_contract_verify.engine.verifier import VerificationResult
from ape_contract_verify.evm.reads import Creation

ADDRESS_A = "0x" + "a1" * 20
ADDRESS_B = "0x" + "b2" * 20
PROXY_ADDR = "0x" + "c3" * 20
IMPL_ADDR = "0x" + "d4" * 20
EMPTY_ADDR = "0x" + "00" * 19 + "01"
PLAIN_ADDR = "0x" + "e5" * 20  # code without DELEGATECALL
DELEGATING_ADDR = "0x" + "f6" * 20  # DELEGATECALL, but no known proxy slot


class FakeChain:
    """A ChainReader over a dict of codes; counts calls so tests can see what was read."""

    def __init__(self, codes: dict[str, bytes] | None = None, chain_id: int = 31337):
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

    def find_creation(self, address: str) -> Creation | None:
        if address.lower() not in self.codes:
            return None
        return Creation("0x" + "ab" * 32, b"\x60\x80" + self.codes[address.lower()], "0x" + "99" * 20, block=7)


def default_codes() -> dict[str, bytes]:
    return {
        ADDRESS_A: bytes.fromhex("6080604052"),
        ADDRESS_B: bytes.fromhex("6080604053"),
        PROXY_ADDR: bytes.fromhex("3660008037f4"),
        IMPL_ADDR: bytes.fromhex("6080604054"),
        PLAIN_ADDR: bytes.fromhex("600160015500"),
        DELEGATING_ADDR: bytes.fromhex("36f400"),
    }


class FakeResult(VerificationResult):
    """The engine's own result type (the job runner reads its fields), with the fake's few given."""

    def __init__(self, verified: bool, match: str | None = None, reason: str = "", **fields: Any):
        super().__init__(verified, match, reason, **fields)


@dataclass
class FakeProxyInfo:
    kind: str
    implementation: str | None
    beacon: str | None = None


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
        abi = [
            {
                "type": "function",
                "name": "value",
                "inputs": [],
                "outputs": [{"type": "uint256", "name": ""}],
                "stateMutability": "view",
            }
        ]
        return FakeResult(
            True,
            match="partial" if "// PARTIAL" in source else "full",
            abi=abi,
            contract_name=request.contract_name,
            compiler_version=request.compiler_version,
            constructor_arguments=request.constructor_arguments,
            libraries=dict(request.libraries),
            license_type=request.license_type,
            # what a compile of a single file would report: the form's settings
            settings=single_file_input(
                source,
                optimizer=request.optimization_used,
                runs=request.runs,
                evm_version=request.evm_version,
                via_ir=request.via_ir,
            )["settings"]
            if request.code_format == "solidity-single-file"
            else {},
            optimization_used=bool(request.optimization_used),
            runs=request.runs or 200,
            evm_version=request.evm_version or "Default",
            via_ir=bool(request.via_ir),
        )

    def detect_proxy(self, address: str):
        self.gate.wait(30)
        if address.lower() == PROXY_ADDR:
            return FakeProxyInfo("eip1967", IMPL_ADDR)
        return None

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


def poll(
    base_url: str, guid: str, action: str = "checkverifystatus", timeout: float = 60.0, method: str = "GET"
) -> dict:
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


def wait_until(predicate: Callable[[], bool], timeout: float, interval: float = 0.05) -> bool:
    """Poll `predicate` until true or `timeout` seconds pass."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return predicate()


# -- real parts for the end-to-end tests -----------------------------------------------------

import json as _json  # noqa: E402 (this part's own imports)
import os  # noqa: E402 (this part's own imports)
import socket  # noqa: E402 (this part's own imports)
import subprocess  # noqa: E402 (this part's own imports)
import sys  # noqa: E402 (this part's own imports)
from pathlib import Path  # noqa: E402 (this part's own imports)

REPO = Path(__file__).resolve().parents[2]
EXAMPLE_CONTRACTS = REPO / "example" / "contracts"
VENV_BIN = Path(sys.executable).parent
SOLC_0826 = "v0.8.26+commit.8a97fa7a"
SOLC_0837 = "v0.8.37+commit.f401782d"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Anvil:
    """A real anvil on a free loopback port; deploys with eth_sendTransaction from its unlocked accounts."""

    def __init__(self, startup_timeout: float = 30.0, port: int | None = None, extra: tuple = ()):
        """`port` to restart a node where clients expect it; `extra` anvil options (e.g. `--state FILE`)."""
        binary = VENV_BIN / "anvil"
        if not binary.exists():
            raise RuntimeError(f"anvil is missing at {binary}: run `make` (toolchain/install.sh)")
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen(
            [str(binary), "--host", "127.0.0.1", "--port", str(self.port), "--silent", *extra],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + startup_timeout
        while True:
            try:
                self.accounts = self.rpc("eth_accounts")
                return
            except requests.RequestException:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"anvil did not start within {startup_timeout} s")
                time.sleep(0.1)

    def rpc(self, method: str, *params: Any) -> Any:
        body = requests.post(
            self.url, json={"jsonrpc": "2.0", "id": 1, "method": method, "params": list(params)}, timeout=30
        ).json()
        if "error" in body:
            raise RuntimeError(f"{method}: {body['error']}")
        return body["result"]

    def transact(self, data: bytes | str, to: str | None = None, sender: str | None = None) -> dict:
        tx = {
            "from": sender or self.accounts[0],
            "data": data if isinstance(data, str) else "0x" + data.hex(),
            "gas": hex(8_000_000),
        }
        if to:
            tx["to"] = to
        tx_hash = self.rpc("eth_sendTransaction", tx)
        for _ in range(200):  # anvil mines at once; the bound is a safety net
            receipt = self.rpc("eth_getTransactionReceipt", tx_hash)
            if receipt:
                if receipt.get("status") != "0x1":
                    raise RuntimeError(f"transaction {tx_hash} reverted")
                return receipt
            time.sleep(0.05)
        raise RuntimeError(f"no receipt for {tx_hash}")

    def deploy(self, creation: bytes | str, args: bytes = b"") -> str:
        code = creation if isinstance(creation, bytes) else bytes.fromhex(creation.removeprefix("0x"))
        return self.transact(code + args)["contractAddress"]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)


def example_source(path: str) -> str:
    return (EXAMPLE_CONTRACTS / path).read_text()


def standard_input(paths: list[str], prefix: str = "contracts/", **settings: Any) -> dict:
    """A standard-json input of example contracts, named as an Ape project names them."""
    return {
        "language": "Solidity",
        "sources": {prefix + p: {"content": example_source(p)} for p in paths},
        "settings": {"optimizer": {"enabled": True, "runs": 200}, **settings},
    }


def solc_compile(input_json: dict, version: str = "0.8.26") -> dict:
    """The real compiler (solc-js shim via py-solc-x), with the ABI and bytecode selected. Within a
    run it goes through the run's compile cache (tests/conftest.py), keyed by the executable (a
    test's fake solc is another key): the modules deploy the same example sources."""
    import solcx
    from solcx.install import get_executable

    from ape_contract_verify.engine.compilers import CompileCache

    full = _json.loads(_json.dumps(input_json))
    full["settings"]["outputSelection"] = {"*": {"*": ["abi", "evm.bytecode.object"]}}
    executable = get_executable(version)
    return CompileCache().get_or_compile(
        str(executable), full, lambda: solcx.compile_standard(full, solc_binary=executable)
    )


def encode(types: list[str], values: list[Any]) -> bytes:
    from eth_abi import encode as abi_encode

    return abi_encode(types, values)


def json_form(
    address: str, input_json: dict, contract_name: str, args: bytes = b"", version: str = SOLC_0826, **extra: str
) -> dict[str, str]:
    data = {
        "module": "contract",
        "action": "verifysourcecode",
        "contractaddress": address,
        "sourceCode": _json.dumps(input_json),
        "codeformat": "solidity-standard-json-input",
        "contractname": contract_name,
        "compilerversion": version,
        "constructorArguements": args.hex(),
    }
    data.update(extra)
    return data


class ServerProcess:
    """`ape verify serve` (or `python -m …explorer.server`) as a child process, with its base URL."""

    def __init__(
        self, rpc_url: str, db_path: Path, use_ape: bool = False, extra: tuple = (), startup_timeout: float = 60.0
    ):
        if use_ape:
            command = [str(VENV_BIN / "ape"), "verify", "serve"]
        else:
            command = [sys.executable, "-m", "ape_contract_verify.server.runner"]
        command += ["--rpc", rpc_url, "--db", str(db_path), *extra]
        env = dict(os.environ, PYTHONUNBUFFERED="1", PATH=f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}")
        env.setdefault("SOLCX_BINARY_PATH", str(REPO / ".solcx"))
        self.proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
        self.lines: list[str] = []
        self.base_url = ""
        found = threading.Event()

        def pump():
            for line in self.proc.stdout:
                self.lines.append(line.rstrip("\n"))
                if line.startswith("Base URL: "):
                    self.base_url = line.split("Base URL: ", 1)[1].strip()
                    found.set()
            found.set()

        threading.Thread(target=pump, daemon=True).start()
        if not found.wait(startup_timeout) or not self.base_url:
            self.kill()
            raise RuntimeError("the explorer did not print its base URL:\n" + "\n".join(self.lines[-30:]))

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(2)  # SIGINT, as Ctrl-C
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)


def vyper_input(paths: list[str], prefix: str = "contracts/") -> dict:
    return {
        "language": "Vyper",
        "sources": {prefix + p: {"content": example_source(p)} for p in paths},
        "settings": {"evmVersion": "cancun"},
    }


def vyper_compile(input_json: dict) -> dict:
    """The real Vyper compiler (`vyper-json` of the venv)."""
    full = _json.loads(_json.dumps(input_json))
    full["settings"]["outputSelection"] = {"*": ["abi", "evm.bytecode.object"]}
    out = subprocess.run(
        [str(VENV_BIN / "vyper-json")], input=_json.dumps(full), capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    return _json.loads(out.stdout)
