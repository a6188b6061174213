"""workflow/plan.py's dry run: what a real run would submit, in its order (implementation, own source,
proxy link), worded for a person, and the bodies written byte for byte; never the API key.
Derivation is answered here (its own tests are derive's); no chain, nothing sent."""

import json
from types import SimpleNamespace

import pytest

from ape_contract_verify.client.targets import Target
from ape_contract_verify.derive import artifacts
from ape_contract_verify.derive import derive as derive_module
from ape_contract_verify.derive.derive import PrecheckFailed
from ape_contract_verify.protocol.secrets import ApiKey
from ape_contract_verify.request import CodeFormat, VerificationRequest
from ape_contract_verify.workflow import plan as dry_run
from ape_contract_verify.workflow.plan import Derivations, DryRunPlan, Options, Planned

pytestmark = pytest.mark.unit

A = "0x5FbDB2315678afecb367f032d93F642f64180aa3"
IMPL = "0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0"
KEY = "SECRETKEY1234567890"
CLONE = bytes.fromhex("363d3d373d3d3d363d73" + IMPL[2:].lower() + "5af43d82803e903d91602b57fd5bf3")


SOURCE = json.dumps(
    {"language": "Solidity", "sources": {"contracts/Box.sol": {"content": "contract Box {}"}}, "settings": {}}
)


def request(address=A, **changes):
    fields = dict(
        address=address,
        contract_name="contracts/Box.sol:Box",
        source_code=SOURCE,
        code_format=CodeFormat.STANDARD_JSON,
        compiler_version="v0.8.26+commit.8a97fa7a",
        optimization_used=True,
        runs=200,
        evm_version="cancun",
        constructor_arguments="00" * 31 + "2a",
        license_type=3,
        libraries={"Maths": "0x" + "cd" * 20},
    )
    return VerificationRequest(**{**fields, **changes})


def etherscan(url="https://api.etherscan.io/v2/api", key=KEY):
    return Target("ethereum", "mainnet", url, 1, ApiKey(key) if key else None, name="etherscan")


def sourcify(chain_id=1):
    return Target(
        "ethereum", "mainnet", "https://sourcify.dev/server", chain_id, None, name="sourcify", kind="sourcify"
    )


def test_a_request_is_described_field_by_field():
    item = Planned("Box", A, request(), match="full", warnings=["library Maths: stale"], creation_source="fork replay")
    lines = dry_run.describe(item)
    assert lines == [
        f"  Box {A}: verifysourcecode as contracts/Box.sol:Box",
        f"    compiler v0.8.26+commit.8a97fa7a, solidity-standard-json-input, {len(SOURCE)} bytes of source",
        "    settings: optimizer on, 200 runs, evmVersion cancun",
        f"    libraries: Maths={'0x' + 'cd' * 20}",
        f"    constructor arguments: 0x{'00' * 31}2a (from fork replay)",
        "    licence: MIT (3)",
        "    pre-check: full match",
        "    warning: library Maths: stale",
    ]
    bare = dry_run.describe(
        Planned("Box", A, request(constructor_arguments="", libraries={}, via_ir=False)), licence_sent=False
    )
    assert (
        "    constructor arguments: none" in bare and "    libraries: none" in bare and "    pre-check: skipped" in bare
    )
    assert "    settings: optimizer on, 200 runs, evmVersion cancun, viaIR off" in bare
    assert not any("licence" in line for line in bare)


def test_an_error_a_data_contract_and_a_proxy_link_are_one_line_each():
    assert dry_run.describe(Planned("Box", A, error="pre-check failed: x: y")) == [
        f"  Box {A}: NOT SENT: pre-check failed: x: y"
    ]
    nothing = Planned("data contract", A, nothing="nothing to verify")
    assert dry_run.describe(nothing) == [f"  data contract {A}: nothing to verify"] and not nothing.sent
    link = Planned("Box (proxy link)", A, implementation=IMPL)
    assert link.sent and dry_run.describe(link) == [
        f"  Box (proxy link) {A}: verifyproxycontract, expected implementation {IMPL}"
    ]


def test_the_form_is_the_client_s_without_the_key_and_with_the_chain_id_where_sent():
    form = dry_run.form_for(etherscan(), Planned("Box", A, request()))
    assert list(form)[:3] == ["module", "action", "chainid"]
    assert (form["module"], form["action"], form["chainid"]) == ("contract", "verifysourcecode", "1")
    assert form["contractaddress"] == A and "apikey" not in form and KEY not in json.dumps(form)
    proxy = dry_run.form_for(
        etherscan("https://eth.blockscout.com/api"), Planned("Box (proxy link)", A, implementation=IMPL)
    )
    assert proxy == {
        "module": "contract",
        "action": "verifyproxycontract",
        "address": A,
        "expectedimplementation": IMPL,
    }


def test_the_bodies_are_written_byte_for_byte_under_the_target_s_folder(tmp_path):
    source = SOURCE.replace('"settings": {}', '"settings":\r\n{}').replace("Box {", "Bo\u00e9 {")  # CRLF, non-ASCII
    item = Planned("openzeppelin:ERC1967Proxy (implementation)", A, request(source_code=source))
    paths = DryRunPlan("n", [etherscan()], {"etherscan": [item]}).write(tmp_path)
    stem = f"ERC1967Proxy-{A}"
    assert paths == [tmp_path / "etherscan" / f"{stem}.json", tmp_path / "etherscan" / f"{stem}.form.json"]
    assert paths[0].read_bytes() == source.encode("utf-8")
    assert json.loads(paths[1].read_text()) == dry_run.form_for(etherscan(), item)
    link = DryRunPlan("n", [etherscan()], {"etherscan": [Planned("Box (proxy link)", A, implementation=IMPL)]})
    assert link.write(tmp_path) == [tmp_path / "etherscan" / f"Box-{A}.proxy.form.json"]
    flat = Planned("Box", A, request(code_format=CodeFormat.SINGLE_FILE))
    assert DryRunPlan("n", [etherscan()], {"etherscan": [flat]}).write(tmp_path)[0].suffix == ".sol"


def test_the_plan_s_lines_never_show_the_key_and_ok_is_false_when_one_target_cannot_send(tmp_path):
    good, bad = Planned("Box", A, request()), Planned("Token", A, error="pre-check failed: x: y")
    plan = DryRunPlan("ethereum:mainnet", [etherscan(), etherscan(url=None, key=None)], {"etherscan": [good, bad]})
    lines = list(plan.lines(str(tmp_path)))
    text = "\n".join(lines)
    assert lines[0] == "Dry run on ethereum:mainnet: nothing is sent."
    assert "target etherscan (etherscan) at https://api.etherscan.io/v2/api, with an API key (not shown):" in lines
    assert "target etherscan (etherscan) at the embedded local explorer, with no API key:" in lines
    assert KEY not in text and not any(KEY in p.read_text() for p in plan.files)
    assert all(p.exists() for p in plan.files) and not any("Token" in p.name for p in plan.files)
    assert not plan.ok
    assert DryRunPlan("n", [etherscan()], {"etherscan": [good]}).ok


def test_sourcify_gets_its_body_no_proxy_link_and_nothing_without_a_chain_id(tmp_path):
    item = Planned("Box", A, request(creation_tx_hash="0x" + "12" * 32))
    link = Planned("Box (proxy link)", A, implementation=IMPL)
    plan = DryRunPlan("ethereum:mainnet", [sourcify()], {"sourcify": [item, link]})
    lines = list(plan.lines(str(tmp_path)))
    assert f"  Box {A}: POST https://sourcify.dev/server/v2/verify/1/{A}" in lines
    assert f"    creationTransactionHash {'0x' + '12' * 32}" in lines
    assert f"  Box (proxy link) {A}: no proxy link is sent to Sourcify (it resolves proxies itself)" in lines
    (body,) = plan.files
    url, sent = dry_run.sourcify_submission(sourcify(), item.request)
    assert body.read_bytes() == sent and json.loads(sent)["contractIdentifier"] == "contracts/Box.sol:Box"
    assert plan.ok
    blind = DryRunPlan("n", [sourcify(None)], {"sourcify": [item]})
    assert list(blind.lines())[-1] == f"  Box {A}: NOT SENT: Sourcify needs the chain id, and the node did not say it"
    assert not blind.ok


class Reader:
    def __init__(self, code):
        self.code = code

    def get_code(self, address):
        return self.code.get(address, b"")

    def get_storage_at(self, address, slot):
        return bytes(32)

    def find_creation(self, address):
        return None


@pytest.fixture
def derived(monkeypatch):
    """find_artifact/identify and derive answered: identify names the type by address."""
    asked = []

    def find_artifact(name, project):
        return SimpleNamespace(label=name)

    def identify(address, project, runtime=None, cache=None, creation=None):
        return SimpleNamespace(label="Impl" if address == IMPL else "Other")

    def derive(artifact, address, **kwargs):
        asked.append((artifact.label, address, kwargs["code_format"], kwargs["constructor_args"]))
        if artifact.label == "Broken":
            raise PrecheckFailed("compiler version", "the chain's code was built by another solc")
        return SimpleNamespace(request=request(address), match="full", warnings=[], creation_source="transaction")

    monkeypatch.setattr(artifacts, "find_artifact", find_artifact)
    monkeypatch.setattr(artifacts, "identify", identify)
    monkeypatch.setattr(derive_module, "derive", derive)
    return asked


def plan(reader, name=None, **kwargs):
    return dry_run.plan(A, name, reader, Derivations(None), Options(**kwargs), constructor_args="42")


def test_a_clone_plans_its_implementation_and_the_link_not_its_own_source(derived):
    planned = plan(Reader({A: CLONE, IMPL: b"\x60\x80"}))
    assert [(p.label, p.address, p.sent) for p in planned] == [
        ("Impl", IMPL, True),
        ("EIP-1167 clone (proxy link)", A, True),
    ]
    assert planned[1].implementation == IMPL and planned[1].request is None
    assert derived == [
        ("Impl", IMPL, CodeFormat.STANDARD_JSON, None)
    ]  # the implementation gets no constructor args of the proxy's


def test_a_named_contract_s_pre_check_failure_is_planned_as_not_sent(derived):
    (item,) = plan(Reader({A: b"\x60\x80"}), "Broken")
    assert item.error == "pre-check failed: compiler version: the chain's code was built by another solc"
    (ok,) = plan(Reader({A: b"\x60\x80"}), "Box", code_format="flatten")
    assert ok.sent and derived[-1] == ("Box", A, "flatten", "42")


def test_a_data_contract_is_nothing_to_verify_unless_named(derived):
    (item,) = plan(Reader({A: b"\x00hello"}))
    assert item.nothing and item.nothing.startswith("a data contract") and derived == []
