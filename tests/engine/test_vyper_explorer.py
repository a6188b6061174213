"""Vyper on the local explorer, through real HTTP: vyper-json compiled with the requested version,
creation and runtime code compared with Vyper's metadata and immutables section normalised, and
every failure with its reason. One anvil and one `ape verify serve` for the whole module."""

import json
from pathlib import Path

import pytest
from packaging.version import Version

from ape_contract_verify.engine.compilers import compile_vyper_json, vyper_compilers
from ape_contract_verify.evm import bytecode as bc
from support.service import Anvil, ServerProcess, encode, get, poll, post
from support.vyper import COUNTER_0310, ESCROW, ESCROW_FILES, ESCROW_TYPES, PROJECT, TOKEN, escrow_input

VERIFY_TIMEOUT = 120.0


def compiled(version: str, input_json: dict, file: str) -> dict:
    output = compile_vyper_json(version, input_json)
    name = Path(file).stem
    return output["contracts"][file][name]["evm"]


def vyper_form(address: str, input_json: dict, name: str, args: bytes, version: str = "vyper:0.4.3") -> dict:
    return {
        "module": "contract",
        "action": "verifysourcecode",
        "contractaddress": address,
        "sourceCode": json.dumps(input_json),
        "codeformat": "vyper-json",
        "contractname": name,
        "compilerversion": version,
        "constructorArguements": args.hex(),
    }


def submit(base: str, form: dict) -> dict:
    answer = post(base, form)
    assert answer["status"] == "1", answer
    return poll(base, answer["result"], timeout=VERIFY_TIMEOUT)


def source_record(base: str, address: str) -> dict:
    return get(base, action="getsourcecode", address=address)["result"][0]


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    anvil = Anvil()
    server = None
    try:
        server = ServerProcess(anvil.url, tmp_path_factory.mktemp("vyper") / "explorer.sqlite", use_ape=True)
        gas = compiled("vyper:0.4.3", escrow_input("gas"), ESCROW)
        codesize = compiled("vyper:0.4.3", escrow_input("codesize"), ESCROW)
        args = encode(ESCROW_TYPES, [TOKEN, 250, anvil.accounts[0]])
        deploy = lambda evm: anvil.deploy(evm["bytecode"]["object"], args)  # noqa: E731
        yield {
            "anvil": anvil,
            "base": server.base_url,
            "args": args,
            "gas": gas,
            "codesize": codesize,
            # One address per outcome: a verified address stays verified.
            "full": deploy(gas),
            "negative": deploy(gas),
            "partial": deploy(gas),
            "codesize_address": deploy(codesize),
        }
    finally:
        if server is not None:
            server.stop()
        anvil.stop()


def test_escrow_verifies_in_full_and_reads_back_every_source(world):
    base, address = world["base"], world["full"]
    runtime = bytes.fromhex(world["anvil"].rpc("eth_getCode", address, "latest")[2:])
    compiled_runtime = bc.to_bytes(world["gas"]["deployedBytecode"]["object"])
    # The chain's runtime is the compiled runtime plus the immutables section (TOKEN, RATE_BPS).
    assert (
        bc.vyper_immutables(world["gas"]["bytecode"]["object"], b"") == 64
        and len(runtime) == len(compiled_runtime) + 64
    )
    assert runtime[-64:] == bytes(12) + bytes.fromhex(TOKEN[2:]) + (250).to_bytes(32, "big")

    # A client that forwards ape-vyper's host paths: ignored, only the submitted files count.
    input_json = escrow_input()
    input_json["settings"]["search_paths"] = ["/work/main/.venv/lib/python3.11/site-packages", "."]
    answer = submit(base, vyper_form(address, input_json, f"{ESCROW}:Escrow", world["args"]))
    assert answer["result"] == "Pass - Verified", answer
    record = source_record(base, address)
    assert record["CompilerVersion"] == "vyper:0.4.3"
    assert record["ContractName"] == "Escrow" and record["MatchType"] == "full"
    assert record["CodeFormat"] == "vyper-json" and record["EVMVersion"] == "cancun"
    assert (record["OptimizationUsed"], record["Runs"]) == ("1", "0")  # optimize: gas; Vyper has no runs
    assert record["ConstructorArguments"] == world["args"].hex()
    assert record["SourceCode"].startswith("{{") and record["SourceCode"].endswith("}}")
    sent = json.loads(record["SourceCode"][1:-1])
    assert set(sent["sources"]) == set(ESCROW_FILES)
    assert sent["sources"][ESCROW]["content"] == (PROJECT / ESCROW).read_text()
    assert sent["settings"]["optimize"] == "gas" and sent["settings"]["enable_decimals"] is True
    abi = json.loads(get(base, action="getabi", address=address)["result"])
    assert {item.get("name") for item in abi} >= {"credit", "rate", "owner", "TOKEN", "RATE_BPS", "deposits"}


def test_optimization_mode_really_changes_the_code(world):
    gas, codesize = world["gas"], world["codesize"]
    assert gas["deployedBytecode"]["object"] != codesize["deployedBytecode"]["object"]
    assert len(codesize["deployedBytecode"]["object"]) < len(gas["deployedBytecode"]["object"])


def test_codesize_deployment_verifies_with_codesize_and_names_it_when_sent_as_gas(world):
    base, address = world["base"], world["codesize_address"]
    as_gas = submit(base, vyper_form(address, escrow_input("gas"), f"{ESCROW}:Escrow", world["args"]))
    assert as_gas["result"].startswith(
        "Fail - Unable to verify. Compiled contract deployment bytecode does NOT match the transaction deployment bytecode. Compiled bytecode differs from the deployed code at byte "
    )
    assert (
        "the deployed code was compiled with settings.optimize=codesize: resubmit with that setting."
        in as_gas["result"]
    )
    ok = submit(base, vyper_form(address, escrow_input("codesize"), f"{ESCROW}:Escrow", world["args"]))
    assert ok["result"] == "Pass - Verified", ok
    assert source_record(base, address)["MatchType"] == "full"


def test_wrong_constructor_arguments(world):
    base, address = world["base"], world["negative"]
    wrong = encode(ESCROW_TYPES, [TOKEN, 251, world["anvil"].accounts[0]])
    answer = submit(base, vyper_form(address, escrow_input(), f"{ESCROW}:Escrow", wrong))
    assert answer["result"] == (
        "Fail - Unable to verify. Please check if the correct constructor argument was entered. Constructor arguments differ: rate_bps (uint256): submitted 251, deployed 250 "
        "(first difference at byte 63, in 32-byte word 1)"
    )


def test_changed_optimization_mode(world):
    base, address = world["base"], world["negative"]
    answer = submit(base, vyper_form(address, escrow_input("codesize"), f"{ESCROW}:Escrow", world["args"]))
    assert answer["result"].startswith(
        "Fail - Unable to verify. Compiled contract deployment bytecode does NOT match the transaction deployment bytecode. Compiled bytecode differs from the deployed code at byte "
    )
    assert "the deployed code was compiled with settings.optimize=gas: resubmit with that setting." in answer["result"]


def test_changed_optimization_pragma(world):
    """The mode set by a source pragma is found too (the variant rewrites the pragma)."""
    base, address = world["base"], world["negative"]
    pragma = escrow_input(
        "codesize", **{"# pragma version 0.4.3\n": "# pragma version 0.4.3\n# pragma optimize codesize\n"}
    )
    answer = submit(base, vyper_form(address, pragma, f"{ESCROW}:Escrow", world["args"]))
    assert answer["result"].startswith(
        "Fail - Unable to verify. Compiled contract deployment bytecode does NOT match the transaction deployment bytecode. Compiled bytecode differs"
    )
    assert "compiled with settings.optimize=gas" in answer["result"]


def test_changed_source_line(world):
    base, address = world["base"], world["negative"]
    edited = escrow_input(**{"/ 10000.0": "/ 1000.0"})
    answer = submit(base, vyper_form(address, edited, f"{ESCROW}:Escrow", world["args"]))
    assert answer["result"].startswith(
        "Fail - Unable to verify. Compiled contract deployment bytecode does NOT match the transaction deployment bytecode. Compiled bytecode differs from the deployed code at byte "
    )
    assert "No single change among settings.optimize=codesize, settings.optimize=none" in answer["result"]
    assert "the source or the compiler most likely differs" in answer["result"]


def test_missing_imported_module_is_named(world):
    base, address = world["base"], world["negative"]
    partial_input = escrow_input()
    del partial_input["sources"]["contracts/lib/ownable.vy"]
    answer = submit(base, vyper_form(address, partial_input, f"{ESCROW}:Escrow", world["args"]))
    assert answer["result"].startswith(
        "Fail - Unable to verify. Vyper Compilation Error: vyper 0.4.3 reported errors: ModuleNotFound"
    )
    assert "ModuleNotFound: lib.ownable --> contracts/Escrow.vy:8:0" in answer["result"]


def test_version_not_installed_names_the_installed_ones(world):
    base, address = world["base"], world["negative"]
    answer = submit(base, vyper_form(address, escrow_input(), f"{ESCROW}:Escrow", world["args"], version="vyper:0.3.9"))
    installed = ", ".join(f"vyper:{v}" for v in sorted(vyper_compilers(), key=Version))
    assert answer["result"] == (
        "Fail - Unable to verify. Invalid or not supported solc version, see https://etherscan.io/solcversions for list: Compiler vyper:0.3.9 is not installed on this explorer "
        f"(installed: {installed}); submit one of those versions, or install it: python -m venv .vyper/0.3.9 "
        "&& .vyper/0.3.9/bin/pip install vyper==0.3.9"
    )
    assert source_record(base, address)["SourceCode"] == "", "nothing failed may be stored as verified"


def test_a_comment_is_a_partial_match(world):
    base, address = world["base"], world["partial"]
    commented = escrow_input(**{"# Escrow: implements": "# Escrow (a comment added after deployment): implements"})
    runtime = compiled("vyper:0.4.3", commented, ESCROW)
    # Only the initcode's CBOR (the sources' integrity hash) changes; the runtime is identical.
    assert runtime["deployedBytecode"]["object"] == world["gas"]["deployedBytecode"]["object"]
    assert runtime["bytecode"]["object"] != world["gas"]["bytecode"]["object"]
    answer = submit(base, vyper_form(address, commented, f"{ESCROW}:Escrow", world["args"]))
    assert answer["result"] == "Pass - Verified", answer
    record = source_record(base, address)
    assert record["MatchType"] == "partial" and record["CompilerVersion"] == "vyper:0.4.3"


def test_vyper_0_3_10(world):
    """A second Vyper line, from its own venv (.vyper/0.3.10, made by toolchain/install.sh)."""
    assert "0.3.10" in vyper_compilers(), "run toolchain/install.sh: it installs vyper 0.3.10 in .vyper/"
    anvil, base = world["anvil"], world["base"]
    input_json = {
        "language": "Vyper",
        "sources": {"contracts/Counter310.vy": {"content": COUNTER_0310}},
        "settings": {"evmVersion": "shanghai", "optimize": "gas"},
    }
    evm = compiled("vyper:0.3.10", input_json, "contracts/Counter310.vy")
    assert bc.tail_metadata(evm["bytecode"]["object"]).compiler == ("vyper", "0.3.10")
    args = encode(["address", "uint256"], [anvil.accounts[1], 5])
    address = anvil.deploy(evm["bytecode"]["object"], args)
    name = "contracts/Counter310.vy:Counter310"
    with_04 = submit(base, vyper_form(address, input_json, name, args, version="vyper:0.4.3"))
    assert with_04["result"].startswith("Fail - Unable to verify. "), with_04
    ok = submit(base, vyper_form(address, input_json, name, args, version="vyper:0.3.10"))
    assert ok["result"] == "Pass - Verified", ok
    record = source_record(base, address)
    assert record["CompilerVersion"] == "vyper:0.3.10" and record["MatchType"] == "full"
    assert json.loads(record["SourceCode"][1:-1])["sources"]["contracts/Counter310.vy"]["content"] == COUNTER_0310
