"""Both clients driven through the one target protocol (`client/provider.VerificationTarget`), as
the workflow drives them: the project's local explorer as a child process (what `ape verify
serve` runs) over real anvil and solc, real HTTP, its Etherscan-style API and its Sourcify face;
and the local explorer in this process (`workflow/local_target.py`, what `ape run` verifies on),
answering as the HTTP face does.
Submit, wait, look up (an `ExplorerRecord` from either), link a proxy where the target says it
can, and the one that cannot says so."""

import json

import pytest

from ape_contract_verify.client.etherscan import ExplorerClient
from ape_contract_verify.client.provider import ExplorerRecord, VerificationTarget
from ape_contract_verify.client.sourcify import SourcifyClient
from ape_contract_verify.evm.chain import JsonRpcChain
from ape_contract_verify.exceptions import ActionNotSupported
from ape_contract_verify.explorer.contract_api import EmbeddedExplorer
from ape_contract_verify.protocol.answers import Outcome
from ape_contract_verify.request import CodeFormat, VerificationRequest
from ape_contract_verify.retry import RateLimiter
from ape_contract_verify.workflow.local_target import LocalTarget
from support.service import SOLC_0826, Anvil, ServerProcess, encode, solc_compile, standard_input

BOX = "contracts/proxy/Box.sol:Box"
PROXY = "contracts/proxy/SimpleProxy.sol:SimpleProxy"


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """One explorer, and a Box and a proxy to it for each face (one store: each face its own)."""
    anvil = Anvil()
    server = embedded = None
    try:
        server = ServerProcess(anvil.url, tmp_path_factory.mktemp("target-protocol") / "explorer.sqlite")
        source = standard_input(["proxy/Box.sol", "proxy/SimpleProxy.sol"])
        out = solc_compile(source)["contracts"]
        box_out = out["contracts/proxy/Box.sol"]["Box"]
        proxy_out = out["contracts/proxy/SimpleProxy.sol"]["SimpleProxy"]
        deployed = {}
        embedded = EmbeddedExplorer(JsonRpcChain(anvil.url)).start()
        for face in ("etherscan", "sourcify", "in-process"):
            box = anvil.deploy(box_out["evm"]["bytecode"]["object"])
            args = encode(["address", "bytes"], [box, b""])
            proxy = anvil.deploy(proxy_out["evm"]["bytecode"]["object"], args)
            deployed[face] = (box, proxy, args, anvil.deploy(box_out["evm"]["bytecode"]["object"]))
        yield {
            "server": server,
            "embedded": embedded,
            "source": source,
            "box_abi": box_out["abi"],
            "deployed": deployed,
        }
    finally:
        if server is not None:
            server.stop()
        if embedded is not None:
            embedded.stop()
        anvil.stop()


def target_for(world, face: str) -> VerificationTarget:
    base = world["server"].base_url
    if face == "in-process":
        return LocalTarget(world["embedded"])
    if face == "sourcify":
        return SourcifyClient(base.removesuffix("api"), 31337, limiter=RateLimiter(50.0))
    return ExplorerClient(base, limiter=RateLimiter(50.0), not_indexed_timeout=0, flavour="local")


def request_for(world, address: str, name: str, args: bytes = b"") -> VerificationRequest:
    return VerificationRequest(
        address=address,
        contract_name=name,
        source_code=json.dumps(world["source"]),
        code_format=CodeFormat.STANDARD_JSON,
        compiler_version=SOLC_0826,
        constructor_arguments=args.hex(),
        license_type=3,
    )


def submit_and_wait(target: VerificationTarget, request: VerificationRequest):
    receipt = target.verify_source_code(request)
    return target.wait(receipt, interval=0.2, timeout=120)


@pytest.mark.parametrize("face", ["etherscan", "sourcify", "in-process"])
def test_one_protocol_drives_both_clients(world, face):
    target = target_for(world, face)
    box, proxy, proxy_args, _ = world["deployed"][face]
    assert isinstance(target, VerificationTarget)
    kind = "sourcify" if face == "sourcify" else "etherscan"
    assert target.kind == kind and target.flavour == ("local" if kind == "etherscan" else "sourcify")

    before = target.contract_record(box)
    assert isinstance(before, ExplorerRecord) and not before.verified and not before.exact

    answer = submit_and_wait(target, request_for(world, box, BOX))
    assert answer.outcome == Outcome.VERIFIED, answer

    record = target.contract_record(box)
    assert isinstance(record, ExplorerRecord) and record.verified and record.exact
    assert record.name.endswith("Box") and record.compiler == SOLC_0826 and record.language == "Solidity"
    assert record.abi == world["box_abi"]
    assert record.files["contracts/proxy/Box.sol"] == world["source"]["sources"]["contracts/proxy/Box.sol"]["content"]
    assert record.settings["optimizer"] == {"enabled": True, "runs": 200}
    assert record.match == ("exact_match" if face == "sourcify" else None)
    assert not record.proxy and record.implementation == ""

    again = submit_and_wait(target, request_for(world, box, BOX))
    assert again.outcome.is_success, again  # already verified: a success, on both

    assert submit_and_wait(target, request_for(world, proxy, PROXY, proxy_args)).outcome == Outcome.VERIFIED
    if target.kind.links_proxies:
        linked = target.wait(target.verify_proxy(proxy, box), interval=0.2, timeout=60)
        assert linked.outcome == Outcome.VERIFIED, linked
    else:
        with pytest.raises(ActionNotSupported, match="resolves proxies itself"):
            target.verify_proxy(proxy, box)
    # Linked (Etherscan-style) or resolved by the target itself (Sourcify): the record says so.
    proxied = target.contract_record(proxy)
    assert proxied.verified and proxied.proxy and proxied.implementation.lower() == box.lower()


def test_what_each_target_supports_is_said_by_the_protocol(world):
    etherscan, sourcify = target_for(world, "etherscan"), target_for(world, "sourcify")
    assert etherscan.kind.links_proxies and not sourcify.kind.links_proxies
    assert etherscan.link(world["deployed"]["etherscan"][0]) is None  # its pages are the Target's
    assert sourcify.link(world["deployed"]["sourcify"][0]).endswith(f"/31337/{world['deployed']['sourcify'][0]}")


@pytest.mark.parametrize("face", ["etherscan", "sourcify", "in-process"])
def test_a_wrong_submission_fails_with_a_reason_and_nothing_is_held(world, face):
    target = target_for(world, face)
    spare = world["deployed"][face][3]  # a Box, submitted as the proxy's source: the code differs
    args = encode(["address", "bytes"], [world["deployed"][face][0], b""])
    answer = submit_and_wait(target, request_for(world, spare, PROXY, args))
    assert answer.outcome == Outcome.FAILED and answer.reason, answer
    assert not target.contract_record(spare).verified


def test_in_process_the_local_explorer_answers_as_over_http(world):
    """The same wrong submission to the served explorer and to the one in this process: the same
    outcome and text, the address aside."""
    answers = {}
    for face in ("etherscan", "in-process"):
        spare = world["deployed"][face][3]
        args = encode(["address", "bytes"], [world["deployed"][face][0], b""])
        answer = submit_and_wait(target_for(world, face), request_for(world, spare, PROXY, args))
        answers[face] = (answer.outcome, answer.status, answer.reason.replace(spare, "ADDRESS"))
    assert answers["in-process"] == answers["etherscan"], answers
