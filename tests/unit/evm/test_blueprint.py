"""evm/blueprint.py: ERC-5202's preamble parsed (version, length-size bits, data section), the
creation code's constructor arguments read off the body, and the deploy code Ape's `declare` sends."""

import pytest

from ape_contract_verify.evm.blueprint import MAGIC, Blueprint, arguments_after, is_blueprint, parse
from support.blueprints import deploy_code

pytestmark = pytest.mark.unit

CREATION = bytes.fromhex("6080604052348015600e575f80fd5b50")


def test_a_preamble_without_data():
    code = MAGIC + b"\x00" + CREATION
    assert parse(code) == Blueprint(version=0, data=b"", body=CREATION, preamble_length=3)
    assert is_blueprint(code)


def test_version_and_a_data_section_with_a_one_byte_length():
    # version 1 (bits 7-2), length size 1 (bits 1-0), three bytes of data
    code = MAGIC + bytes([(1 << 2) | 1, 3]) + b"abc" + CREATION
    blueprint = parse(code)
    assert blueprint is not None
    assert (blueprint.version, blueprint.data, blueprint.body, blueprint.preamble_length) == (1, b"abc", CREATION, 7)


def test_a_two_byte_length():
    code = MAGIC + bytes([2]) + (300).to_bytes(2, "big") + b"d" * 300 + CREATION
    blueprint = parse(code)
    assert blueprint is not None and len(blueprint.data) == 300 and blueprint.body == CREATION
    assert blueprint.preamble_length == 5 + 300


def test_hex_text_with_or_without_0x_is_read():
    code = MAGIC + b"\x00" + CREATION
    assert parse("0x" + code.hex()) == parse(code.hex()) == parse(bytearray(code))


@pytest.mark.parametrize(
    "code",
    [
        None,
        b"",
        "0x",
        "not hex",
        MAGIC,  # no version byte
        b"\xfe\x72\x00" + CREATION,  # another magic
        CREATION,  # a plain creation code
        MAGIC + b"\x03" + CREATION,  # length size 0b11: reserved
        MAGIC + b"\x01\x10" + b"short",  # a data length past the code's end
        MAGIC + b"\x02\x00",  # the two-byte length cut off
    ],
)
def test_what_is_no_blueprint(code):
    assert parse(code) is None and not is_blueprint(code)


def test_arguments_after_the_creation_code():
    arguments = (42).to_bytes(32, "big")
    blueprint = parse(MAGIC + b"\x00" + CREATION + arguments)
    assert blueprint is not None
    assert arguments_after(blueprint, CREATION) == arguments.hex()
    assert arguments_after(parse(MAGIC + b"\x00" + CREATION), CREATION) == ""  # type: ignore[arg-type]
    assert arguments_after(blueprint, CREATION + arguments + b"\x00") is None  # longer than the body


def test_deploy_code_returns_the_blueprint_it_wraps():
    code = deploy_code(CREATION, version=0)
    # PUSH2 <length>, then the 7-byte deployer that returns what follows the first 10 bytes
    assert code[0] == 0x61 and int.from_bytes(code[1:3], "big") == len(code) - 10
    assert code[3:10] == bytes.fromhex("3d81600a3d39f3")
    deployed = code[10:]
    assert parse(deployed) == Blueprint(version=0, data=b"", body=CREATION, preamble_length=3)
    assert parse(deploy_code(CREATION, version=5)[10:]).version == 5  # type: ignore[union-attr]
    assert parse(code) is None  # the deploy code itself is no blueprint
