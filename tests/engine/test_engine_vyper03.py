"""Vyper 0.3.x immutables: on chain the runtime code is followed by the immutables section, whose
size 0.3.7 to 0.3.9 record only in the initcode's deploy sequence (0.3.10 in its metadata too).
That size against the compiler's own `-f layout`, the comparison masking exactly that many bytes on
anvil (0.3.7 and 0.3.10), and the local explorer verifying a submitted 0.3.7 vyper-json over HTTP;
an edited constant and code running past the immutables fail with their reasons. The diagnosis
tries only settings the contract's compiler accepts (asked of 0.3.7, 0.3.10 and 0.4.3 themselves)
and names the one a 0.3.7 deployment used."""

import json

import pytest

from ape_contract_verify.engine import verifier
from ape_contract_verify.engine.compilers import CompileCache, Compiled, CompilerError, compile_input, release_of
from ape_contract_verify.engine.diagnose import variants, vyper_hint, with_setting
from ape_contract_verify.evm import bytecode as bc
from ape_contract_verify.evm.chain import JsonRpcChain
from ape_contract_verify.explorer.jobs import RealEngine
from ape_contract_verify.server.runner import start_embedded
from support.service import Anvil, encode, get, poll, post
from support.vyper03 import FILE, IMMUTABLES, SETTINGS, TYPES, code_layout, source, vyper_input, with_extra_trailing

NAME = f"{FILE}:VaultFactory"
IMPLEMENTATION = "0x" + "22" * 20
FAIL = "Fail - Unable to verify. "
NO_IMMUTABLES = """# @version {version}
count: public(uint256)


@external
def bump():
    self.count += 1
"""


@pytest.fixture(scope="module")
def world():
    anvil = Anvil()
    explorer = None
    try:
        cache = CompileCache()
        chain = JsonRpcChain(anvil.url)
        explorer = start_embedded(chain, engine=RealEngine(chain, cache=cache))
        yield {"anvil": anvil, "explorer": explorer, "cache": cache}
    finally:
        if explorer is not None:
            explorer.stop()
        anvil.stop()


def evm_of(world, version: str, input_json: dict) -> dict:
    output = compile_input(f"vyper:{version}", input_json, cache=world["cache"])
    return output["contracts"][FILE]["VaultFactory"]["evm"]


def args_for(world, fee: int, label: str) -> bytes:
    return encode(TYPES, [world["anvil"].accounts[0], fee, IMPLEMENTATION, label])


def code_at(world, address: str) -> bytes:
    return bytes.fromhex(world["anvil"].rpc("eth_getCode", address, "latest")[2:])


@pytest.mark.parametrize("version", ["0.3.7", "0.3.10"])
def test_the_deploy_sequence_gives_the_immutables_size(world, version, tmp_path):
    layout = code_layout(version, source(version), tmp_path)
    assert set(layout) == IMMUTABLES
    expected = sum(item["length"] for item in layout.values())
    evm = evm_of(world, version, vyper_input(version))
    creation, runtime = bc.to_bytes(evm["bytecode"]["object"]), bc.to_bytes(evm["deployedBytecode"]["object"])
    assert bc.vyper_deploy_immutables(creation, runtime) == expected
    assert Compiled.from_evm(evm, "vyper").trailing == expected
    if version == "0.3.7":
        # No metadata in the initcode: the runtime ends with its own CBOR, {"vyper": [0, 3, 7]}.
        assert bc.vyper_immutables(creation, b"") == 0  # no size in the initcode: only the deploy sequence says it
        assert bc.tail_metadata(runtime).compiler == ("vyper", "0.3.7")
    else:
        assert bc.vyper_immutables(creation, b"") == expected  # the initcode's metadata says it
    # Not found unless the initcode copies exactly this runtime.
    assert bc.vyper_deploy_immutables(creation, runtime[:-1]) is None
    assert bc.vyper_deploy_immutables(creation, runtime + b"\x00") is None
    # A contract without immutables deploys its runtime alone.
    plain = {**vyper_input(version), "sources": {FILE: {"content": NO_IMMUTABLES.format(version=version)}}}
    plain_evm = evm_of(world, version, plain)
    assert bc.vyper_deploy_immutables(plain_evm["bytecode"]["object"], plain_evm["deployedBytecode"]["object"]) == 0


def test_the_deploy_sequence_must_copy_this_runtime_and_be_the_only_one():
    runtime = bytes.fromhex("60016000550000")

    def sequence(total: int, begin: int) -> bytes:  # PUSH2 len PUSH2 begin PUSH0 CODECOPY PUSH2 total PUSH0 RETURN
        return (
            b"\x61"
            + len(runtime).to_bytes(2, "big")
            + b"\x61"
            + begin.to_bytes(2, "big")
            + b"\x5f\x39\x61"
            + total.to_bytes(2, "big")
            + b"\x5f\xf3"
        )

    one = len(sequence(0, 0))
    assert bc.vyper_deploy_immutables(sequence(len(runtime) + 64, one) + runtime, runtime) == 64
    assert bc.vyper_deploy_immutables(sequence(len(runtime) + 64, one + 1) + b"\x00" + runtime, runtime) == 64
    # Two sequences that disagree, one copying from elsewhere, or a runtime found nowhere: nothing.
    assert (
        bc.vyper_deploy_immutables(
            sequence(len(runtime) + 64, 2 * one) + sequence(len(runtime) + 96, 2 * one) + runtime, runtime
        )
        is None
    )
    assert bc.vyper_deploy_immutables(sequence(len(runtime) + 64, 0) + runtime, runtime) is None
    assert bc.vyper_deploy_immutables(sequence(len(runtime) + 64, one) + runtime[:-1], runtime) is None
    # Push data is not read as instructions: a sequence inside a PUSH32's data does not count.
    hidden = b"\x7f" + sequence(len(runtime) + 64, 33).ljust(32, b"\x00")
    assert bc.vyper_deploy_immutables(hidden + runtime, runtime) is None


@pytest.mark.parametrize("version", ["0.3.7", "0.3.10"])
def test_exactly_the_immutables_are_masked_on_chain(world, version):
    anvil = world["anvil"]
    evm = evm_of(world, version, vyper_input(version))
    compiled = Compiled.from_evm(evm, "vyper")
    args = args_for(world, 30, "masked")
    on_chain = code_at(world, anvil.deploy(compiled.creation, args))
    size = len(compiled.runtime)
    assert len(on_chain) == size + compiled.trailing and on_chain[:size] == compiled.runtime
    # The section holds the constructor's values, in declaration order.
    assert on_chain[size : size + 32] == bytes(12) + bytes.fromhex(anvil.accounts[0][2:])
    assert on_chain[size + 32 : size + 64] == (30).to_bytes(32, "big")
    assert compiled.compare_runtime(on_chain).match == "full"

    def check(code: bytes):
        return verifier.compare(
            compiled,
            None,
            code,
            compiler_version=f"vyper:{version}",
            libraries={},
            submitted_args=args.hex(),
            abi=[],
            diagnose=lambda: ("source", "diagnosed"),
        )

    assert check(on_chain).match == "full"
    # Deployed code longer or shorter than runtime + immutables is not masked.
    for code in (on_chain + bytes(32), on_chain + b"\x01", on_chain[:-32]):
        assert not compiled.compare_runtime(code).matches
        with pytest.raises(verifier.Failure) as failure:
            check(code)
        assert failure.value.kind == verifier.FailureKind.BYTECODE
    with pytest.raises(verifier.Failure) as failure:
        check(on_chain + bytes(32))
    assert (
        f"The deployed code is the compiled runtime code ({size} bytes) followed by {compiled.trailing + 32} bytes, "
        f"but the contract's immutables take {compiled.trailing} bytes"
    ) in failure.value.reason
    # Another constant in the source: a difference inside the runtime code, masking or not.
    edited = Compiled.from_evm(evm_of(world, version, vyper_input(version, **{"= 10000": "= 10001"})), "vyper")
    assert edited.trailing == compiled.trailing
    cmp = edited.compare_runtime(on_chain)
    assert not cmp.matches and cmp.offset < size


def submit(world, address: str, input_json: dict, args: bytes, version: str = "vyper:0.3.7") -> str:
    base = world["explorer"].base_url
    form = {
        "module": "contract",
        "action": "verifysourcecode",
        "contractaddress": address,
        "codeformat": "vyper-json",
        "sourceCode": json.dumps(input_json),
        "contractname": NAME,
        "compilerversion": version,
        "constructorArguements": args.hex(),
    }
    answer = post(base, form)
    assert answer["status"] == "1", answer
    return poll(base, answer["result"], timeout=180)["result"]


def test_the_local_explorer_verifies_a_submitted_0_3_7_vyper_json(world):
    anvil, base = world["anvil"], world["explorer"].base_url
    input_json = vyper_input("0.3.7")
    creation = bc.to_bytes(evm_of(world, "0.3.7", input_json)["bytecode"]["object"])
    args = args_for(world, 45, "submitted")
    address = anvil.deploy(creation, args)
    assert submit(world, address, input_json, args) == "Pass - Verified"
    (record,) = get(base, action="getsourcecode", address=address)["result"]
    assert (record["CompilerVersion"], record["ContractName"], record["MatchType"]) == (
        "vyper:0.3.7",
        "VaultFactory",
        "full",
    )
    assert record["ConstructorArguments"] == args.hex() and record["EVMVersion"] == "paris"
    assert json.loads(record["SourceCode"][1:-1])["sources"][FILE]["content"] == source("0.3.7")


def test_the_local_explorer_refuses_an_edited_constant_and_code_past_the_immutables(world):
    anvil, base = world["anvil"], world["explorer"].base_url
    input_json = vyper_input("0.3.7")
    evm = evm_of(world, "0.3.7", input_json)
    creation, runtime = bc.to_bytes(evm["bytecode"]["object"]), bc.to_bytes(evm["deployedBytecode"]["object"])
    args = args_for(world, 50, "refused")

    address = anvil.deploy(creation, args)
    edited = submit(world, address, vyper_input("0.3.7", **{"= 10000": "= 10001"}), args)
    assert edited.startswith(
        FAIL + "Compiled contract deployment bytecode does NOT match the transaction deployment bytecode. "
        "Compiled bytecode differs from the deployed code at byte "
    ), edited
    offset = int(edited.split(" at byte ", 1)[1].split()[0])
    assert offset < len(runtime), edited  # inside the code, not at the immutables
    # Only what 0.3.7 accepts was tried, spelt as 0.3.7's vyper-json takes it.
    assert (
        "settings or source differ: compiler version, optimize (true, false), evmVersion or a source line. No single change "
        "among settings.optimize=false, settings.evmVersion=berlin, settings.evmVersion=istanbul, "
        "settings.evmVersion=constantinople, settings.evmVersion=byzantium reproduces it"
    ) in edited, edited
    assert "hash seed" not in edited and "PYTHONHASHSEED" not in edited, "other instructions, not another order"
    assert get(base, action="getsourcecode", address=address)["result"][0]["SourceCode"] == ""

    longer = anvil.deploy(with_extra_trailing(creation, len(runtime)), args)
    trailing = Compiled.from_evm(evm, "vyper").trailing
    assert len(code_at(world, longer)) == len(runtime) + trailing + 32
    answer = submit(world, longer, input_json, args)
    assert answer.startswith(FAIL), answer
    assert (
        f"The deployed code is the compiled runtime code ({len(runtime)} bytes) followed by {trailing + 32} bytes, "
        f"but the contract's immutables take {trailing} bytes"
    ) in answer
    assert get(base, action="getsourcecode", address=longer)["result"][0]["SourceCode"] == ""


# What each installed compiler refuses among the EVM versions the other rows try.
REFUSED = {
    "0.3.7": ("london", "shanghai", "cancun", "prague"),
    "0.3.10": ("byzantium", "constantinople", "prague"),
    "0.4.3": ("istanbul", "berlin"),
}
PLAIN_SETTINGS = {**SETTINGS, "0.4.3": {"evmVersion": "cancun", "optimize": "gas"}}


@pytest.mark.parametrize("version", sorted(REFUSED))
def test_each_installed_vyper_accepts_the_settings_its_diagnosis_tries(world, version):
    plain = {
        "language": "Vyper",
        "sources": {FILE: {"content": NO_IMMUTABLES.format(version=version)}},
        "settings": dict(PLAIN_SETTINGS[version]),
    }
    tried = list(variants(plain, FILE, release_of(f"vyper:{version}")))
    assert len(tried) >= 5
    for _, label, variant in tried:
        assert evm_of(world, version, variant)["deployedBytecode"]["object"], label
    for evm in REFUSED[version]:
        with pytest.raises(CompilerError):
            evm_of(world, version, with_setting(plain, evm=evm))


def test_0_3_7_optimize_is_a_bool_so_a_mode_name_means_on(world):
    """Why 0.3.7 is not sent optimize=none: vyper-json 0.3.7 reads `not settings.get("optimize", True)`."""
    runtime = {
        str(value): evm_of(world, "0.3.7", with_setting(vyper_input("0.3.7"), optimize=value))["deployedBytecode"][
            "object"
        ]
        for value in (True, False, "none", "codesize")
    }
    assert runtime["none"] == runtime["codesize"] == runtime["True"] != runtime["False"]


@pytest.mark.parametrize(
    "change, label",
    [({"optimize": False}, "settings.optimize=false"), ({"evm": "byzantium"}, "settings.evmVersion=byzantium")],
)
def test_the_diagnosis_names_the_setting_a_0_3_7_deployment_used(world, change, label):
    """Paris, berlin, istanbul and constantinople compile VaultFactory alike; byzantium (no SHL/SHR)
    does not, so it is found last, after every other EVM version 0.3.7 accepts."""
    deployed_input = with_setting(vyper_input("0.3.7"), **change)
    args = args_for(world, 60, label)
    address = world["anvil"].deploy(bc.to_bytes(evm_of(world, "0.3.7", deployed_input)["bytecode"]["object"]), args)
    answer = submit(world, address, vyper_input("0.3.7"), args)
    assert (
        answer.startswith(FAIL)
        and f"the deployed code was compiled with {label}: resubmit with that setting." in answer
    ), answer
    assert submit(world, address, deployed_input, args) == "Pass - Verified"


def test_0_4_3_tries_what_it_always_tried():
    text = NO_IMMUTABLES.format(version="0.4.3")
    escrow = {
        "language": "Vyper",
        "sources": {"a.vy": {"content": text}},
        "settings": {"evmVersion": "paris", "optimize": "gas"},
    }
    before = [
        "settings.optimize=codesize",
        "settings.optimize=none",
        "settings.evmVersion=cancun",
        "settings.evmVersion=shanghai",
        "settings.evmVersion=prague",
    ]
    for version in ("vyper:0.4.3", None, "not a version"):
        assert [label for _, label, _ in variants(escrow, "a.vy", release_of(version))] == before
    assert (
        vyper_hint("vyper:0.4.3")
        == "settings or source differ: compiler version, optimize (gas, codesize, none), evmVersion or a source line"
    )
