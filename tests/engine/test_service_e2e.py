"""End to end on anvil: the example contracts are deployed, then verified through real HTTP against
the standalone explorer (`python -m ape_contract_verify.server.runner --rpc <anvil>`, the same
code `ape verify serve` runs) with the real engine and compiler; getabi/getsourcecode round-trip."""

import json

import pytest

from ape_contract_verify.protocol.answers import Texts
from support.service import (
    SOLC_0826,
    SOLC_0837,
    Anvil,
    ServerProcess,
    encode,
    example_source,
    get,
    json_form,
    poll,
    post,
    solc_compile,
    standard_input,
    vyper_compile,
    vyper_input,
)

TOKEN_FILES = ["token/Token.sol", "token/ERC20Base.sol", "access/Ownable.sol"]
TOKEN = "contracts/token/Token.sol:Token"
TOKEN_TYPES = ["string", "uint256", "uint256", "address", "address[]"]
VERIFY_TIMEOUT = 240.0


def _checksum(address):
    from eth_utils import to_checksum_address

    return to_checksum_address(address)


def _token_args(anvil, supply=1000):
    # Token(name, symbol, supplyPerHolder, owner, holders)
    return encode(
        ["string", "string", "uint256", "address", "address[]"],
        ["Demo", "DMO", supply, anvil.accounts[0], [anvil.accounts[1], anvil.accounts[2]]],
    )


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    anvil = Anvil()
    server = None
    try:
        server = ServerProcess(anvil.url, tmp_path_factory.mktemp("e2e") / "explorer.sqlite")
        w = {"anvil": anvil, "server": server, "base": server.base_url}

        token_input = standard_input(TOKEN_FILES)
        token_out = solc_compile(token_input)["contracts"]["contracts/token/Token.sol"]["Token"]
        args = _token_args(anvil)
        w["token"] = (anvil.deploy(token_out["evm"]["bytecode"]["object"], args), token_input, args, token_out["abi"])
        # Undeployed-twice copies for the negative tests and the partial match (never verified in full).
        w["token_neg"] = anvil.deploy(token_out["evm"]["bytecode"]["object"], args)
        w["token_partial"] = anvil.deploy(token_out["evm"]["bytecode"]["object"], args)

        math_files = ["math/MathLib.sol", "math/Calculator.sol"]
        lib_input = standard_input(math_files)
        lib_out = solc_compile(lib_input)["contracts"]["contracts/math/MathLib.sol"]["MathLib"]
        lib = anvil.deploy(lib_out["evm"]["bytecode"]["object"])
        calc_input = standard_input(math_files, libraries={"contracts/math/MathLib.sol": {"MathLib": lib}})
        calc_out = solc_compile(calc_input)["contracts"]["contracts/math/Calculator.sol"]["Calculator"]
        calc_args = encode(["uint256"], [3])
        w["mathlib"] = (lib, standard_input(["math/MathLib.sol"]), b"", lib_out["abi"])
        w["calculator"] = (
            anvil.deploy(calc_out["evm"]["bytecode"]["object"], calc_args),
            calc_input,
            calc_args,
            calc_out["abi"],
        )
        w["calculator_neg"] = anvil.deploy(calc_out["evm"]["bytecode"]["object"], calc_args)

        box_input = standard_input(["proxy/Box.sol", "proxy/SimpleProxy.sol"])
        box_all = solc_compile(box_input)["contracts"]
        box_out, proxy_out = (
            box_all["contracts/proxy/Box.sol"]["Box"],
            box_all["contracts/proxy/SimpleProxy.sol"]["SimpleProxy"],
        )
        box = anvil.deploy(box_out["evm"]["bytecode"]["object"])
        proxy_args = encode(["address", "bytes"], [box, b""])
        w["box"] = (box, box_input, b"", box_out["abi"])
        w["proxy"] = (
            anvil.deploy(proxy_out["evm"]["bytecode"]["object"], proxy_args),
            box_input,
            proxy_args,
            proxy_out["abi"],
        )

        beacon_input = standard_input(["proxy/UpgradeableBeacon.sol", "proxy/BeaconProxy.sol"])
        beacon_all = solc_compile(beacon_input)["contracts"]
        beacon_out = beacon_all["contracts/proxy/UpgradeableBeacon.sol"]["UpgradeableBeacon"]
        beacon_proxy_out = beacon_all["contracts/proxy/BeaconProxy.sol"]["BeaconProxy"]
        beacon = anvil.deploy(
            beacon_out["evm"]["bytecode"]["object"], encode(["address", "address"], [box, anvil.accounts[0]])
        )
        w["beacon"] = beacon
        w["beacon_proxy"] = anvil.deploy(
            beacon_proxy_out["evm"]["bytecode"]["object"], encode(["address", "bytes"], [beacon, b""])
        )

        factory_input = standard_input(["factory/CloneFactory.sol"])
        factory_out = solc_compile(factory_input)["contracts"]["contracts/factory/CloneFactory.sol"]["CloneFactory"]
        factory_args = encode(["address"], [box])
        factory = anvil.deploy(factory_out["evm"]["bytecode"]["object"], factory_args)
        w["factory"] = (factory, factory_input, factory_args, factory_out["abi"])
        from eth_utils import keccak

        call = keccak(text="cloneDeterministic(bytes32,uint256)")[:4] + encode(
            ["bytes32", "uint256"], [b"\x07" * 32, 5]
        )
        receipt = anvil.transact("0x" + call.hex(), to=factory)
        w["clone"] = "0x" + receipt["logs"][-1]["topics"][1][-40:]

        legacy_text = example_source("legacy/LegacyStore.sol")
        legacy_input = {
            "language": "Solidity",
            "sources": {"LegacyStore.sol": {"content": legacy_text}},
            "settings": {"optimizer": {"enabled": True, "runs": 200}},
        }
        legacy_out = solc_compile(legacy_input, "0.5.17")["contracts"]["LegacyStore.sol"]["LegacyStore"]
        legacy_args = encode(["string", "uint256"], ["old", 7])
        w["legacy"] = (
            anvil.deploy(legacy_out["evm"]["bytecode"]["object"], legacy_args),
            legacy_text,
            legacy_args,
            legacy_out["abi"],
        )
        vault_input = vyper_input(["vault/Vault.vy", "vault/fees.vy"])
        vault_out = vyper_compile(vault_input)["contracts"]["contracts/vault/Vault.vy"]["Vault"]
        vault_args = encode(["string", "uint256", "address"], ["vault", 25, anvil.accounts[0]])
        w["vault"] = (
            anvil.deploy(vault_out["evm"]["bytecode"]["object"], vault_args),
            vault_input,
            vault_args,
            vault_out["abi"],
        )
        yield w
    finally:
        if server is not None:
            server.stop()
        anvil.stop()


@pytest.fixture(scope="module")
def verified(world):
    """Every positive submission at once (the queue takes them in order), then each polled to its end."""
    base = world["base"]
    # MathLib itself is not submitted: a library's runtime code carries its own address (call
    # protection, PUSH20 at byte 1), which the engine does not normalise yet (reported to the lead).
    names = {
        "token": TOKEN,
        "factory": "contracts/factory/CloneFactory.sol:CloneFactory",
        "calculator": "contracts/math/Calculator.sol:Calculator",
        "box": "contracts/proxy/Box.sol:Box",
        "proxy": "contracts/proxy/SimpleProxy.sol:SimpleProxy",
    }
    guids = {}
    for key, name in names.items():
        address, input_json, args, _ = world[key]
        answer = post(base, json_form(address, input_json, name, args, licenseType="3"))
        assert answer["status"] == "1", (key, answer)
        guids[key] = answer["result"]
    address, text, args, _ = world["legacy"]
    legacy = post(
        base,
        {
            "module": "contract",
            "action": "verifysourcecode",
            "contractaddress": address,
            "sourceCode": text,
            "codeformat": "solidity-single-file",
            "contractname": "LegacyStore",
            "compilerversion": "v0.5.17+commit.d19bba13",
            "optimizationUsed": "1",
            "runs": "200",
            "constructorArguements": "0x" + args.hex(),
        },
    )
    assert legacy["status"] == "1", legacy
    guids["legacy"] = legacy["result"]
    address, input_json, args, _ = world["vault"]
    vault = post(
        base,
        json_form(
            address, input_json, "contracts/vault/Vault.vy:Vault", args, version="vyper:0.4.3", codeformat="vyper-json"
        ),
    )
    assert vault["status"] == "1", vault
    guids["vault"] = vault["result"]
    return {key: poll(base, guid, timeout=VERIFY_TIMEOUT) for key, guid in guids.items()}


def test_every_example_passes(verified):
    for key, answer in verified.items():
        assert answer == {"status": "1", "message": "OK", "result": Texts.PASS}, (key, answer)


@pytest.mark.parametrize("key", ["token", "calculator", "box", "proxy", "legacy", "vault", "factory"])
def test_getabi_and_getsourcecode_round_trip(world, verified, key):
    base = world["base"]
    address, submitted, args, abi = world[key]
    answer = get(base, action="getabi", address=address)
    assert answer["status"] == "1"
    assert json.loads(answer["result"]) == abi
    (entry,) = get(base, action="getsourcecode", address=address)["result"]
    assert all(isinstance(v, str) for v in entry.values())
    assert json.loads(entry["ABI"]) == abi
    assert entry["ConstructorArguments"] == args.hex()
    if key == "legacy":
        assert entry["SourceCode"] == submitted
        assert entry["CompilerVersion"] == "v0.5.17+commit.d19bba13"
        assert entry["LicenseType"] == "GNU GPLv3"  # from the SPDX line
    elif key == "vault":
        assert entry["SourceCode"].startswith("{{") and json.loads(entry["SourceCode"][1:-1]) == submitted
        assert entry["CompilerVersion"] == "vyper:0.4.3" and entry["EVMVersion"] == "cancun"
        assert entry["ContractName"] == "Vault"
    else:
        assert entry["SourceCode"].startswith("{{") and json.loads(entry["SourceCode"][1:-1]) == submitted
        assert entry["CompilerVersion"] == SOLC_0826
        assert entry["LicenseType"] == "MIT"
    if key != "vault":
        assert entry["OptimizationUsed"] == "1" and entry["Runs"] == "200"
    assert entry["MatchType"] in ("full", "partial")
    if key == "calculator":
        assert entry["Library"].lower() == f"mathlib:{world['mathlib'][0]}".lower()
    again = post(base, json_form(address, standard_input(TOKEN_FILES), TOKEN))
    assert again == {"status": "0", "message": "NOTOK", "result": Texts.SOURCE_ALREADY_VERIFIED}


def test_proxy_verification_links_the_implementation(world, verified):
    base = world["base"]
    proxy, box = world["proxy"][0], world["box"][0]
    guid = post(
        base, {"module": "contract", "action": "verifyproxycontract", "address": proxy, "expectedimplementation": box}
    )["result"]
    answer = poll(base, guid, action="checkproxyverification", timeout=60)
    assert answer == {
        "status": "1",
        "message": "OK",
        "result": Texts.PROXY_FOUND.format(proxy=_checksum(proxy), implementation=_checksum(box)),
    }
    (entry,) = get(base, action="getsourcecode", address=proxy)["result"]
    assert entry["Proxy"] == "1" and entry["Implementation"] == _checksum(box)
    assert entry["ContractName"] == "SimpleProxy"

    wrong = post(
        base,
        {
            "module": "contract",
            "action": "verifyproxycontract",
            "address": proxy,
            "expectedimplementation": world["token"][0],
        },
    )["result"]
    assert poll(base, wrong, action="checkproxyverification", timeout=60)["result"] == Texts.PROXY_EXPECTED_MISMATCH
    plain = post(base, {"module": "contract", "action": "verifyproxycontract", "address": world["token"][0]})["result"]
    assert poll(base, plain, action="checkproxyverification", timeout=60)["result"] == Texts.PROXY_NO_DELEGATECALL


def test_minimal_proxy_made_by_a_factory(world, verified):
    base = world["base"]
    clone, box, factory = world["clone"], world["box"][0], world["factory"][0]
    guid = post(base, {"module": "contract", "action": "verifyproxycontract", "address": clone})["result"]
    answer = poll(base, guid, action="checkproxyverification", timeout=60)
    assert answer == {
        "status": "1",
        "message": "OK",
        "result": Texts.PROXY_FOUND.format(proxy=_checksum(clone), implementation=_checksum(box)),
    }
    created = get(base, action="getcontractcreation", contractaddresses=clone)
    assert created["status"] == "1", created
    (entry,) = created["result"]
    assert entry["contractFactory"].lower() == factory.lower()
    assert entry["contractCreator"].lower() == world["anvil"].accounts[0].lower()


def test_beacon_proxy(world, verified):
    base = world["base"]
    proxy, box = world["beacon_proxy"], world["box"][0]
    guid = post(
        base, {"module": "contract", "action": "verifyproxycontract", "address": proxy, "expectedimplementation": box}
    )["result"]
    answer = poll(base, guid, action="checkproxyverification", timeout=60)
    assert answer["status"] == "1", answer
    assert answer["result"] == Texts.PROXY_FOUND.format(proxy=_checksum(proxy), implementation=_checksum(box))


def _changed_token_input():
    changed = standard_input(TOKEN_FILES)
    unit = changed["sources"]["contracts/token/Token.sol"]
    unit["content"] = unit["content"].replace("return initialHolders.length;", "return initialHolders.length + 1;")
    assert unit["content"] != example_source("token/Token.sol")
    return changed


NEGATIVES = {
    "constructor arguments": (
        lambda w: json_form(w["token_neg"], standard_input(TOKEN_FILES), TOKEN, _token_args(w["anvil"], supply=999)),
        "Constructor arguments differ",
    ),
    "optimizer runs": (
        lambda w: json_form(
            w["token_neg"],
            standard_input(TOKEN_FILES, optimizer={"enabled": True, "runs": 10000}),
            TOKEN,
            _token_args(w["anvil"]),
        ),
        "differs",
    ),
    "evmVersion": (
        lambda w: json_form(
            w["token_neg"], standard_input(TOKEN_FILES, evmVersion="paris"), TOKEN, _token_args(w["anvil"])
        ),
        "differs",
    ),
    "compiler version": (
        lambda w: json_form(
            w["token_neg"], standard_input(TOKEN_FILES), TOKEN, _token_args(w["anvil"]), version=SOLC_0837
        ),
        "Compiler version differs",
    ),
    "source line": (
        lambda w: json_form(w["token_neg"], _changed_token_input(), TOKEN, _token_args(w["anvil"])),
        "differs",
    ),
    "contract name": (
        lambda w: json_form(
            w["token_neg"], standard_input(TOKEN_FILES), "contracts/token/Token.sol:Tokens", _token_args(w["anvil"])
        ),
        "Unable to locate ContractName",
    ),
    "library address": (
        lambda w: json_form(
            w["calculator_neg"],
            standard_input(
                ["math/MathLib.sol", "math/Calculator.sol"],
                libraries={"contracts/math/MathLib.sol": {"MathLib": w["token"][0]}},
            ),
            "contracts/math/Calculator.sol:Calculator",
            encode(["uint256"], [3]),
        ),
        "Library MathLib",
    ),
}


@pytest.mark.parametrize("what", list(NEGATIVES))
def test_wrong_submission_fails_and_says_what_differs(world, what):
    make_form, expected = NEGATIVES[what]
    base = world["base"]
    answer = post(base, make_form(world))
    assert answer["status"] == "1", answer
    result = poll(base, answer["result"], timeout=VERIFY_TIMEOUT)
    assert result["status"] == "0" and result["message"] == "NOTOK"
    assert result["result"].startswith("Fail - Unable to verify. "), result
    assert expected in result["result"], result["result"]
    # A failure verifies nothing.
    address = json.loads(json.dumps(make_form(world)))["contractaddress"]
    assert get(base, action="getabi", address=address)["result"] == Texts.NOT_VERIFIED


def test_metadata_only_difference_is_a_partial_match(world):
    base = world["base"]
    renamed = standard_input(TOKEN_FILES, prefix="src/")  # source unit names change only the metadata hash
    data = json_form(world["token_partial"], renamed, "src/token/Token.sol:Token", _token_args(world["anvil"]))
    result = poll(base, post(base, data)["result"], timeout=VERIFY_TIMEOUT)
    assert result["result"] == Texts.PASS, result
    (entry,) = get(base, action="getsourcecode", address=world["token_partial"])["result"]
    assert entry["MatchType"] == "partial"
    # A partial match can be upgraded by the exact submission.
    exact = json_form(world["token_partial"], standard_input(TOKEN_FILES), TOKEN, _token_args(world["anvil"]))
    assert poll(base, post(base, exact)["result"], timeout=VERIFY_TIMEOUT)["result"] == Texts.PASS
    (entry,) = get(base, action="getsourcecode", address=world["token_partial"])["result"]
    assert entry["MatchType"] == "full"


def test_no_code_and_getcontractcreation(world):
    base = world["base"]
    empty = "0x" + "00" * 19 + "42"
    answer = post(base, json_form(empty, standard_input(TOKEN_FILES), TOKEN))
    assert answer == {"status": "0", "message": "NOTOK", "result": Texts.UNABLE_TO_LOCATE.format(address=empty)}
    created = get(base, action="getcontractcreation", contractaddresses=world["token"][0])
    assert created["status"] == "1"
    (entry,) = created["result"]
    assert entry["contractCreator"].lower() == world["anvil"].accounts[0].lower()
    assert entry["txHash"].startswith("0x") and len(entry["txHash"]) == 66
