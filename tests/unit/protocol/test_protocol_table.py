"""One table of bad requests, fed through both ends of the protocol.

Client: the path a user's submission takes (`ExplorerClient` with a `VerificationRequest`, or a
GUID/address), against a loopback stub that counts requests: `InvalidRequest` names the parameter
and nothing is sent. Server: the same form POSTed over real HTTP to a local explorer (fake chain and
engine): HTTP 200, status "0", nothing queued, and the answer is exactly the client's error as the
explorer words it (`refusal_text`), so the two ends cannot drift.
"""

import json
from dataclasses import dataclass, field

import pytest
import requests

from ape_contract_verify.exceptions import InvalidRequest
from ape_contract_verify.protocol.answers import Texts
from ape_contract_verify.protocol.forms import refusal_text, validate_verify_form
from ape_contract_verify.request import CodeFormat, VerificationRequest
from ape_contract_verify.server.runner import start_embedded
from support.service import PLAIN_ADDR, FakeChain, FakeEngine, default_codes, poll
from support.stub_server import GUID, make_client, ok

LIB = "0x" + "4c" * 20
SOLIDITY = "// SPDX-License-Identifier: MIT\npragma solidity 0.8.26;\ncontract Box { uint256 public value; }\n"
STANDARD = {
    "language": "Solidity",
    "sources": {"src/Box.sol": {"content": SOLIDITY}},
    "settings": {"optimizer": {"enabled": True, "runs": 200}},
}
BASE = {
    "contractaddress": PLAIN_ADDR,
    "sourceCode": SOLIDITY,
    "codeformat": "solidity-single-file",
    "contractname": "Box",
    "compilerversion": "v0.8.26+commit.8a97fa7a",
    "optimizationUsed": "1",
    "runs": "200",
    "constructorArguements": "",
}


def standard(**changes) -> dict:
    """A standard-json form; `changes` replace keys of the JSON input (None drops one)."""
    data = {**STANDARD, **changes}
    data = {k: v for k, v in data.items() if v is not None}
    return {
        "codeformat": "solidity-standard-json-input",
        "contractname": "src/Box.sol:Box",
        "sourceCode": json.dumps(data),
    }


def libraries(count: int) -> dict:
    pairs: dict = {}
    for n in range(1, count + 1):
        pairs[f"libraryname{n}"] = f"L{n:02d}"
        pairs[f"libraryaddress{n}"] = "0x" + f"{n:040x}"
    return pairs


@dataclass
class Row:
    id: str
    param: str
    changes: dict = field(default_factory=dict)
    action: str = "verifysourcecode"
    client: bool = True  # False: a VerificationRequest cannot carry this form (checked on the form rules)


ROWS = [
    Row("bad contractaddress", "contractaddress", {"contractaddress": "0x1234"}),
    Row("empty sourceCode", "sourceCode", {"sourceCode": "  "}),
    Row("unknown codeformat", "codeformat", {"codeformat": "solidity-multi-file"}),
    Row("JSON contractname without path", "contractname", {**standard(), "contractname": "Box"}),
    Row("bad compilerversion", "compilerversion", {"compilerversion": "latest"}),
    Row("compilerversion without commit", "compilerversion", {"compilerversion": "0.8.26"}),
    Row("old solc", "compilerversion", {"compilerversion": "v0.4.10+commit.9e8cc01b"}),
    Row("vyper version, solidity format", "codeformat", {"compilerversion": "vyper:0.4.3"}),
    Row(
        "solidity version, vyper format",
        "compilerversion",
        {
            "codeformat": "vyper-json",
            "contractname": "a.vy:A",
            "sourceCode": json.dumps({"language": "Vyper", "sources": {"a.vy": {"content": "# a"}}}),
        },
    ),
    Row("optimizationUsed=2", "optimizationUsed", {"optimizationUsed": "2"}),
    Row("viaIR=maybe", "viaIR", {"viaIR": "maybe"}),
    Row("runs=-1", "runs", {"runs": "-1"}),
    Row("runs=²", "runs", {"runs": "²"}),
    Row("runs=2^32", "runs", {"runs": str(2**32)}),
    Row("evmversion=nonsense", "evmversion", {"evmversion": "nonsense"}),
    Row("licenseType=999", "licenseType", {"licenseType": "999"}),
    Row("odd-length constructor args", "constructorArguements", {"constructorArguements": "0xabc"}),
    Row("non-hex constructor args", "constructorArguements", {"constructorArguements": "0xzz"}),
    Row(
        "the two spellings differ",
        "constructorArguments",
        {"constructorArguements": "00" * 32, "constructorArguments": "01" * 32},
        client=False,
    ),
    Row("libraryname without address", "libraryaddress1", {"libraryname1": "MathLib"}),
    Row("libraryaddress not an address", "libraryaddress1", {"libraryname1": "MathLib", "libraryaddress1": "0x12"}),
    Row("11 libraries", "libraryname11", libraries(11)),
    Row("JSON sourceCode not JSON", "sourceCode", {**standard(), "sourceCode": '{"sources": {'}),
    Row("JSON sourceCode a list", "sourceCode", {**standard(), "sourceCode": "[]"}),
    Row("sources empty", "sourceCode", standard(sources={})),
    Row("sources with only urls", "sourceCode", standard(sources={"src/Box.sol": {"urls": ["ipfs://Qm"]}})),
    Row("settings not an object", "sourceCode", standard(settings=[1, 2])),
    Row("language mismatch", "sourceCode", standard(language="Vyper")),
    Row("bad guid", "guid", {"guid": "abc"}, action="checkverifystatus"),
    Row("guid not ASCII alphanumeric", "guid", {"guid": GUID[:49] + "²"}, action="checkverifystatus"),
    Row("proxy guid with a space", "guid", {"guid": GUID[:49] + " "}, action="checkproxyverification"),
    Row("getabi bad address", "address", {"address": "0x" + "zz" * 20}, action="getabi"),
    Row("getsourcecode no address", "address", {"address": ""}, action="getsourcecode"),
    Row("proxy bad address", "address", {"address": "0x12"}, action="verifyproxycontract"),
    Row(
        "proxy bad expectedimplementation",
        "expectedimplementation",
        {"address": PLAIN_ADDR, "expectedimplementation": "0x12"},
        action="verifyproxycontract",
    ),
]


def _flag(value: str | None):
    return {"1": True, "0": False, None: None}.get(value, value)  # anything else raw: the client must refuse it


def request_from_form(fields: dict) -> VerificationRequest:
    """The VerificationRequest a user could build with these values, unchecked (raw where invalid)."""
    numbers = sorted(
        {int(k[len("libraryname") :]) for k in fields if k.startswith("libraryname")}
        | {int(k[len("libraryaddress") :]) for k in fields if k.startswith("libraryaddress")}
    )
    try:
        code_format = CodeFormat(fields["codeformat"])
    except ValueError:
        code_format = fields["codeformat"]
    return VerificationRequest(
        address=fields["contractaddress"],
        contract_name=fields["contractname"],
        source_code=fields["sourceCode"],
        code_format=code_format,
        compiler_version=fields["compilerversion"],
        optimization_used=_flag(fields.get("optimizationUsed")),
        runs=fields.get("runs"),
        evm_version=fields.get("evmversion"),
        via_ir=_flag(fields.get("viaIR")),
        constructor_arguments=fields.get("constructorArguements") or fields.get("constructorArguments") or "",
        license_type=fields.get("licenseType"),
        libraries={fields.get(f"libraryname{n}", ""): fields.get(f"libraryaddress{n}", "") for n in numbers},
    )


def client_call(client, row: Row):
    fields = row.changes
    if row.action == "verifysourcecode":
        return lambda: client.verify_source_code(request_from_form({**BASE, **fields}))
    if row.action == "checkverifystatus":
        return lambda: client.job_status(fields["guid"])
    if row.action == "checkproxyverification":
        return lambda: client.job_status(fields["guid"], proxy=True)
    if row.action == "getabi":
        return lambda: client.get_abi(fields["address"])
    if row.action == "getsourcecode":
        return lambda: client.contract_record(fields["address"])
    if row.action == "verifyproxycontract":
        return lambda: client.verify_proxy(fields["address"], fields.get("expectedimplementation"))
    raise AssertionError(row.action)


def server_form(row: Row) -> dict:
    base = BASE if row.action == "verifysourcecode" else {}
    return {"module": "contract", "action": row.action, **base, **row.changes}


@pytest.fixture(scope="module")
def explorer():
    extra = {"0x" + f"{n:040x}": bytes.fromhex("6080604052") for n in range(0x100, 0x110)}
    chain = FakeChain({**default_codes(), **extra})
    with start_embedded(chain, engine=FakeEngine(chain)) as running:
        yield running


# -- bad requests -------------------------------------------------------------------------------


@pytest.mark.parametrize("row", ROWS, ids=[r.id for r in ROWS])
def test_bad_request_is_refused_by_both_ends_naming_the_same_parameter(stub, explorer, row):
    # The client: refused before anything is sent.
    if row.client:
        with pytest.raises(InvalidRequest) as info:
            client_call(make_client(stub), row)()
        assert stub.seen == [], "the client sent a request it should have refused"
    else:
        with pytest.raises(InvalidRequest) as info:
            validate_verify_form({**BASE, **row.changes})
    err = info.value
    assert err.param == row.param, str(err)
    assert str(err).startswith(f"{row.param}: ") and ". Fix: " in str(err)

    # The server: HTTP 200, status "0", the same words, nothing queued.
    before = explorer.store.count()
    response = requests.post(explorer.base_url, data=server_form(row), timeout=10)
    assert response.status_code == 200
    answer = response.json()
    assert answer["status"] == "0" and answer["message"] == "NOTOK", answer
    assert f"{row.param}: " in answer["result"] and ". Fix: " in answer["result"], answer["result"]
    assert answer["result"] == refusal_text(err), "server and client word the refusal differently"
    assert "Internal error" not in answer["result"]
    assert explorer.store.count() == before


def test_explorer_texts_come_first_for_the_refusals_real_explorers_word(explorer):
    """Third-party clients (forge, hardhat-verify) match on these words."""
    cases = [
        ({"action": "verifysourcecode", **BASE, "constructorArguements": "0xabc"}, Texts.INVALID_CONSTRUCTOR_ARGUMENTS),
        ({"action": "checkverifystatus", "guid": "abc"}, Texts.UNKNOWN_UID),
        ({"action": "frobnicate"}, Texts.INVALID_ACTION),
        ({"action": "getabi", "module": "account", "address": PLAIN_ADDR}, Texts.INVALID_MODULE),
        ({"action": "verifysourcecode", **BASE, "compilerversion": "latest"}, Texts.INVALID_COMPILER_VERSION),
    ]
    for fields, words in cases:
        answer = requests.post(explorer.base_url, data={"module": "contract", **fields}, timeout=10).json()
        assert answer["status"] == "0" and answer["result"].startswith(words + ". "), answer


# -- good requests ------------------------------------------------------------------------------

GOOD = [
    ("single file", {}),
    ("standard json", standard()),
    ("standard json in Etherscan's {{…}}", {**standard(), "sourceCode": "{" + json.dumps(STANDARD) + "}"}),
    ("standard json without language", standard(language=None)),
    ("evmversion=osaka", {"evmversion": "osaka"}),
    ("runs=2^32-1, viaIR", {"runs": str(2**32 - 1), "viaIR": "1"}),
    ("licence as SPDX id", {"licenseType": "MIT"}),
    ("ten libraries", libraries(10)),
    (
        "vyper json",
        {
            "codeformat": "vyper-json",
            "contractname": "a.vy:A",
            "compilerversion": "vyper:0.4.3",
            "sourceCode": json.dumps({"language": "Vyper", "sources": {"a.vy": {"content": "# a"}}}),
        },
    ),
]


@pytest.mark.parametrize("number, changes", list(enumerate(c for _, c in GOOD)), ids=[i for i, _ in GOOD])
def test_good_form_is_accepted_by_both_ends(stub, explorer, number, changes):
    address = "0x" + f"{0x100 + number:040x}"
    fields = {**BASE, **changes, "contractaddress": address}
    stub.default = lambda seen: ok(GUID)
    receipt = make_client(stub).verify_source_code(request_from_form(fields))
    assert receipt.guid == GUID and len(stub.seen) == 1
    sent = stub.seen[0].form
    if fields["codeformat"] != "solidity-single-file":
        json.loads(sent["sourceCode"])  # plain JSON on the wire, even when given as {{…}}
    answer = requests.post(
        explorer.base_url, data={"module": "contract", "action": "verifysourcecode", **fields}, timeout=10
    ).json()
    assert answer["status"] == "1", answer
    assert len(answer["result"]) == 50


def test_double_braced_input_round_trips_through_the_local_explorer(explorer):
    """`{{…}}` in, stored once unwrapped, and getsourcecode wraps it exactly once again."""
    address = "0x" + f"{0x10F:040x}"
    wrapped = "{" + json.dumps(STANDARD) + "}"
    data = {
        "module": "contract",
        "action": "verifysourcecode",
        **BASE,
        **standard(),
        "sourceCode": wrapped,
        "contractaddress": address,
    }
    guid = requests.post(explorer.base_url, data=data, timeout=10).json()["result"]
    assert poll(explorer.base_url, guid)["result"] == Texts.PASS
    entry = requests.get(
        explorer.base_url, params={"module": "contract", "action": "getsourcecode", "address": address}, timeout=10
    ).json()["result"][0]
    assert entry["SourceCode"] == wrapped
    assert json.loads(entry["SourceCode"][1:-1]) == STANDARD
