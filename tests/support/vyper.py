"""The Vyper example (tests/data/vyper_project): its Escrow input, deploys and edited copies."""

from pathlib import Path

from support import BIN, load_manifest, run
from support.e2e import copy_project
from support.service import encode

PROJECT = Path(__file__).resolve().parents[1] / "data" / "vyper_project"
DATA = PROJECT
ESCROW = "contracts/Escrow.vy"
ESCROW_FILES = [ESCROW, "contracts/interfaces/IEscrow.vyi", "contracts/lib/ownable.vy"]
ESCROW_SOURCES = set(ESCROW_FILES)
ESCROW_TYPES = ["address", "uint256", "address"]
TOKEN = "0x" + "11" * 20
DEPLOYER = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"  # anvil's first account, the deploy script's

COUNTER_0310 = """# @version 0.3.10
# @license MIT
# Vyper 0.3.10: an immutable, so the deployed runtime ends with the immutables section.

OWNER: public(immutable(address))
count: public(uint256)


@external
def __init__(owner_: address, start: uint256):
    OWNER = owner_
    self.count = start


@external
def bump(by: uint256):
    self.count += by
"""


def escrow_input(optimize: str = "gas", **replace: str) -> dict:
    """Escrow's vyper-json input as the plugin sends it: the three files, the project's settings."""
    sources = {}
    for path in ESCROW_FILES:
        text = (PROJECT / path).read_text()
        for old, new in replace.items() if path == ESCROW else ():
            assert old in text
            text = text.replace(old, new)
        sources[path] = {"content": text}
    settings = {"evmVersion": "cancun", "optimize": optimize, "enable_decimals": True}
    return {"language": "Vyper", "sources": sources, "settings": settings}


def deploy_escrow(anvil, project: Path, rate_bps: int = 250) -> str:
    """Another Escrow, straight from the manifest's bytecode: nothing verifies it by itself."""
    creation = load_manifest(project)["contractTypes"]["Escrow"]["deploymentBytecode"]["bytecode"]
    return anvil.deploy(creation, encode(ESCROW_TYPES, [TOKEN, rate_bps, DEPLOYER]))


def edited_copy(project: Path, dest: Path, old: str, new: str) -> Path:
    copy = copy_project(project, dest)
    source = copy / "contracts" / "Escrow.vy"
    text = source.read_text()
    assert old in text
    source.write_text(text.replace(old, new, 1))
    run([BIN / "ape", "compile", "--force"], cwd=copy, timeout=300)
    return copy
