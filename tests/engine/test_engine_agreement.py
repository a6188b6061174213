"""One engine: the plugin's pre-check and the local explorer give the same reason for the same
request. Each case deploys with one setting (on anvil) and submits with another: the pre-check
(`derive.precheck`, what `ape verify contract` runs) and a real explorer over HTTP must say the
same text, and each must name the input that differs. Once more through the real CLI."""

import json
import re

import pytest

from ape_contract_verify.derive.derive import PrecheckFailed, precheck
from ape_contract_verify.engine.compilers import CompileCache
from ape_contract_verify.evm.chain import JsonRpcChain
from ape_contract_verify.explorer.jobs import RealEngine
from ape_contract_verify.server.runner import start_embedded
from support import BIN, run
from support.e2e import anvil_project, copy_project, submissions, verify_cli
from support.engine import SOLC, bytecode_of, compiled, encode, json_request, solc_version_of, standard_input
from support.service import Anvil, poll, post
from support.vyper import DATA, ESCROW, ESCROW_TYPES, TOKEN, deploy_escrow, edited_copy, escrow_input

OWN_PROJECT = True  # its own anvil and the Vyper data project, no dependency: beside the example's group (conftest.py)

BOX = "src/Box.sol"
BOX_TYPES = ["uint256", "address", "string", "bytes32", "int16[]"]
FAIL = "Fail - Unable to verify. "


@pytest.fixture(scope="module")
def world():
    anvil = Anvil()
    explorer = None
    try:
        # One compile cache for the module: the explorer's compiles are then hits (compiler outputs
        # are a function of their input); each side still compares and words its reason itself.
        cache = CompileCache()
        chain = JsonRpcChain(anvil.url)
        explorer = start_embedded(chain, engine=RealEngine(chain, cache=cache))
        # Box: optimizer on, 200 runs, the compiler's default EVM version, no viaIR.
        box_input = standard_input({BOX: "Box.sol"})
        box_args = encode(BOX_TYPES, [7, anvil.accounts[1], "hello box", b"\x11" * 32, [3, -2]])
        box = anvil.deploy(bytecode_of(compiled(cache, SOLC, box_input, BOX, "Box")), box_args)
        # Calculator linked (settings.libraries) to a MathLib.
        lib_input = standard_input({"src/MathLib.sol": "Calculator.sol"})
        math_lib = anvil.deploy(bytecode_of(compiled(cache, SOLC, lib_input, "src/MathLib.sol", "MathLib")), b"")
        calc_input = standard_input(
            {"src/Calculator.sol": "Calculator.sol"}, libraries={"src/Calculator.sol": {"MathLib": math_lib}}
        )
        calc_args = encode(["uint256"], [3])
        calc = anvil.deploy(
            bytecode_of(compiled(cache, SOLC, calc_input, "src/Calculator.sol", "Calculator")), calc_args
        )
        # Vyper's Escrow, optimize gas.
        escrow_args = encode(ESCROW_TYPES, [TOKEN, 250, anvil.accounts[0]])
        escrow = anvil.deploy(
            bytecode_of(compiled(cache, "vyper:0.4.3", escrow_input("gas"), ESCROW, "Escrow")), escrow_args
        )
        yield {
            "anvil": anvil,
            "explorer": explorer,
            "cache": cache,
            "box": (box, box_input, box_args),
            "calc": (calc, calc_input, calc_args),
            "escrow": (escrow, escrow_args),
        }
    finally:
        if explorer is not None:
            explorer.stop()
        anvil.stop()


def changed(input_json: dict, **settings) -> dict:
    copy = json.loads(json.dumps(input_json))
    copy["settings"].update(settings)
    return copy


def box_request(world, input_json=None, args=None, **extra):
    address, box_input, box_args = world["box"]
    return json_request(address, input_json or box_input, f"{BOX}:Box", box_args if args is None else args, **extra)


def edited_source(world):
    _, box_input, _ = world["box"]
    copy = json.loads(json.dumps(box_input))
    text = copy["sources"][BOX]["content"]
    assert '"not owner"' in text
    copy["sources"][BOX]["content"] = text.replace('"not owner"', '"only the owner"')
    return copy


# case -> (the request, the setting that must be named, a text the reason must contain)
CASES = {
    "optimizer off": (
        lambda w: box_request(w, changed(w["box"][1], optimizer={"enabled": False, "runs": 200})),
        "optimizer",
        "compiled with the optimizer enabled with 200 runs (optimizer.enabled=true)",
    ),
    "optimizer runs": (
        lambda w: box_request(w, changed(w["box"][1], optimizer={"enabled": True, "runs": 1000})),
        "optimizer runs",
        "compiled with optimizer.runs=200: resubmit with that setting.",
    ),
    "evmVersion": (
        lambda w: box_request(w, changed(w["box"][1], evmVersion="paris")),
        "evmVersion",
        "compiled with the compiler's default evmVersion",
    ),
    "viaIR": (
        lambda w: box_request(w, changed(w["box"][1], viaIR=True)),
        "viaIR",
        "compiled with viaIR=false",
    ),
    "library": (
        lambda w: json_request(
            w["calc"][0],
            changed(w["calc"][1], libraries={"src/Calculator.sol": {"MathLib": "0x" + "5a" * 20}}),
            "src/Calculator.sol:Calculator",
            w["calc"][2],
        ),
        "library",
        "Library MathLib address differs: submitted 0x5a5a",
    ),
    "constructor arguments": (
        lambda w: box_request(
            w, args=encode(BOX_TYPES, [7, w["anvil"].accounts[1], "other box", b"\x11" * 32, [3, -2]])
        ),
        "constructor arguments",
        "label_ (string): submitted 'other box', deployed 'hello box'",
    ),
    "source line": (
        lambda w: box_request(w, edited_source(w)),
        "source",
        "No single change among the optimizer disabled (optimizer.enabled=false), viaIR=true",
    ),
    "compiler version": (
        lambda w: box_request(w, version=solc_version_of("0.8.37")),
        "compiler",
        "Compiler version differs: the deployed code's metadata says solc 0.8.26",
    ),
    "vyper optimize": (
        lambda w: json_request(
            w["escrow"][0], escrow_input("codesize"), f"{ESCROW}:Escrow", w["escrow"][1], version="vyper:0.4.3"
        ),
        "optimizer",
        "compiled with settings.optimize=gas: resubmit with that setting.",
    ),
}


# Etherscan's own words, which each cause's reason starts with (docs/explorer-behaviour.md).
MISMATCH = "Compiled contract deployment bytecode does NOT match the transaction deployment bytecode. "
LEADS = {
    "library": "Library was required but suitable match not found: ",
    "constructor arguments": "Please check if the correct constructor argument was entered. ",
}


def explorer_reason(explorer, request) -> str:
    answer = post(explorer.base_url, {"module": "contract", "action": "verifysourcecode", **request.to_form()})
    assert answer["status"] == "1", answer
    result = poll(explorer.base_url, answer["result"], timeout=120)["result"]
    assert result.startswith(FAIL), result
    return result[len(FAIL) :]


@pytest.mark.parametrize("case", CASES)
def test_the_pre_check_and_the_explorer_give_the_same_reason(world, case):
    build, setting, expected = CASES[case]
    request = build(world)
    with pytest.raises(PrecheckFailed) as refused:
        precheck(request, JsonRpcChain(world["anvil"].url), world["cache"])
    assert refused.value.field == setting, refused.value.reason
    assert expected in refused.value.reason
    assert refused.value.reason.startswith(LEADS.get(case, MISMATCH)), refused.value.reason
    assert explorer_reason(world["explorer"], request) == refused.value.reason


def test_the_pre_check_of_a_good_request_compiles_nothing_new(world, tmp_path):
    """derive's compile and the engine's are one canonical input: the second is a cache hit."""
    address, box_input, box_args = world["box"]
    cache = CompileCache(directory=tmp_path)  # its own: the session's shared cache would hit at once
    compiled(cache, SOLC, box_input, BOX, "Box")  # what derive compiles
    assert precheck(box_request(world), JsonRpcChain(world["anvil"].url), cache) == "full"
    assert (cache.compiles, cache.hits) == (1, 1)


def test_the_cli_prints_the_explorer_s_reason(world, tmp_path):
    """`ape verify contract` on a project whose Escrow now says `# pragma optimize codesize`, at an
    address deployed with gas: the pre-check refuses (nothing submitted) with the reason that the
    explorer gives when the same request is sent anyway (--no-check)."""
    anvil, explorer = world["anvil"], world["explorer"]
    base = copy_project(DATA, tmp_path / "compiled")
    run([BIN / "ape", "compile"], cwd=base, timeout=300)
    address = deploy_escrow(anvil, base)
    codesize = edited_copy(
        base, tmp_path / "codesize", "# pragma version 0.4.3\n", "# pragma version 0.4.3\n# pragma optimize codesize\n"
    )
    project = anvil_project(codesize, tmp_path / "project", anvil, explorer.base_url)

    before = submissions(explorer.db_path)
    refused = verify_cli(project, "contract", "Escrow", address, "--force", "--json")
    assert refused.returncode == 1, refused.stdout + refused.stderr
    (report,) = json.loads(refused.stdout)["reports"]
    assert report["outcome"] == "pre-check failed"
    setting, _, reason = report["reason"].partition(": ")
    assert setting == "optimizer" and "compiled with settings.optimize=gas" in reason, report
    assert submissions(explorer.db_path) == before, "nothing may be submitted after a failed pre-check"

    sent = verify_cli(project, "contract", "Escrow", address, "--force", "--no-check", "--json")
    (report,) = json.loads(sent.stdout)["reports"]
    assert report["outcome"] == "failed" and submissions(explorer.db_path) == before + 1, report
    assert re.sub(rf"^{re.escape(FAIL)}", "", report["reason"]) == reason
