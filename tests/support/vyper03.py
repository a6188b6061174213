"""The Vyper 0.3.x project (tests/data/vyper03_project): VaultFactory's source and inputs, the
compiler's own immutables layout, and a deployment whose code runs past its immutables."""

import json
import re
import subprocess
from pathlib import Path

from support import REPO

PROJECT = Path(__file__).resolve().parents[1] / "data" / "vyper03_project"
FILE = "contracts/VaultFactory.vy"
TYPES = ["address", "uint256", "address", "string"]
IMMUTABLES = {"ADMIN", "FEE_BPS", "IMPLEMENTATION", "LABEL"}
# What ape-vyper sends for each: 0.3.7 knows no EVM after paris and takes `optimize` as a bool.
SETTINGS = {"0.3.7": {"evmVersion": "paris", "optimize": True}, "0.3.10": {"evmVersion": "shanghai", "optimize": "gas"}}


def source(version: str = "0.3.7", **replace: str) -> str:
    text = (PROJECT / FILE).read_text().replace("# @version 0.3.7", f"# @version {version}", 1)
    for old, new in replace.items():
        assert old in text, old
        text = text.replace(old, new)
    return text


def vyper_input(version: str = "0.3.7", **replace: str) -> dict:
    return {
        "language": "Vyper",
        "sources": {FILE: {"content": source(version, **replace)}},
        "settings": dict(SETTINGS[version]),
    }


def vyper_executable(version: str) -> Path:
    exe = REPO / ".vyper" / version / "bin" / "vyper"
    assert exe.exists(), f"vyper {version} is missing at {exe}: run toolchain/install.sh"
    return exe


def code_layout(version: str, text: str, tmp: Path) -> dict:
    """The compiler's own immutables layout (`vyper -f layout`; vyper-json 0.3.x does not give it)."""
    path = tmp / f"VaultFactory_{version.replace('.', '_')}.vy"
    path.write_text(text)
    proc = subprocess.run(
        [str(vyper_executable(version)), "-f", "layout", str(path)], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)["code_layout"]


def with_extra_trailing(creation: bytes, runtime_length: int, extra: int = 32) -> bytes:
    """The initcode with its deploy sequence (`PUSH2 len PUSH2 begin PUSH2 mem CODECOPY PUSH2 total
    PUSH2 mem RETURN`) returning `extra` more bytes: deployed code longer than runtime + immutables."""
    pattern = re.compile(
        rb"\x61" + re.escape(runtime_length.to_bytes(2, "big")) + rb"\x61..\x61(..)\x39\x61(..)\x61(..)\xf3", re.S
    )
    (match,) = list(pattern.finditer(creation))
    assert match.group(1) == match.group(3), "one memory offset for the copy and the return"
    total = int.from_bytes(match.group(2), "big") + extra
    return creation[: match.start(2)] + total.to_bytes(2, "big") + creation[match.end(2) :]


def kept_record(project: Path, address: str) -> dict:
    """getsourcecode's entry for `address` in the local explorer's store `ape` kept for the chain
    (an anvil the command did not start): what the in-process explorer verified, read afterwards."""
    from ape_contract_verify.explorer.contract_api import source_result
    from ape_contract_verify.explorer.store import Store

    (path,) = (project / ".build" / "contract_verify").glob("explorer-*.sqlite")
    store = Store(path)
    try:
        return source_result(store, address.lower())
    finally:
        store.close()
