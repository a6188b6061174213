"""ERC-5202 blueprints in the engine (issue 29): the preamble read (evm/blueprint.py), and a
blueprint's body verified against vyper 0.3.10's creation code of tests/data/blueprint_project's
Pool, with no creation transaction (an explorer needs none for a blueprint); a data section,
arguments after the creation code, a wrong argument and an edited byte, each said without blaming
a compiler setting. The deploy code the plugin builds is vyper's own `-f blueprint_bytecode`."""

from __future__ import annotations

import dataclasses
import json
import subprocess

import pytest

from ape_contract_verify.engine.verifier import FailureKind, Verifier
from ape_contract_verify.evm import blueprint
from ape_contract_verify.evm.bytecode import is_data_contract
from ape_contract_verify.request import CodeFormat, VerificationRequest
from support import REPO
from support.blueprints import deploy_code

PROJECT = REPO / "tests" / "data" / "blueprint_project"
ADDRESS = "0x" + "5b" * 20
VYPER = REPO / ".vyper" / "0.3.10" / "bin" / "vyper"
SETTINGS = {"evmVersion": "shanghai", "optimize": "gas"}
SETTING_WORDS = ("optimi", "evmversion", "evm version", "setting", "viair")


class BlueprintChain:
    """A chain reader holding one code and no creation transaction for it."""

    def __init__(self, code: bytes):
        self.code = code

    def get_code(self, address: str) -> bytes:
        return self.code if address.lower() == ADDRESS else b""

    def find_creation(self, address: str):
        return None


@pytest.fixture(scope="module")
def pool_creation() -> bytes:
    assert VYPER.exists(), f"vyper 0.3.10 is missing at {VYPER}: run toolchain/install.sh"
    proc = subprocess.run(
        [str(VYPER), "-f", "bytecode", "contracts/Pool.vy"], cwd=PROJECT, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return bytes.fromhex(proc.stdout.strip().removeprefix("0x"))


def request(args: str = "") -> VerificationRequest:
    source = (PROJECT / "contracts" / "Pool.vy").read_text()
    text = json.dumps(
        {"language": "Vyper", "sources": {"contracts/Pool.vy": {"content": source}}, "settings": SETTINGS}
    )
    return VerificationRequest(
        address=ADDRESS,
        source_code=text,
        code_format=CodeFormat.VYPER_JSON,
        contract_name="contracts/Pool.vy:Pool",
        compiler_version="vyper:0.3.10",
        constructor_arguments=args,
    )


# -- the preamble -------------------------------------------------------------------------------


def test_the_preamble_with_and_without_a_data_section():
    plain = blueprint.parse(b"\xfe\x71\x00\x60\x80")
    assert (plain.version, plain.data, plain.body, plain.preamble_length) == (0, b"", b"\x60\x80", 3)
    one = blueprint.parse(bytes([0xFE, 0x71, (1 << 2) | 1, 2, 0xAB, 0xCD, 0x60]))  # version 1, 1-byte length
    assert (one.version, one.data, one.body, one.preamble_length) == (1, b"\xab\xcd", b"\x60", 6)
    two = blueprint.parse(bytes([0xFE, 0x71, 2, 0, 1, 0xEE]) + b"\x61")  # a 2-byte length
    assert (two.data, two.body, two.preamble_length) == (b"\xee", b"\x61", 6)
    assert blueprint.parse("0xfe7100") is not None and blueprint.parse("0xfe7100").body == b""


@pytest.mark.parametrize(
    "code",
    [
        b"",
        b"\xfe\x71",
        b"\xfe\x72\x00",
        b"\x60\x80\x60\x40",
        bytes([0xFE, 0x71, 3, 0]),
        bytes([0xFE, 0x71, 1, 5, 0]),
        bytes([0xFE, 0x71, 2, 0]),
        b"\x00\xfe\x71\x00",
        "0xzz",
    ],
)
def test_what_is_no_blueprint(code):
    """Too short, another magic, runtime code, the reserved length size 0b11, data past the end."""
    assert blueprint.parse(code) is None and not blueprint.is_blueprint(code)


def test_a_blueprint_is_no_data_contract_and_the_deploy_code_is_vypers(pool_creation):
    proc = subprocess.run(
        [str(VYPER), "-f", "blueprint_bytecode", "contracts/Pool.vy"],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert deploy_code(pool_creation).hex() == proc.stdout.strip().removeprefix("0x")
    on_chain = deploy_code(pool_creation)[10:]  # what its first 10 bytes return
    assert blueprint.parse(on_chain).body == pool_creation and not is_data_contract(on_chain)
    assert blueprint.arguments_after(blueprint.parse(on_chain), pool_creation) == ""
    assert blueprint.arguments_after(blueprint.parse(on_chain[:-1]), pool_creation) is None


# -- the engine ---------------------------------------------------------------------------------


def verify(code: bytes, args: str = "", **options):
    return Verifier(BlueprintChain(code)).verify(request(args), diagnose_compiles=4, **options)


def test_the_body_is_verified_as_the_creation_code_without_a_creation_transaction(pool_creation):
    result = verify(b"\xfe\x71\x00" + pool_creation)
    assert (result.verified, result.match, result.blueprint, result.constructor_arguments) == (
        True,
        "full",
        True,
        "",
    ), result.reason
    with_data = verify(bytes([0xFE, 0x71, 1, 3]) + b"abc" + pool_creation)
    assert with_data.verified and with_data.blueprint, with_data.reason


def test_arguments_after_the_creation_code(pool_creation):
    args = "00" * 31 + "07"
    assert verify(b"\xfe\x71\x00" + pool_creation + bytes.fromhex(args), args).verified
    wrong = verify(b"\xfe\x71\x00" + pool_creation + bytes.fromhex(args), "00" * 31 + "08")
    assert (wrong.verified, wrong.failure) == (False, FailureKind.CONSTRUCTOR_ARGUMENTS), wrong.reason
    assert "ERC-5202 blueprint" in wrong.reason and "Constructor arguments differ" in wrong.reason
    taken = verify(b"\xfe\x71\x00" + pool_creation + bytes.fromhex(args), args_from_creation=True)
    assert taken.verified and taken.constructor_arguments == args


@pytest.mark.parametrize("cut", ["edited", "short"])
def test_a_different_body_is_said_as_such_never_as_a_setting(pool_creation, cut):
    body = bytearray(pool_creation)
    if cut == "edited":
        body[40] ^= 0xFF
    else:
        body = body[:-20]
    result = verify(b"\xfe\x71\x00" + bytes(body))
    assert (result.verified, result.failure, result.setting) == (False, FailureKind.BYTECODE, "source"), result.reason
    assert "ERC-5202 blueprint" in result.reason and "compiled creation code" in result.reason
    assert f"at byte {40 if cut == 'edited' else len(body)} of the body" in result.reason, result.reason
    assert not [w for w in SETTING_WORDS if w in result.reason.lower()], result.reason


def test_a_vyper_0_3_7_blueprint_sent_raw(tmp_path):
    """Vyper 0.3.7 (ape-vyper's settings for it: paris, `optimize` a bool): the same body check."""
    exe = REPO / ".vyper" / "0.3.7" / "bin" / "vyper"
    assert exe.exists(), f"vyper 0.3.7 is missing at {exe}: run toolchain/install.sh"
    source = (PROJECT / "contracts" / "Gauge.vy").read_text().replace("# @version 0.3.10", "# @version 0.3.7", 1)
    (tmp_path / "Gauge.vy").write_text(source)
    proc = subprocess.run(
        [str(exe), "-f", "bytecode", "--evm-version", "paris", "Gauge.vy"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    creation = bytes.fromhex(proc.stdout.strip().removeprefix("0x"))
    text = json.dumps(
        {
            "language": "Vyper",
            "sources": {"contracts/Gauge.vy": {"content": source}},
            "settings": {"evmVersion": "paris", "optimize": True},
        }
    )
    submitted = VerificationRequest(
        address=ADDRESS,
        source_code=text,
        code_format=CodeFormat.VYPER_JSON,
        contract_name="contracts/Gauge.vy:Gauge",
        compiler_version="vyper:0.3.7",
    )
    chain = BlueprintChain(deploy_code(creation)[10:])
    result = Verifier(chain).verify(submitted, diagnose_compiles=4)
    assert (result.verified, result.match, result.blueprint) == (True, "full", True), result.reason
    chain.code = chain.code[:23] + bytes([chain.code[23] ^ 1]) + chain.code[24:]  # byte 20 of the body
    refused = Verifier(chain).verify(submitted, diagnose_compiles=4)
    assert (refused.verified, refused.setting, refused.offset) == (False, "source", 20), refused.reason
    assert not [w for w in SETTING_WORDS if w in refused.reason.lower()], refused.reason


def test_a_vyper_0_4_blueprint(tmp_path):
    """Vyper 0.4 (the venv's 0.4.3: its initcode carries the integrity hash): the same body check."""
    exe = REPO / ".venv" / "bin" / "vyper"
    source = "# pragma version 0.4.3\nOWNER: public(immutable(address))\n\n\n@deploy\ndef __init__(owner: address):\n    OWNER = owner\n"
    (tmp_path / "Owned.vy").write_text(source)
    proc = subprocess.run(
        [str(exe), "-f", "blueprint_bytecode", "Owned.vy"], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    on_chain = bytes.fromhex(proc.stdout.strip().removeprefix("0x"))[10:]  # what the deploy code returns
    text = json.dumps({"language": "Vyper", "sources": {"contracts/Owned.vy": {"content": source}}, "settings": {}})
    submitted = VerificationRequest(
        address=ADDRESS,
        source_code=text,
        code_format=CodeFormat.VYPER_JSON,
        contract_name="contracts/Owned.vy:Owned",
        compiler_version="vyper:0.4.3",
    )
    result = Verifier(BlueprintChain(on_chain)).verify(submitted, diagnose_compiles=4)
    assert (result.verified, result.match, result.blueprint) == (True, "full", True), result.reason
    edited = json.dumps(
        {
            "language": "Vyper",
            "sources": {"contracts/Owned.vy": {"content": source + "\nx: public(uint256)\n"}},
            "settings": {},
        }
    )
    refused = Verifier(BlueprintChain(on_chain)).verify(
        dataclasses.replace(submitted, source_code=edited), diagnose_compiles=4
    )
    assert (refused.verified, refused.setting) == (False, "source"), refused.reason
    assert not [w for w in SETTING_WORDS if w in refused.reason.lower()], refused.reason
