"""server/abi_io.py: the Read and Write forms' values parsed by ABI type (with errors that name the
parameter and the fix), calldata encoded, return data and reverts decoded into JSON-safe text."""

import json

import pytest
from eth_abi import encode
from eth_utils import keccak

from ape_contract_verify.server import abi_io
from ape_contract_verify.server.abi_io import InputError

pytestmark = pytest.mark.unit

OWNER = "0x5FbDB2315678afecb367f032d93F642f64180aa3"
TRANSFER = {
    "type": "function",
    "name": "transfer",
    "stateMutability": "nonpayable",
    "inputs": [{"name": "to", "type": "address"}, {"name": "amount", "type": "uint256"}],
    "outputs": [{"name": "", "type": "bool"}],
}
BALANCE = {
    "type": "function",
    "name": "balanceOf",
    "stateMutability": "view",
    "inputs": [{"name": "who", "type": "address"}],
    "outputs": [{"name": "balance", "type": "uint256"}],
}
LEGACY_CONSTANT = {"name": "old", "constant": True, "inputs": [], "outputs": []}  # no type, no stateMutability
ABI = [
    TRANSFER,
    BALANCE,
    LEGACY_CONSTANT,
    {"type": "event", "name": "Transfer", "inputs": []},
    {"type": "function", "inputs": []},  # nameless: not a form
    "garbage",
    {
        "type": "error",
        "name": "TooLow",
        "inputs": [{"name": "need", "type": "uint256"}, {"name": "by", "type": "address"}],
    },
    {"type": "constructor", "inputs": [{"name": "owner", "type": "address"}, {"name": "cap", "type": "uint64"}]},
]


def param(kind: str, **extra) -> dict:
    return {"name": "p", "type": kind, **extra}


def refusal(kind: str, raw, **extra) -> str:
    with pytest.raises(InputError) as info:
        abi_io.parse_value(param(kind, **extra), raw, "p")
    assert isinstance(info.value, ValueError)  # callers catching ValueError see it too
    return str(info.value)


def test_read_and_write_split_the_abi_s_functions_in_order():
    assert abi_io.functions(ABI, read=True) == [BALANCE, LEGACY_CONSTANT]
    assert abi_io.functions(ABI, read=False) == [TRANSFER]
    assert abi_io.functions([], read=True) == []


def test_find_function_by_signature():
    assert abi_io.find_function(ABI, "transfer(address,uint256)") is TRANSFER
    with pytest.raises(InputError, match=r"'transfer\(address\)' is not in this contract's ABI; reload the page"):
        abi_io.find_function(ABI, "transfer(address)")


def test_load_abi_is_a_list_or_empty():
    assert abi_io.load_abi(json.dumps(ABI[:2])) == ABI[:2]
    assert abi_io.load_abi("{not json") == []
    assert abi_io.load_abi('{"abi": []}') == []


def test_signature_and_selector_are_the_abi_s():
    assert abi_io.signature(TRANSFER) == "transfer(address,uint256)"
    assert abi_io.selector(TRANSFER) == bytes.fromhex("a9059cbb")


# -- inputs ------------------------------------------------------------------------------------


def test_scalars_parse_from_text():
    assert abi_io.parse_value(param("address"), f"  {OWNER} ", "p") == OWNER.lower()
    for text, value in [("true", True), ("1", True), ("FALSE", False), ("0", False)]:
        assert abi_io.parse_value(param("bool"), text, "p") is value
    assert abi_io.parse_value(param("uint256"), "1_000", "p") == 1000
    assert abi_io.parse_value(param("uint"), "0xff", "p") == 255
    assert abi_io.parse_value(param("int8"), "-128", "p") == -128
    assert abi_io.parse_value(param("uint8"), 7, "p") == 7  # a JSON number, as a form may send
    assert abi_io.parse_value(param("string"), "  kept as typed ", "p") == "  kept as typed "
    assert abi_io.parse_value(param("bytes"), "0x", "p") == b""
    assert abi_io.parse_value(param("bytes4"), "0xab", "p") == b"\xab\x00\x00\x00"  # right-padded


def test_arrays_and_tuples_take_json_text_or_lists():
    assert abi_io.parse_value(param("uint8[]"), "[1, 2]", "p") == [1, 2]
    assert abi_io.parse_value(param("uint8[]"), ["1", "0x2"], "p") == [1, 2]
    pair = param("tuple", components=[{"name": "a", "type": "bool"}, {"name": "b", "type": "bytes2"}])
    assert abi_io.parse_value(pair, '[true, "0x0102"]', "p") == (True, b"\x01\x02")


@pytest.mark.parametrize(
    ("kind", "raw", "words"),
    [
        ("address", "0x1234", "p: '0x1234' is not an address; use 0x followed by 40 hex digits."),
        ("bool", "yes", "p: 'yes' is not a bool; use true or false."),
        ("uint8", "1.5", "p: '1.5' is not a whole number; use decimal digits or 0x hex."),
        ("uint8", "256", "p: 256 is out of range; it must be from 0 to 255."),
        ("uint256", "-1", "p: -1 is out of range; it must be from 0 to"),
        ("int8", "128", "p: 128 is out of range; it must be from -128 to 127."),
        ("bytes", "abcd", "p: 'abcd' is not hex bytes; use 0x followed by an even number of hex digits."),
        ("bytes", "0xabc", "is not hex bytes"),
        ("bytes", "0xzz", "is not hex bytes"),
        ("bytes2", "0x010203", "p: 3 bytes given, at most 2 fit."),
        ("uint8[]", "1, 2", "p: '1, 2' is not a JSON array, e.g. [1, 2]."),
        ("uint8[]", '{"a": 1}', "is not a JSON array"),
        ("uint8[3]", "[1, 2]", "p: 2 item(s) given, exactly 3 are needed."),
        ("uint8[]", "[1, 300]", "p item 2: 300 is out of range"),
        ("function", "0x00", "p: the form cannot encode the ABI type 'function'."),
        ("fixed128x18", "1.0", "cannot encode the ABI type 'fixed128x18'"),
    ],
)
def test_bad_values_are_refused_naming_the_parameter_and_the_fix(kind, raw, words):
    assert words in refusal(kind, raw)


def test_a_tuple_s_fields_are_counted_and_named_in_errors():
    comps = [{"name": "who", "type": "address"}, {"type": "uint8"}]
    assert "p: 1 field(s) given, the tuple has 2." in refusal("tuple", "[1]", components=comps)
    assert "p field who (address): 'x' is not an address" in refusal("tuple", '["x", 1]', components=comps)
    assert "p field 2 (uint8): 999 is out of range" in refusal("tuple", f'["{OWNER}", 999]', components=comps)
    assert "a JSON array of its 2 fields" in refusal("tuple", "nope", components=comps)


def test_a_long_bad_value_is_clipped_in_the_error():
    text = refusal("address", "z" * 500)
    assert "z" * 60 + "…" in text and "z" * 61 not in text


def test_parse_args_checks_the_count_and_labels_each_argument():
    assert abi_io.parse_args(TRANSFER, [OWNER, "5"]) == [OWNER.lower(), 5]
    with pytest.raises(InputError, match=r"transfer\(address,uint256\) takes 2 argument\(s\), 1 were given"):
        abi_io.parse_args(TRANSFER, [OWNER])
    with pytest.raises(InputError, match=r"^amount \(uint256\): 'lots' is not a whole number"):
        abi_io.parse_args(TRANSFER, [OWNER, "lots"])
    unnamed = {"name": "f", "inputs": [{"type": "bool"}]}
    with pytest.raises(InputError, match=r"^argument 1 \(bool\)"):
        abi_io.parse_args(unnamed, ["maybe"])


def test_calldata_is_the_selector_and_the_encoded_arguments():
    data = abi_io.calldata(TRANSFER, [OWNER, "0x10"])
    assert data == bytes.fromhex("a9059cbb") + encode(["address", "uint256"], [OWNER, 16])
    with pytest.raises(InputError, match="is not an address"):
        abi_io.calldata(TRANSFER, ["0x12", "1"])


# -- outputs -----------------------------------------------------------------------------------


def test_return_data_decodes_to_json_safe_values():
    big = 2**200
    item = {
        "outputs": [
            {"name": "n", "type": "uint256"},
            {"name": "who", "type": "address"},
            {"name": "flag", "type": "bool"},
            {"name": "raw", "type": "bytes"},
            {"name": "", "type": "string"},
            {"name": "list", "type": "int8[]"},
            {"name": "t", "type": "tuple", "components": [{"name": "x", "type": "uint8"}, {"type": "bytes1"}]},
        ]
    }
    data = encode(
        ["uint256", "address", "bool", "bytes", "string", "int8[]", "(uint8,bytes1)"],
        [big, OWNER, True, b"\x01\x02", "hi", [-1, 2], (3, b"\xff")],
    )
    decoded = abi_io.decode_outputs(item, data)
    assert [(d["name"], d["type"]) for d in decoded][-1] == ("t", "(uint8,bytes1)")
    assert [d["value"] for d in decoded] == [
        str(big),  # above 2**53: text, as JavaScript cannot hold it
        OWNER,  # checksummed
        True,
        "0x0102",
        "hi",
        ["-1", "2"],
        {"x": "3", "1": "0xff"},
    ]
    json.dumps(decoded)  # all of it JSON-safe


def test_return_data_that_does_not_decode_is_an_input_error():
    # Not a uint: importing ape makes eth_abi's shared registry pad short uint data (ape/utils/abi.py).
    owner = {"outputs": [{"name": "", "type": "address"}]}
    with pytest.raises(InputError, match=r"The call returned 3 bytes that do not decode as \(address\)"):
        abi_io.decode_outputs(owner, b"\x00\x01\x02")
    text = {"outputs": [{"name": "", "type": "string"}]}
    with pytest.raises(InputError, match=r"returned 32 bytes .*\(string\): \w+\.$"):
        abi_io.decode_outputs(text, encode(["uint256"], [2**64]))  # an offset far past the data
    assert abi_io.decode_outputs({"outputs": []}, b"") == []


def test_reverts_read_as_their_author_wrote_them():
    error_string = bytes.fromhex("08c379a0") + encode(["string"], ["too low"])
    assert abi_io.describe_revert(ABI, error_string) == "reverted: 'too low'"
    panic = bytes.fromhex("4e487b71") + encode(["uint256"], [0x11])
    assert abi_io.describe_revert(ABI, panic) == "reverted: Panic(0x11)"
    custom = keccak(text="TooLow(uint256,address)")[:4] + encode(["uint256", "address"], [5, OWNER])
    assert abi_io.describe_revert(ABI, custom) == f"reverted: TooLow(5, {OWNER})"
    assert abi_io.describe_revert(ABI, b"") == "reverted without a reason"


def test_a_revert_the_abi_does_not_explain_is_shown_raw():
    assert abi_io.describe_revert(ABI, bytes.fromhex("deadbeef")) == "reverted: custom error 0xdeadbeef"
    assert abi_io.describe_revert([], bytes.fromhex("deadbeef01")) == "reverted: custom error 0xdeadbeef (data 0x01)"
    # a selector that promises a string but carries garbage: raw, not an exception
    broken = bytes.fromhex("08c379a0") + b"\x01\x02"
    assert abi_io.describe_revert(ABI, broken) == "reverted: custom error 0x08c379a0 (data 0x0102)"


def test_constructor_arguments_decode_by_name_or_not_at_all():
    args = encode(["address", "uint64"], [OWNER, 10])
    decoded = abi_io.decode_constructor(ABI, "0x" + args.hex())
    assert decoded == [
        {"name": "owner", "type": "address", "value": OWNER},
        {"name": "cap", "type": "uint64", "value": "10"},
    ]
    assert abi_io.decode_constructor(ABI, args.hex()) == decoded  # 0x optional
    assert abi_io.decode_constructor(ABI, "") is None
    assert abi_io.decode_constructor(ABI, args.hex()[:62]) is None  # a short address: does not decode
    assert abi_io.decode_constructor(ABI, "0xzz") is None
    assert abi_io.decode_constructor([TRANSFER], args.hex()) is None  # no constructor
    assert abi_io.decode_constructor([{"type": "constructor", "inputs": []}], args.hex()) is None


def test_short_data_is_refused_even_after_ape_pads_eth_abi_s_uint_decoder():
    """Ape (ape/utils/abi.py) swaps eth_abi's shared uint decoder for one that pads short data; the
    Read tab must not show a number made of three bytes."""
    import ape.utils.abi  # noqa: F401  (its import patches eth_abi's shared registry)
    from eth_abi import decode as shared_decode

    assert shared_decode(["uint256"], b"\x00\x01\x02") == (258,)  # the patch is in: the shared codec pads
    with pytest.raises(abi_io.InputError, match="3 bytes that do not decode as \\(uint256\\)"):
        abi_io.decode_outputs({"outputs": [{"name": "", "type": "uint256"}]}, b"\x00\x01\x02")
    constructor = [{"type": "constructor", "inputs": [{"name": "cap", "type": "uint64"}]}]
    assert abi_io.decode_constructor(constructor, "0x01") is None
    assert abi_io.decode_constructor(constructor, "0x" + "00" * 31 + "07") == [
        {"name": "cap", "type": "uint64", "value": "7"}
    ]
