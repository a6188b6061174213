"""The local explorer's HTTP protocol and its answers to bad input, on a real uvicorn on 127.0.0.1.

The engine and chain are fakes here (tests/support/service.py): these tests are about the service
(envelope, texts, queue, keys, storage, input checks). The real engine is exercised in test_service_e2e.py.
"""

import json
import re
import socket
import time

import pytest
import requests

from ape_contract_verify.protocol.answers import Texts
from ape_contract_verify.server.runner import start_embedded
from support.service import (
    ADDRESS_A,
    ADDRESS_B,
    DELEGATING_ADDR,
    EMPTY_ADDR,
    IMPL_ADDR,
    PLAIN_ADDR,
    PROXY_ADDR,
    SOURCE,
    FakeChain,
    FakeEngine,
    form,
    get,
    poll,
    post,
)

KEY = "test-key-Zq81"


@pytest.fixture(scope="module")
def keyless():
    chain = FakeChain()
    engine = FakeEngine(chain)
    explorer = start_embedded(chain, engine=engine)
    explorer.engine = engine
    yield explorer
    explorer.stop()


@pytest.fixture(scope="module")
def keyed(tmp_path_factory):
    chain = FakeChain()
    explorer = start_embedded(
        chain, db_path=tmp_path_factory.mktemp("keyed") / "db.sqlite", api_keys=[KEY], engine=FakeEngine(chain)
    )
    yield explorer
    explorer.stop()


def _checksum(address):
    from eth_utils import to_checksum_address

    return to_checksum_address(address)


# -- reads of unverified addresses -----------------------------------------------------------


def test_getabi_of_unverified_address_is_status_0(keyless):
    answer = get(keyless.base_url, action="getabi", address=PLAIN_ADDR)
    assert answer == {"status": "0", "message": "NOTOK", "result": Texts.NOT_VERIFIED}


def test_getsourcecode_of_unverified_address_has_etherscan_layout(keyless):
    answer = get(keyless.base_url, action="getsourcecode", address=PLAIN_ADDR)
    assert answer["status"] == "1" and answer["message"] == "OK"
    (entry,) = answer["result"]
    assert entry["ABI"] == Texts.NOT_VERIFIED
    assert entry["SourceCode"] == "" and entry["LicenseType"] == "Unknown" and entry["Proxy"] == "0"
    assert all(isinstance(v, str) for v in entry.values())
    for field in (
        "ContractName",
        "CompilerVersion",
        "OptimizationUsed",
        "Runs",
        "ConstructorArguments",
        "EVMVersion",
        "Library",
        "Implementation",
        "SwarmSource",
    ):
        assert field in entry


# -- a submission's life -----------------------------------------------------------------------


def test_submission_is_pending_then_passes_then_reads_round_trip(keyless):
    keyless.engine.gate.clear()
    try:
        answer = post(keyless.base_url, form(ADDRESS_A, constructorArguements="0x" + "00" * 31 + "2a"))
        assert answer["status"] == "1", answer
        guid = answer["result"]
        assert len(guid) == 50 and guid.isalnum()
        pending = get(keyless.base_url, action="checkverifystatus", guid=guid)
        assert pending == {"status": "0", "message": "NOTOK", "result": Texts.PENDING}
    finally:
        keyless.engine.gate.set()
    assert poll(keyless.base_url, guid) == {"status": "1", "message": "OK", "result": Texts.PASS}

    abi = get(keyless.base_url, action="getabi", address=ADDRESS_A)
    assert abi["status"] == "1"
    assert json.loads(abi["result"])[0]["name"] == "value"

    (entry,) = get(keyless.base_url, action="getsourcecode", address=ADDRESS_A)["result"]
    assert all(isinstance(v, str) for v in entry.values())
    assert entry["SourceCode"] == SOURCE
    assert entry["ContractName"] == "Box"
    assert entry["CompilerVersion"] == "v0.8.26+commit.8a97fa7a"
    assert entry["OptimizationUsed"] == "1" and entry["Runs"] == "200" and entry["EVMVersion"] == "Default"
    assert entry["ConstructorArguments"] == "00" * 31 + "2a"
    assert entry["LicenseType"] == "MIT"  # from the SPDX line, as none was submitted
    assert entry["MatchType"] == "full" and entry["Proxy"] == "0"

    again = post(keyless.base_url, form(ADDRESS_A))
    assert again == {"status": "0", "message": "NOTOK", "result": Texts.SOURCE_ALREADY_VERIFIED}


def test_checkverifystatus_accepts_post_as_forge_sends_it(keyless):
    guid = post(keyless.base_url, form(ADDRESS_B, source=SOURCE + "// FAIL: runtime code differs at byte 12\n"))[
        "result"
    ]
    answer = poll(keyless.base_url, guid, method="POST")
    assert answer == {
        "status": "0",
        "message": "NOTOK",
        "result": "Fail - Unable to verify. runtime code differs at byte 12",
    }
    # A failure verifies nothing.
    assert get(keyless.base_url, action="getabi", address=ADDRESS_B)["result"] == Texts.NOT_VERIFIED


def test_engine_crash_is_a_fail_with_the_reason_and_the_worker_goes_on(keyless):
    guid = post(keyless.base_url, form(ADDRESS_B, source=SOURCE + "// CRASH\n"))["result"]
    answer = poll(keyless.base_url, guid)
    assert answer["status"] == "0"
    assert answer["result"].startswith("Fail - Unable to verify. ")
    assert "RuntimeError: solc died with signal 11" in answer["result"]
    assert "Traceback" not in answer["result"]
    wrong_name = post(keyless.base_url, form(ADDRESS_B, contractname="Crate"))["result"]
    assert "Unable to locate ContractName Crate" in poll(keyless.base_url, wrong_name)["result"]


def test_right_spelling_of_constructor_arguments_is_accepted(keyless):
    data = form(ADDRESS_B, source=SOURCE + "// v2\n")
    del data["constructorArguements"]
    data["constructorArguments"] = "0x" + "00" * 31 + "07"
    guid = post(keyless.base_url, data)["result"]
    assert poll(keyless.base_url, guid)["result"] == Texts.PASS
    (entry,) = get(keyless.base_url, action="getsourcecode", address=ADDRESS_B)["result"]
    assert entry["ConstructorArguments"] == "00" * 31 + "07"


def test_no_code_at_address_is_unable_to_locate(keyless):
    answer = post(keyless.base_url, form(EMPTY_ADDR))
    assert answer["status"] == "0"
    assert answer["result"] == Texts.UNABLE_TO_LOCATE.format(address=EMPTY_ADDR)


def test_standard_json_is_returned_wrapped_in_double_braces():
    chain = FakeChain()
    with start_embedded(chain, engine=FakeEngine(chain)) as explorer:
        standard = {
            "language": "Solidity",
            "sources": {"src/Box.sol": {"content": SOURCE}},
            "settings": {"optimizer": {"enabled": False, "runs": 200}, "evmVersion": "paris"},
        }
        data = form(
            ADDRESS_A,
            source=json.dumps(standard),
            codeformat="solidity-standard-json-input",
            contractname="src/Box.sol:Box",
            licenseType="12",
        )
        guid = post(explorer.base_url, data)["result"]
        assert poll(explorer.base_url, guid)["result"] == Texts.PASS
        (entry,) = get(explorer.base_url, action="getsourcecode", address=ADDRESS_A)["result"]
        assert entry["SourceCode"].startswith("{{") and entry["SourceCode"].endswith("}}")
        assert json.loads(entry["SourceCode"][1:-1]) == standard
        assert entry["ContractName"] == "Box"
        assert entry["EVMVersion"] == "paris" and entry["OptimizationUsed"] == "0"
        assert entry["LicenseType"] == "Apache-2.0"


def test_partial_match_is_recorded_and_a_full_match_upgrades_it():
    chain = FakeChain()
    with start_embedded(chain, engine=FakeEngine(chain)) as explorer:
        partial = post(explorer.base_url, form(ADDRESS_A, source=SOURCE + "// PARTIAL\n"))["result"]
        assert poll(explorer.base_url, partial)["result"] == Texts.PASS
        (entry,) = get(explorer.base_url, action="getsourcecode", address=ADDRESS_A)["result"]
        assert entry["MatchType"] == "partial"
        # A second partial match adds nothing: Etherscan's `Already Verified` (status "0").
        again = post(explorer.base_url, form(ADDRESS_A, source=SOURCE + "// PARTIAL again\n"))["result"]
        assert poll(explorer.base_url, again) == {"status": "0", "message": "NOTOK", "result": Texts.ALREADY_VERIFIED}
        # A full match replaces it, as Blockscout re-verifies partial matches.
        full = post(explorer.base_url, form(ADDRESS_A))["result"]
        assert poll(explorer.base_url, full)["result"] == Texts.PASS
        (entry,) = get(explorer.base_url, action="getsourcecode", address=ADDRESS_A)["result"]
        assert entry["MatchType"] == "full" and entry["SourceCode"] == SOURCE


# -- proxies -----------------------------------------------------------------------------------


def _proxy(base_url, address, **extra):
    data = {"module": "contract", "action": "verifyproxycontract", "address": address, **extra}
    return post(base_url, data)


def test_proxy_found_links_the_implementation_in_getsourcecode(keyless):
    keyless.engine.gate.clear()
    try:
        guid = _proxy(keyless.base_url, PROXY_ADDR)["result"]
        assert len(guid) == 50
        running = get(keyless.base_url, action="checkproxyverification", guid=guid)
        assert running == {"status": "0", "message": "NOTOK", "result": Texts.PROXY_IN_PROGRESS}
    finally:
        keyless.engine.gate.set()
    answer = poll(keyless.base_url, guid, action="checkproxyverification")
    assert answer == {
        "status": "1",
        "message": "OK",
        "result": Texts.PROXY_FOUND.format(proxy=_checksum(PROXY_ADDR), implementation=_checksum(IMPL_ADDR)),
    }
    verified = post(keyless.base_url, form(PROXY_ADDR))["result"]
    assert poll(keyless.base_url, verified)["result"] == Texts.PASS
    (entry,) = get(keyless.base_url, action="getsourcecode", address=PROXY_ADDR)["result"]
    assert entry["Proxy"] == "1" and entry["Implementation"] == _checksum(IMPL_ADDR)


@pytest.mark.parametrize(
    "address, extra, text",
    [
        (PROXY_ADDR, {"expectedimplementation": ADDRESS_B}, Texts.PROXY_EXPECTED_MISMATCH),
        (PLAIN_ADDR, {}, Texts.PROXY_NO_DELEGATECALL),
        (DELEGATING_ADDR, {}, Texts.PROXY_NOT_DETECTED),
    ],
)
def test_proxy_failures(keyless, address, extra, text):
    guid = _proxy(keyless.base_url, address, **extra)["result"]
    assert poll(keyless.base_url, guid, action="checkproxyverification") == {
        "status": "0",
        "message": "NOTOK",
        "result": text,
    }


def test_proxy_expected_implementation_that_matches_passes(keyless):
    guid = _proxy(keyless.base_url, PROXY_ADDR, expectedimplementation=_checksum(IMPL_ADDR))["result"]
    assert poll(keyless.base_url, guid, action="checkproxyverification")["status"] == "1"


def test_proxy_without_code_and_guid_kinds_do_not_mix(keyless):
    assert _proxy(keyless.base_url, EMPTY_ADDR)["result"] == Texts.UNABLE_TO_LOCATE.format(address=EMPTY_ADDR)
    proxy_guid = _proxy(keyless.base_url, PROXY_ADDR)["result"]
    answer = get(keyless.base_url, action="checkverifystatus", guid=proxy_guid)
    assert answer["status"] == "0" and answer["result"].startswith(Texts.UNKNOWN_UID)
    assert "checkproxyverification" in answer["result"]


# -- keys ----------------------------------------------------------------------------------------


def test_keys_are_needed_for_submissions_only(keyed):
    for data in (form(ADDRESS_A), form(ADDRESS_A, apikey="wrong"), form(ADDRESS_A, apikey="")):
        assert post(keyed.base_url, data) == {"status": "0", "message": "NOTOK", "result": Texts.INVALID_API_KEY}
    proxy = _proxy(keyed.base_url, PROXY_ADDR, apikey=KEY + "x")
    assert proxy["result"] == Texts.INVALID_API_KEY
    guid = post(keyed.base_url, form(ADDRESS_A, apikey=KEY))["result"]
    assert len(guid) == 50
    # Reads and status checks need no key.
    assert poll(keyed.base_url, guid)["result"] == Texts.PASS
    assert get(keyed.base_url, action="getabi", address=ADDRESS_A)["status"] == "1"
    assert get(keyed.base_url, action="getsourcecode", address=ADDRESS_A)["status"] == "1"


def test_the_key_is_written_nowhere(keyed):
    post(keyed.base_url, form(ADDRESS_B, apikey=KEY))
    _proxy(keyed.base_url, PROXY_ADDR, apikey=KEY)
    db = keyed.db_path
    for path in (db, db.with_name(db.name + "-wal")):
        if path.exists():
            assert KEY.encode() not in path.read_bytes()
    assert KEY not in repr(keyed)


def test_proxy_submissions_are_capped_at_100_a_day_per_key(tmp_path):
    chain = FakeChain()
    with start_embedded(
        chain, db_path=tmp_path / "db.sqlite", api_keys=[KEY, "other-key"], engine=FakeEngine(chain)
    ) as explorer:
        session = requests.Session()
        for number in range(100):
            answer = session.post(
                explorer.base_url,
                data={"module": "contract", "action": "verifyproxycontract", "address": PROXY_ADDR, "apikey": KEY},
                timeout=10,
            ).json()
            assert answer["status"] == "1", (number, answer)
        refused = _proxy(explorer.base_url, PROXY_ADDR, apikey=KEY)
        assert refused["status"] == "0" and "100 a day per API key" in refused["result"]
        assert _proxy(explorer.base_url, PROXY_ADDR, apikey="other-key")["status"] == "1"


# -- bad input ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "params, expected",
    [
        ({"module": "account", "action": "getabi"}, "Error! Missing Or invalid Module name. module: 'account'"),
        ({"action": "getabi", "module": ""}, "Error! Missing Or invalid Module name. module: is missing"),
        ({"module": "contract", "action": "frobnicate"}, "Error! Missing Or invalid Action name. action: 'frobnicate'"),
        ({"module": "contract"}, "Error! Missing Or invalid Action name. action: is missing"),
        ({"module": "contract", "action": "getabi"}, "address: is missing"),
        ({"module": "contract", "action": "getabi", "address": "0x1234"}, "address: '0x1234' is not an address"),
        ({"module": "contract", "action": "getsourcecode", "address": "0x" + "zz" * 20}, "address: '0xzz"),
        ({"module": "contract", "action": "checkverifystatus"}, "Unknown UID. guid: '' is 0 characters long"),
        (
            {"module": "contract", "action": "checkverifystatus", "guid": "abc"},
            "Unknown UID. guid: 'abc' is 3 characters",
        ),
        ({"module": "contract", "action": "checkverifystatus", "guid": "a" * 50}, "Unknown UID"),
        ({"module": "contract", "action": "checkproxyverification", "guid": "!" * 50}, "Unknown UID. guid: '!!!"),
        ({"module": "contract", "action": "checkverifystatus", "guid": "²" * 50}, "Unknown UID. guid: '²²²"),
        ({"module": "contract", "action": "verifysourcecode"}, "verifysourcecode must be sent as a POST"),
        (
            {"module": "contract", "action": "verifyproxycontract", "address": PROXY_ADDR},
            "verifyproxycontract must be sent as a POST",
        ),
        (
            {"module": "contract", "action": "getabi", "address": ADDRESS_A, "chainid": "1"},
            "Missing or unsupported chainid parameter (required for v2 api). chainid: this explorer serves chainid 31337",
        ),
        (
            {"module": "contract", "action": "getcontractcreation", "contractaddresses": "0x12"},
            "contractaddresses: '0x12' is not an address",
        ),
        (
            {"module": "contract", "action": "getcontractcreation", "contractaddresses": ",".join([ADDRESS_A] * 6)},
            "contractaddresses: 6 given. Fix: send at most 5",
        ),
    ],
)
def test_bad_query_is_status_0_with_a_clear_text(keyless, params, expected):
    response = requests.get(keyless.base_url, params=params, timeout=10)
    assert response.status_code == 200
    answer = response.json()
    assert answer["status"] == "0" and answer["message"] == "NOTOK"
    assert answer["result"].startswith(expected), answer["result"]
    assert "Traceback" not in response.text


@pytest.mark.parametrize(
    "changes, expected",
    [
        ({"contractaddress": ""}, "contractaddress: is missing"),
        ({"contractaddress": "0xabc"}, "contractaddress: '0xabc' is not an address"),
        ({"sourceCode": ""}, "sourceCode: is empty"),
        ({"contractname": ""}, "contractname: is missing"),
        ({"compilerversion": ""}, f"{Texts.INVALID_COMPILER_VERSION}. compilerversion: '' is not a compiler version"),
        ({"compilerversion": "latest"}, f"{Texts.INVALID_COMPILER_VERSION}. compilerversion: 'latest'"),
        ({"compilerversion": "0.8.26"}, f"{Texts.INVALID_COMPILER_VERSION}. compilerversion: '0.8.26'"),
        (
            {"compilerversion": "v0.4.10+commit.9e8cc01b"},
            f"{Texts.INVALID_COMPILER_VERSION}. compilerversion: v0.4.10+commit.9e8cc01b is older than v0.4.11",
        ),
        ({"codeformat": "solidity-multi-file"}, "codeformat: 'solidity-multi-file' is not a known format"),
        (
            {
                "codeformat": "solidity-standard-json-input",
                "contractname": "src/Box.sol:Box",
                "sourceCode": '{"sources": {',
            },
            "sourceCode: is not valid JSON",
        ),
        (
            {"codeformat": "solidity-standard-json-input", "contractname": "src/Box.sol:Box", "sourceCode": "[]"},
            "sourceCode: is JSON list, not an object",
        ),
        (
            {
                "codeformat": "solidity-standard-json-input",
                "sourceCode": json.dumps({"sources": {"a.sol": {"content": SOURCE}}}),
            },
            "contractname: 'Box' has no source unit",
        ),
        ({"optimizationUsed": "yes"}, "optimizationUsed: 'yes' is not 0 or 1"),
        ({"runs": "-5"}, "runs: '-5' is not a whole number from 0 to 4294967295"),
        ({"runs": "1e3"}, "runs: '1e3'"),
        ({"runs": "4294967296"}, "runs: '4294967296'"),
        ({"evmversion": "frontier2"}, "evmversion: 'frontier2' is not a known EVM version"),
        ({"licenseType": "99"}, "licenseType: '99' is not a licence code"),
        ({"licenseType": "WTFPL"}, "licenseType: 'WTFPL' is not a licence code"),
        ({"constructorArguements": "0xzz"}, f"{Texts.INVALID_CONSTRUCTOR_ARGUMENTS}. constructorArguements: '0xzz'"),
        ({"constructorArguements": "abc"}, f"{Texts.INVALID_CONSTRUCTOR_ARGUMENTS}. constructorArguements: 'abc'"),
        (
            {"constructorArguements": "00", "constructorArguments": "01"},
            f"{Texts.INVALID_CONSTRUCTOR_ARGUMENTS}. constructorArguments: differs from constructorArguements",
        ),
        ({"libraryname1": "MathLib"}, "libraryaddress1: is missing for libraryname1"),
        ({"libraryaddress2": ADDRESS_B}, "libraryname2: is missing for libraryaddress2"),
        ({"libraryname1": "MathLib", "libraryaddress1": "0x12"}, "libraryaddress1: '0x12' is not an address"),
        (
            {"libraryname11": "X", "libraryaddress11": ADDRESS_B},
            "libraryname11: is pair number 11. Fix: send at most 10",
        ),
    ],
)
def test_bad_submission_is_refused_with_the_parameter_named(keyless, changes, expected):
    data = form(PLAIN_ADDR)
    data.update(changes)
    before = keyless.store.count()
    response = requests.post(keyless.base_url, data=data, timeout=10)
    assert response.status_code == 200
    answer = response.json()
    assert answer["status"] == "0", answer
    assert answer["result"].startswith(expected), answer["result"]
    assert ". Fix: " in answer["result"]  # every refused field says how to fix it
    assert keyless.store.count() == before  # nothing queued


def test_oversized_body_declared_in_content_length(keyless):
    host, port = "127.0.0.1", keyless.port
    with socket.create_connection((host, port), timeout=10) as sock:
        sock.sendall(
            b"POST /api HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n"
            b"Content-Length: 30000000\r\n\r\nmodule=contract&action=verifysourcecode&sourceCode="
        )
        data = b""
        deadline = time.monotonic() + 10
        while b"}" not in data and time.monotonic() < deadline:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200")
    answer = json.loads(body[body.index(b"{") :])
    assert answer["status"] == "0"
    assert answer["result"].startswith("Request body too large: 30000000 bytes or more, the limit is 20971520 bytes")


def test_oversized_chunked_body(keyless):
    keyless.max_body = 4096
    try:

        def chunks():
            for _ in range(20):
                yield b"sourceCode=" + b"a" * 1000 + b"&"

        response = requests.post(
            keyless.base_url,
            params={"module": "contract", "action": "verifysourcecode"},
            data=chunks(),
            headers={"Content-Type": "application/x-www-form-urlencoded"},
            timeout=10,
        )
    finally:
        keyless.max_body = 20 * 1024 * 1024
    assert response.status_code == 200
    assert response.json()["result"].startswith("Request body too large")


def test_multipart_and_json_bodies_are_accepted(keyless):
    data = form(DELEGATING_ADDR, source=SOURCE + "// multipart\n")
    files = {k: (None, v) for k, v in data.items()}
    guid = post(keyless.base_url, {}, files=files)["result"]
    assert len(guid) == 50, guid
    assert poll(keyless.base_url, guid)["result"] == Texts.PASS
    (entry,) = get(keyless.base_url, action="getsourcecode", address=DELEGATING_ADDR)["result"]
    assert entry["SourceCode"] == SOURCE + "// multipart\n"
    answer = requests.post(
        keyless.base_url, json={"module": "contract", "action": "getabi", "address": ADDRESS_A}, timeout=10
    ).json()
    assert answer["status"] == "1"
    bad = requests.post(keyless.base_url, data=b"{not json", headers={"Content-Type": "application/json"}, timeout=10)
    assert bad.status_code == 200 and bad.json()["result"].startswith("The JSON request body is not valid JSON")
    latin = requests.post(
        keyless.base_url,
        data=b"module=contract&action=getabi&x=\xff\xfe",
        timeout=10,
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert latin.json()["result"].startswith("The request body is not valid UTF-8")


def test_unexpected_exception_is_an_envelope_not_a_500(keyless, monkeypatch):
    def boom(address):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(keyless.store, "get_abi", boom)
    response = requests.get(
        keyless.base_url, params={"module": "contract", "action": "getabi", "address": ADDRESS_A}, timeout=10
    )
    assert response.status_code == 200
    answer = response.json()
    assert answer["status"] == "0" and "RuntimeError: disk on fire" in answer["result"]
    assert "Traceback" not in response.text


def test_wrong_path_and_method_get_envelopes(keyless):
    missing = requests.get(keyless.url + "/nothing", timeout=10)
    assert missing.status_code == 404 and missing.json()["status"] == "0"
    put = requests.put(keyless.base_url, timeout=10)
    assert put.status_code == 405 and "use GET or POST" in put.json()["result"]


def test_getcontractcreation_and_v2_path(keyless):
    answer = get(
        keyless.url + "/v2/api",
        action="getcontractcreation",
        chainid="31337",
        contractaddresses=f"{ADDRESS_A},{EMPTY_ADDR}",
    )
    assert answer["status"] == "1"
    (entry,) = answer["result"]
    assert entry["contractAddress"] == _checksum(ADDRESS_A)
    assert entry["txHash"] == "0x" + "ab" * 32 and entry["contractCreator"] == "0x" + "99" * 20
    assert entry["creationBytecode"] == "0x6080" + "6080604052"
    none = get(keyless.base_url, action="getcontractcreation", contractaddresses=EMPTY_ADDR)
    assert none == {"status": "0", "message": "NOTOK", "result": "No data found"}


def test_binds_loopback_by_default(keyless):
    assert keyless.host == "127.0.0.1"
    assert keyless.base_url.startswith("http://127.0.0.1:")


def test_pages_for_people(keyless):
    verified = requests.get(f"{keyless.url}/address/{ADDRESS_A}", timeout=10)
    assert verified.status_code == 200 and verified.headers["content-type"].startswith("text/html")
    assert "Verified" in verified.text and "contract Box" in re.sub(r"<[^>]+>", "", verified.text)  # highlighted
    unverified = requests.get(f"{keyless.url}/address/{EMPTY_ADDR}", timeout=10)
    assert "Contract source code not verified" in unverified.text
    assert requests.get(f"{keyless.url}/address/nope", timeout=10).status_code == 404
    listing = requests.get(keyless.url + "/", timeout=10)
    assert listing.status_code == 200 and ADDRESS_A in listing.text
    # Submitted text is escaped, never rendered as markup.
    assert "<script>" not in requests.get(f"{keyless.url}/address/{ADDRESS_A}<script>", timeout=10).text


def test_concurrent_submissions_and_reads_lose_nothing():
    from concurrent.futures import ThreadPoolExecutor

    chain = FakeChain({f"0x{n:040x}": bytes.fromhex("6080604052") for n in range(1, 41)})
    with start_embedded(chain, engine=FakeEngine(chain), workers=2) as explorer:
        addresses = [f"0x{n:040x}" for n in range(1, 41)]

        def submit(address):
            with requests.Session() as session:
                answer = session.post(explorer.base_url, data=form(address), timeout=30).json()
                session.get(
                    explorer.base_url, params={"module": "contract", "action": "getabi", "address": address}, timeout=30
                )
                return answer["result"]

        with ThreadPoolExecutor(16) as pool:
            guids = list(pool.map(submit, addresses))
        assert len(set(guids)) == 40 and all(len(g) == 50 for g in guids)
        for guid in guids:
            assert poll(explorer.base_url, guid, timeout=60)["result"] == Texts.PASS
        for address in addresses:
            assert get(explorer.base_url, action="getabi", address=address)["status"] == "1"
        assert explorer.store.count("done") == 40
