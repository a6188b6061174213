"""The explorer embedded in-process on Ape's `ethereum:local:test` provider (ApeProviderChain), still
speaking real HTTP on 127.0.0.1: deploy with Ape, verify through HTTP, read back."""

import json
import subprocess
import sys

import pytest
import requests

from ape_contract_verify.evm.chain import ApeProviderChain
from ape_contract_verify.protocol.answers import Texts
from ape_contract_verify.server.runner import start_embedded
from support.service import encode, get, json_form, poll, post, solc_compile, standard_input

FILES = ["token/Token.sol", "token/ERC20Base.sol", "access/Ownable.sol", "proxy/Box.sol", "proxy/SimpleProxy.sol"]


def _contract_type(name, output):
    from ethpm_types import ContractType

    return ContractType.model_validate(
        {
            "contractName": name,
            "abi": output["abi"],
            "deploymentBytecode": {"bytecode": "0x" + output["evm"]["bytecode"]["object"]},
        }
    )


@pytest.fixture(scope="module")
def local_chain():
    import ape

    with ape.networks.ethereum.local.use_provider("test") as provider:
        yield provider, ape.accounts.test_accounts


@pytest.fixture(scope="module")
def deployed(local_chain):
    provider, accounts = local_chain
    input_json = standard_input(FILES)
    out = solc_compile(input_json)["contracts"]
    token_out = out["contracts/token/Token.sol"]["Token"]
    box_out = out["contracts/proxy/Box.sol"]["Box"]
    proxy_out = out["contracts/proxy/SimpleProxy.sol"]["SimpleProxy"]
    owner = accounts[0]
    holders = [accounts[1].address, accounts[2].address]
    token = owner.deploy(_contract_type("Token", token_out), "Embedded", "EMB", 5, owner.address, holders)
    token_args = encode(
        ["string", "string", "uint256", "address", "address[]"], ["Embedded", "EMB", 5, owner.address, holders]
    )
    box = owner.deploy(_contract_type("Box", box_out))
    proxy = owner.deploy(_contract_type("SimpleProxy", proxy_out), box.address, b"")
    proxy_args = encode(["address", "bytes"], [box.address, b""])
    provider.mine(2)
    return {
        "input": input_json,
        "token": (str(token.address), token_args, token_out["abi"]),
        "box": (str(box.address), b"", box_out["abi"]),
        "proxy": (str(proxy.address), proxy_args, proxy_out["abi"]),
    }


@pytest.fixture(scope="module")
def explorer(local_chain):
    provider, _ = local_chain
    with start_embedded(ApeProviderChain(provider)) as running:
        yield running


def test_verify_on_the_in_process_chain_through_http(explorer, deployed):
    base = explorer.base_url
    assert base.startswith("http://127.0.0.1:") and base.endswith("/api")
    names = {
        "token": "contracts/token/Token.sol:Token",
        "box": "contracts/proxy/Box.sol:Box",
        "proxy": "contracts/proxy/SimpleProxy.sol:SimpleProxy",
    }
    guids = {}
    for key, name in names.items():
        address, args, _ = deployed[key]
        answer = post(base, json_form(address, deployed["input"], name, args))
        assert answer["status"] == "1", answer
        guids[key] = answer["result"]
    for key, guid in guids.items():
        assert poll(base, guid, timeout=240) == {"status": "1", "message": "OK", "result": Texts.PASS}, key
    for key in names:
        address, args, abi = deployed[key]
        assert json.loads(get(base, action="getabi", address=address)["result"]) == abi
        (entry,) = get(base, action="getsourcecode", address=address)["result"]
        assert json.loads(entry["SourceCode"][1:-1]) == deployed["input"]
        assert entry["ConstructorArguments"] == args.hex() and entry["MatchType"] == "full"


def test_proxy_on_the_in_process_chain(explorer, deployed):
    base = explorer.base_url
    proxy, box = deployed["proxy"][0], deployed["box"][0]
    guid = post(
        base, {"module": "contract", "action": "verifyproxycontract", "address": proxy, "expectedimplementation": box}
    )["result"]
    answer = poll(base, guid, action="checkproxyverification", timeout=60)
    assert answer["status"] == "1" and f"is found at {box}" in answer["result"]


def test_wrong_constructor_arguments_fail_on_the_in_process_chain(explorer, deployed, local_chain):
    provider, accounts = local_chain
    out = solc_compile(standard_input(FILES))["contracts"]["contracts/token/Token.sol"]["Token"]
    holders = [accounts[1].address]
    second = accounts[0].deploy(_contract_type("Token", out), "Two", "TWO", 1, accounts[0].address, holders)
    wrong = encode(
        ["string", "string", "uint256", "address", "address[]"], ["Two", "TWO", 2, accounts[0].address, holders]
    )
    guid = post(
        explorer.base_url, json_form(str(second.address), deployed["input"], "contracts/token/Token.sol:Token", wrong)
    )["result"]
    answer = poll(explorer.base_url, guid, timeout=240)
    assert answer["status"] == "0" and "Constructor arguments differ" in answer["result"]


def test_stop_frees_the_port(local_chain):
    provider, _ = local_chain
    running = start_embedded(ApeProviderChain(provider))
    url = running.base_url
    assert get(url, action="getabi", address="0x" + "00" * 20)["result"] == Texts.NOT_VERIFIED
    running.stop()
    with pytest.raises(requests.ConnectionError):
        requests.get(url, params={"module": "contract", "action": "getabi"}, timeout=5)


def test_starting_the_service_imports_no_engine_module():
    probe = (
        "import sys\n"
        "import ape_contract_verify.server.runner, ape_contract_verify.server.api\n"
        "heavy = [m for m in ('ape_contract_verify.engine.verifier', 'ape_contract_verify.engine.compilers',"
        " 'ape_contract_verify.evm.proxies', 'solcx', 'uvicorn') if m in sys.modules]\n"
        "print(heavy)\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
