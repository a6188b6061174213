"""Helpers for the verification-engine tests: a real anvil, raw JSON-RPC deploys, real compiles.

Not a test module by content; it is named test_engine_* to stay within the engine's files, and
the test modules import it (pytest puts tests/ on sys.path).
"""

from __future__ import annotations

import json
import socket
import subprocess
import time
from pathlib import Path
from typing import Any, Optional

import requests

from ape_contract_verify.engine.compilers import CompileCache, compile_input, single_file_input, with_output_selection
from ape_contract_verify.request import CodeFormat, VerificationRequest

REPO = Path(__file__).resolve().parents[2]
CONTRACTS = Path(__file__).resolve().parents[1] / "contracts_engine"
SOLC = "v0.8.26+commit.8a97fa7a"
ANVIL = REPO / ".venv" / "bin" / "anvil"


def source(name: str) -> str:
    return (CONTRACTS / name).read_text()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Anvil:
    """A real anvil on a free loopback port; `rpc()` speaks raw JSON-RPC to it."""

    def __init__(self, startup_timeout: float = 30.0, extra_args: tuple[str, ...] = ()):
        if not ANVIL.exists():
            raise RuntimeError(f"anvil is missing at {ANVIL}: run toolchain/install.sh (make)")
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen(
            [str(ANVIL), "--host", "127.0.0.1", "--port", str(self.port), "--silent", *extra_args],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + startup_timeout
        while True:
            try:
                self.accounts = self.rpc("eth_accounts")
                break
            except requests.RequestException:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"anvil did not start within {startup_timeout} s")
                time.sleep(0.1)

    def rpc(self, method: str, *params: Any) -> Any:
        body = requests.post(self.url, json={"jsonrpc": "2.0", "id": 1, "method": method, "params": list(params)}, timeout=30).json()
        if "error" in body:
            raise RuntimeError(f"{method}: {body['error']}")
        return body["result"]

    def send(self, data: "bytes | str", to: Optional[str] = None, sender: Optional[str] = None) -> dict:
        tx = {"from": sender or self.accounts[0], "data": data if isinstance(data, str) else "0x" + data.hex(), "gas": hex(8_000_000)}
        if to:
            tx["to"] = to
        tx_hash = self.rpc("eth_sendTransaction", tx)
        for _ in range(100):  # anvil automines; bounded wait anyway
            receipt = self.rpc("eth_getTransactionReceipt", tx_hash)
            if receipt:
                if receipt.get("status") != "0x1":
                    raise RuntimeError(f"transaction {tx_hash} reverted")
                return receipt
            time.sleep(0.05)
        raise RuntimeError(f"no receipt for {tx_hash}")

    def deploy(self, creation: "bytes | str", args: bytes = b"") -> str:
        code = bytes.fromhex(creation.removeprefix("0x")) if isinstance(creation, str) else creation
        return self.send(code + args)["contractAddress"]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)


def encode(types: list[str], values: list[Any]) -> bytes:
    from eth_abi import encode as abi_encode

    return abi_encode(types, values)


def standard_input(files: dict[str, str], **settings: Any) -> dict:
    """Standard-json input with the given {source unit name: file in contracts_engine}."""
    return {
        "language": "Solidity",
        "sources": {unit: {"content": source(file)} for unit, file in files.items()},
        "settings": {"optimizer": {"enabled": True, "runs": 200}, **settings},
    }


def compiled(cache: CompileCache, version: str, input_json: dict, file: str, name: str) -> dict:
    """The contract's output through the same selection (and cache) the verifier uses."""
    output = compile_input(version, with_output_selection(input_json, file, name), cache=cache)
    return output["contracts"][file][name]


def single_file_compiled(cache: CompileCache, version: str, text: str, name: str, **settings: Any) -> dict:
    input_json = single_file_input(text, file_name=f"{name}.sol", **settings)
    return compiled(cache, version, input_json, f"{name}.sol", name)


def json_request(address: str, input_json: dict, contract: str, args: bytes = b"", version: str = SOLC, **extra: Any) -> VerificationRequest:
    vyper = str(input_json.get("language", "")).lower() == "vyper"
    return VerificationRequest(
        address=address,
        contract_name=contract,
        source_code=json.dumps(input_json),
        code_format=CodeFormat.VYPER_JSON if vyper else CodeFormat.STANDARD_JSON,
        compiler_version=version,
        constructor_arguments=args.hex(),
        **extra,
    )


def single_request(address: str, text: str, name: str, args: bytes = b"", version: str = SOLC, **extra: Any) -> VerificationRequest:
    return VerificationRequest(
        address=address,
        contract_name=name,
        source_code=text,
        code_format=CodeFormat.SINGLE_FILE,
        compiler_version=version,
        constructor_arguments=args.hex(),
        **extra,
    )


def bytecode_of(contract: dict) -> str:
    return contract["evm"]["bytecode"]["object"]


def solc_version_of(label: str) -> str:
    """The installed executable's full version for X.Y.Z (so tests do not hard-code commits)."""
    from ape_contract_verify.engine.compilers import _executable_version
    import solcx

    version, commit = _executable_version(Path(solcx.install.get_executable(label)))
    return f"v{version}+commit.{commit}"

