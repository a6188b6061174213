"""The local explorer against hostile and broken input (issue 14: availability, bad input).

Each item asserts the exact refusal, that nothing was stored, and that another client's getabi
answers within 2 s while the bad request is in flight. Real uvicorn on 127.0.0.1, real sockets;
the engine and chain are fakes (nothing here should ever reach them). `ape verify serve --db`
runs as a real subprocess against a tiny JSON-RPC stub.
"""

import json
import os
import select
import shutil
import socket
import sqlite3
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import SimpleNamespace

import pytest
import requests

from ape_contract_verify.explorer.store import VerifiedContract
from ape_contract_verify.protocol.answers import Texts
from ape_contract_verify.server import params
from ape_contract_verify.server.runner import LocalExplorer
from support.service import ADDRESS_A, ADDRESS_B, REPO, SOURCE, VENV_BIN, FakeChain, FakeEngine, form

KEY = "hostile-key-Rt42"
VERIFIED = ADDRESS_B  # getabi answers status "1" for it: the other client's request
ABI = [
    {
        "type": "function",
        "name": "value",
        "inputs": [],
        "outputs": [{"type": "uint256", "name": ""}],
        "stateMutability": "view",
    }
]
MIB = 1024 * 1024
TOO_MANY_PARTS = (
    "The request's multipart/form-data body has more than 200 parts, the limit. "
    "Send only the contract API's parameters (module, action, sourceCode, …), once each."
)
TOO_MANY_FIELDS = (
    "The request's urlencoded body has more than 200 fields, the limit. "
    "Send only the contract API's parameters (module, action, sourceCode, …), once each."
)
TOO_MANY_KEYS = (
    "The request's JSON body has more than 200 keys, the limit. "
    "Send only the contract API's parameters (module, action, sourceCode, …), once each."
)
BODY_TOO_DEEP = "The JSON request body is nested too deeply (over 256 levels of arrays or objects); send a flat object."
SOURCE_TOO_DEEP = "sourceCode: is JSON nested too deeply (over 256 levels). Fix: send the compiler's JSON input as is"


def _start(tmp_path_factory, name, **options):
    chain = FakeChain()
    explorer = LocalExplorer(
        chain, db_path=tmp_path_factory.mktemp(name) / "db.sqlite", engine=FakeEngine(chain), **options
    ).start()
    explorer.store.save_contract(
        VerifiedContract(
            address=VERIFIED,
            contract_name="Box",
            compiler_version="v0.8.26+commit.8a97fa7a",
            code_format="solidity-single-file",
            source_code=SOURCE,
            abi=json.dumps(ABI),
        )
    )
    return explorer


@pytest.fixture(scope="module")
def explorer(tmp_path_factory):
    explorer = _start(tmp_path_factory, "hostile")
    yield explorer
    explorer.stop()


@pytest.fixture(scope="module")
def keyed(tmp_path_factory):
    explorer = _start(tmp_path_factory, "keyed", api_keys=[KEY])
    yield explorer
    explorer.stop()


@pytest.fixture(scope="module")
def impatient(tmp_path_factory):
    """Short read deadlines, so slow clients are cut off within the test's time."""
    explorer = _start(tmp_path_factory, "impatient", header_timeout=1.0, body_timeout=1.5)
    yield explorer
    explorer.stop()


# -- helpers -----------------------------------------------------------------------------------


def stored(explorer):
    return explorer.store.count(), explorer.store.search_contracts("")[0]


def probe(explorer) -> float:
    """Another client's getabi; its answer time."""
    start = time.monotonic()
    answer = requests.get(
        explorer.base_url, params={"module": "contract", "action": "getabi", "address": VERIFIED}, timeout=10
    ).json()
    assert answer["status"] == "1" and json.loads(answer["result"]) == ABI, answer
    return time.monotonic() - start


def while_in_flight(explorer, send, bound: float = 90.0, answer_within: float | None = 2.0):
    """`send()` on a thread; meanwhile (at least once) another client's getabi must answer, within
    `answer_within` s unless None (then within its request's 10 s timeout)."""
    box = {}

    def run():
        try:
            box["result"] = send()
        except BaseException as err:  # handed to the test's thread
            box["error"] = err

    before = stored(explorer)
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    worst, probes, deadline = 0.0, 0, time.monotonic() + bound
    while (thread.is_alive() or probes == 0) and time.monotonic() < deadline:
        worst = max(worst, probe(explorer))
        probes += 1
    thread.join(max(0.0, deadline - time.monotonic()))
    assert not thread.is_alive(), f"the bad request was still in flight after {bound} s"
    if "error" in box:
        raise box["error"]
    if answer_within is not None:
        assert worst < answer_within, f"another client's getabi took {worst:.2f} s while the bad request was in flight"
    assert stored(explorer) == before, "the bad request stored something"
    return box["result"]


def refusal(response) -> str:
    assert response.status_code == 200, response.text[:300]
    assert response.headers["x-content-type-options"] == "nosniff"
    answer = response.json()
    assert answer["status"] == "0" and answer["message"] == "NOTOK", answer
    assert "Internal error" not in answer["result"]
    return answer["result"]


def many_parts(count: int, boundary: bytes = b"HostileBoundary") -> bytes:
    part = b"--" + boundary + b'\r\nContent-Disposition: form-data; name="f%d"\r\n\r\nv\r\n'
    return b"".join(part % i for i in range(count)) + b"--" + boundary + b"--\r\n"


def multipart(fields: dict, boundary: bytes = b"HostileBoundary", charset: str = "") -> bytes:
    kind = f"Content-Type: text/plain; charset={charset}\r\n".encode() if charset else b""
    parts = [
        b"--"
        + boundary
        + b'\r\nContent-Disposition: form-data; name="'
        + k.encode()
        + b'"\r\n'
        + kind
        + b"\r\n"
        + v.encode()
        + b"\r\n"
        for k, v in fields.items()
    ]
    return b"".join(parts) + b"--" + boundary + b"--\r\n"


def post_raw(explorer, body: bytes, content_type: str, url: str = ""):
    return requests.post(url or explorer.base_url, data=body, headers={"Content-Type": content_type}, timeout=60)


def read_response(sock: socket.socket) -> tuple[bytes, bytes]:
    """One answer's head and body (by its Content-Length), bounded by the socket's timeout and 50 reads."""
    data = b""
    for _ in range(50):
        data += sock.recv(65536)
        head, sep, body = data.partition(b"\r\n\r\n")
        length = [
            int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")
        ]
        if sep and length and len(body) >= length[0]:
            return head, body
    raise AssertionError(f"no whole answer: {data[:300]!r}")


def read_until_closed(sock: socket.socket, bound: float) -> tuple[bytes, float]:
    """Everything the server sends until it closes the connection; and when it closed (bounded)."""
    start, data = time.monotonic(), b""
    while time.monotonic() - start < bound:
        ready, _, _ = select.select([sock], [], [], 0.1)
        if ready:
            try:
                chunk = sock.recv(65536)
            except ConnectionResetError:
                chunk = b""
            if not chunk:
                return data, time.monotonic() - start
            data += chunk
    raise AssertionError(f"the server held the connection for over {bound} s; got {data[:200]!r}")


def drip(sock: socket.socket, data: bytes, interval: float, bound: float) -> tuple[bytes, float]:
    """Send `data` one byte every `interval` s (cycling) until the server closes the connection."""
    start, received, i = time.monotonic(), b"", 0
    while time.monotonic() - start < bound:
        try:
            sock.sendall(data[i % len(data) : i % len(data) + 1])
        except (BrokenPipeError, ConnectionResetError):
            pass  # closed: what it sent before closing is still to be read
        i += 1
        ready, _, _ = select.select([sock], [], [], interval)
        if ready:
            rest, _ = read_until_closed(sock, bound)
            return received + rest, time.monotonic() - start
    raise AssertionError(f"a client sending one byte every {interval} s was held for over {bound} s")


# -- bodies that used to freeze the server -----------------------------------------------------


@pytest.mark.parametrize("parts, size", [(40_000, 2 * MIB), (270_000, 18 * MIB)], ids=["2MiB", "19MiB"])
def test_a_multipart_body_of_tens_of_thousands_of_parts_is_refused_without_a_stall(explorer, parts, size):
    body = many_parts(parts)
    assert size <= len(body) <= 20 * MIB and body.count(b"Content-Disposition") == parts
    send = lambda: post_raw(explorer, body, "multipart/form-data; boundary=HostileBoundary")  # noqa: E731
    assert refusal(while_in_flight(explorer, send)) == TOO_MANY_PARTS


def test_a_19_mib_urlencoded_body_of_many_fields_is_refused_without_a_stall(explorer):
    body = (b"module=contract&action=verifysourcecode&" + b"&".join(b"f%d=v" % i for i in range(3 * MIB)))[: 19 * MIB]
    send = lambda: post_raw(explorer, body, "application/x-www-form-urlencoded")  # noqa: E731
    assert refusal(while_in_flight(explorer, send)) == TOO_MANY_FIELDS


def test_a_19_mib_urlencoded_field_is_read_off_the_event_loop(explorer):
    # A legal body (one big field) still takes a while to decode: other clients must not wait for it.
    body = b"module=contract&action=getabi&address=" + VERIFIED.encode() + b"&x=" + b"%41" * (19 * MIB // 3)
    send = lambda: post_raw(explorer, body, "application/x-www-form-urlencoded")  # noqa: E731
    response = while_in_flight(explorer, send)
    assert response.json()["status"] == "1" and json.loads(response.json()["result"]) == ABI


@pytest.mark.parametrize(
    "text",
    [
        "a=1&b=2",
        "a=1&a=2",
        "x",
        "x=&y",
        "a+b=c+d",
        "%zz=%4",
        "%E2%82%AC=%ff%fe",
        "=v",
        "a=1;b=2",
        "&&a=1&&",
        "a=b=c",
        "k=%2B%2b+",
        "%=%%",
        "a=%C3",
        "a=#b&c=d",
        "a=\nb",
        "a=\x00b&c=%00",
        "a=%%41",
        "é=ü",
        "",
    ],
)
def test_urlencoded_bodies_read_as_parse_qsl_reads_them(text):
    from urllib.parse import parse_qsl

    from ape_contract_verify.server.params import parse_body

    assert parse_body(text.encode(), "application/x-www-form-urlencoded") == dict(
        parse_qsl(text, keep_blank_values=True)
    )


def test_a_json_body_of_many_keys_is_refused_before_json_loads_builds_them(explorer, monkeypatch):
    """json.loads of a million keys holds the GIL for seconds, every other client waiting: the keys
    are counted first. Seen by what json.loads is given, not by the clock (speed is benchmarks')."""
    parsed: list[int] = []

    def loads(text, **kwargs):
        parsed.append(len(text))
        return json.loads(text, **kwargs)

    monkeypatch.setattr(params, "json", SimpleNamespace(loads=loads, dumps=json.dumps))
    body = json.dumps({"module": "contract", "action": "getabi", **{f"k{i}": i for i in range(1_000_000)}}).encode()
    assert len(body) > 10 * MIB
    send = lambda: post_raw(explorer, body, "application/json")  # noqa: E731
    assert refusal(while_in_flight(explorer, send, answer_within=None)) == TOO_MANY_KEYS
    assert len(body) not in parsed  # never handed to json.loads
    small = json.dumps({"module": "contract", "action": "getabi", "address": VERIFIED}).encode()
    assert json.loads(post_raw(explorer, small, "application/json").json()["result"]) == ABI
    assert len(small) in parsed  # the counting is json.loads' and sees a body it parses


@pytest.mark.parametrize(
    "keys, nested, over",
    [
        (200, 0, False),
        (201, 0, True),
        (3, 1_000, False),  # members of a value inside it are no parameters
    ],
)
def test_a_json_body_s_top_level_keys_are_counted_outside_strings(keys, nested, over):
    value = {f"n{i}": "a:b" for i in range(nested)}
    body = {f"k{i}": "x:{y}:[" for i in range(keys - 1)} | {"sourceCode": value}
    assert params.json_members_over(json.dumps(body).encode(), params.MAX_FIELDS) is over


def test_json_nested_100000_deep_in_the_body_is_refused(explorer):
    body = b'{"module":"contract","action":"getabi","address":"' + VERIFIED.encode() + b'","x":'
    body += b"[" * 100_000 + b"]" * 100_000 + b"}"
    send = lambda: post_raw(explorer, body, "application/json")  # noqa: E731
    assert refusal(while_in_flight(explorer, send)) == BODY_TOO_DEEP


@pytest.mark.parametrize("where", ["whole", "content"])
@pytest.mark.parametrize("encoding", ["urlencoded", "json", "multipart"])
def test_json_nested_100000_deep_in_source_code_is_refused(explorer, where, encoding):
    deep = "[" * 100_000 + "]" * 100_000
    source = deep if where == "whole" else '{"sources": {"a.sol": {"content": ' + deep + "}}}"
    fields = form(ADDRESS_A, source=source, codeformat="solidity-standard-json-input", contractname="a.sol:Box")
    if encoding == "urlencoded":
        send = lambda: requests.post(explorer.base_url, data=fields, timeout=60)  # noqa: E731
    elif encoding == "json":
        send = lambda: requests.post(explorer.base_url, json=fields, timeout=60)  # noqa: E731
    else:
        send = lambda: post_raw(explorer, multipart(fields), "multipart/form-data; boundary=HostileBoundary")  # noqa: E731
    assert refusal(while_in_flight(explorer, send)) == SOURCE_TOO_DEEP


@pytest.mark.parametrize(
    "field, value, expected",
    [
        ("runs", "²", "runs: '²' is not a whole number from 0 to 4294967295. Fix: give the optimizer runs, e.g. 200"),
        (
            "licenseType",
            "²",
            "licenseType: '²' is not a licence code. Fix: give a code 1 to 14 (3 is MIT) or an SPDX id",
        ),
    ],
)
def test_unicode_digits_are_refused_by_name(explorer, field, value, expected):
    send = lambda: requests.post(explorer.base_url, data=form(ADDRESS_A, **{field: value}), timeout=60)  # noqa: E731
    assert refusal(while_in_flight(explorer, send)).startswith(expected)


def test_broken_multipart_bodies_are_refused_by_what_is_wrong(explorer):
    fields = form(ADDRESS_A)
    cases = [
        (
            multipart(fields),
            "multipart/form-data",
            "The multipart/form-data body has no boundary in its Content-Type; send boundary=….",
        ),
        (
            multipart(fields)[:-20],
            "multipart/form-data; boundary=HostileBoundary",
            "The multipart/form-data body could not be parsed: no closing boundary; check its boundary.",
        ),
        (
            multipart(fields, charset="no-such-charset"),
            "multipart/form-data; boundary=HostileBoundary",
            "module: the part's charset 'no-such-charset' is unknown; send UTF-8.",
        ),
        (
            b'--HostileBoundary\r\nContent-Disposition: form-data; name="module"' + b"x" * 20_000 + b"\r\n",
            "multipart/form-data; boundary=HostileBoundary",
            "The multipart/form-data body could not be parsed: no closing boundary; check its boundary.",
        ),
        (
            b'--HostileBoundary\r\nContent-Disposition: form-data; name="module"\r\n--HostileBoundary--\r\n',
            "multipart/form-data; boundary=HostileBoundary",
            "Part 1 of the multipart/form-data body has no complete headers; check the body.",
        ),
    ]
    for body, content_type, expected in cases:
        send = lambda: post_raw(explorer, body, content_type)  # noqa: E731
        assert refusal(while_in_flight(explorer, send)) == expected


def test_a_quoted_boundary_and_a_latin_1_part_are_read(explorer):
    fields = {"module": "contract", "action": "getabi", "address": VERIFIED}
    response = post_raw(
        explorer, multipart(fields, b"a b'c", charset="latin-1"), 'multipart/form-data; boundary="a b\'c"'
    )
    assert response.json()["status"] == "1", response.text


# -- the key before the body -------------------------------------------------------------------


def _headers(path: str, length: int) -> bytes:
    return (
        f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n"
        f"Content-Length: {length}\r\n\r\n"
    ).encode()


def test_a_wrong_key_in_the_query_is_refused_before_the_body_is_read(keyed):
    before = stored(keyed)
    with socket.create_connection(("127.0.0.1", keyed.port), timeout=10) as sock:
        sock.sendall(_headers("/api?module=contract&action=verifysourcecode&apikey=wrong", 19 * MIB))
        sock.sendall(b"sourceCode=" + b"a" * 1000)  # 1 kB of the 19 MiB announced
        assert select.select([sock], [], [], 5)[0], "no answer before the body was sent"
        head, body = read_response(sock)
    assert head.startswith(b"HTTP/1.1 200") and b"x-content-type-options: nosniff" in head.lower()
    answer = json.loads(body)
    assert answer == {"status": "0", "message": "NOTOK", "result": Texts.INVALID_API_KEY}
    assert stored(keyed) == before
    # A submission with no key in the query, or the right one, waits for its body (the key may be in it).
    for path in ("/api?module=contract&action=verifysourcecode", f"/api?action=verifysourcecode&apikey={KEY}"):
        with socket.create_connection(("127.0.0.1", keyed.port), timeout=10) as sock:
            sock.sendall(_headers(path, 19 * MIB) + b"sourceCode=")
            assert select.select([sock], [], [], 1.0)[0] == [], f"{path} was answered before its body arrived"
    # The wrong key in the body: refused once the body is in.
    response = requests.post(keyed.base_url, data=form(ADDRESS_A, apikey="wrong"), timeout=10)
    assert refusal(response) == Texts.INVALID_API_KEY
    assert stored(keyed) == before


def test_reads_with_a_wrong_key_in_the_query_are_still_answered(keyed):
    response = requests.post(
        keyed.base_url + "?apikey=wrong&action=getabi", data={"module": "contract", "address": VERIFIED}, timeout=10
    )
    assert response.json()["status"] == "1"


# -- slow clients ------------------------------------------------------------------------------


def test_headers_sent_byte_by_byte_are_cut_off(impatient):
    def slowloris():
        with socket.create_connection(("127.0.0.1", impatient.port), timeout=10) as sock:
            return drip(
                sock,
                b"GET /api?module=contract&action=getabi HTTP/1.1\r\nHost: x\r\n" + b"X-a: b\r\n" * 100,
                interval=0.05,
                bound=10,
            )

    data, elapsed = while_in_flight(impatient, slowloris)
    assert elapsed < 3.0, elapsed
    assert data.startswith(b"HTTP/1.1 408 Request Timeout\r\n"), data
    assert b"x-content-type-options: nosniff\r\n" in data
    assert data.endswith(b"\r\n\r\nRequest timeout: the request's headers did not arrive within 1 s.")


def test_fifty_silent_or_slow_connections_are_all_closed(impatient):
    def hold():
        socks = [socket.create_connection(("127.0.0.1", impatient.port), timeout=10) for _ in range(50)]
        try:
            for sock in socks[::2]:
                sock.sendall(b"POST /api HTTP/1.1\r\nHost: x\r\n")
            return [read_until_closed(sock, bound=10) for sock in socks]
        finally:
            for sock in socks:
                sock.close()

    closed = while_in_flight(impatient, hold)
    assert len(closed) == 50
    assert all(data.startswith(b"HTTP/1.1 408") and elapsed < 3.0 for data, elapsed in closed), closed[:3]


def test_a_body_slower_than_the_bound_is_cut_off(impatient):
    def slow_body():
        body = "&".join(f"{k}={v}" for k, v in form(ADDRESS_A).items()).encode()
        with socket.create_connection(("127.0.0.1", impatient.port), timeout=10) as sock:
            sock.sendall(_headers("/api", len(body)))
            return drip(sock, body, interval=0.05, bound=10)

    data, elapsed = while_in_flight(impatient, slow_body)
    assert elapsed < 3.5, elapsed
    assert data.startswith(b"HTTP/1.1 408 Request Timeout\r\n"), data
    assert data.endswith(b"Request timeout: the request's body did not arrive within 1.5 s.")


def test_a_kept_alive_connection_gets_the_same_deadline_for_its_next_request(impatient):
    with socket.create_connection(("127.0.0.1", impatient.port), timeout=10) as sock:
        sock.sendall(f"GET /api?module=contract&action=getabi&address={VERIFIED} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        head, body = read_response(sock)
        assert head.startswith(b"HTTP/1.1 200") and json.loads(body)["status"] == "1"
        data, elapsed = drip(sock, b"GET /api HTTP/1.1\r\nHost: x\r\n" + b"X-a: b\r\n" * 100, interval=0.05, bound=10)
    assert data.startswith(b"HTTP/1.1 408") and elapsed < 3.0, (data, elapsed)


def test_a_fast_request_after_a_slow_start_is_answered(impatient):
    # The deadline is for the whole headers, not a cut at the first pause.
    with socket.create_connection(("127.0.0.1", impatient.port), timeout=10) as sock:
        sock.sendall(b"GET /api?module=contract&action=getabi&address=" + VERIFIED.encode())
        time.sleep(0.5)
        sock.sendall(b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        data, _ = read_until_closed(sock, bound=10)
    assert data.startswith(b"HTTP/1.1 200") and b'"status":"1"' in data


# -- pages and headers -------------------------------------------------------------------------


@pytest.mark.parametrize("page", ["²", "99999999999999999999999", "0", "-3", "1e3", " 2"])
def test_a_bad_page_number_is_the_first_page_with_the_parameter_named(explorer, page):
    response = requests.get(explorer.url + "/", params={"page": page}, timeout=10)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    assert response.headers["x-content-type-options"] == "nosniff"
    assert (
        f"page: <q>{page}</q> is not a page number, so this is the "
        "first page. Give a whole number from 1 to 1000000, or leave it out."
    ) in response.text
    assert "Internal error" not in response.text and VERIFIED in response.text


def test_a_good_page_number_has_no_such_note(explorer):
    for page in ("1", "1000000"):
        response = requests.get(explorer.url + "/", params={"page": page}, timeout=10)
        assert response.status_code == 200 and "is not a page number" not in response.text
    assert "Page 1000000 is past the last page" in response.text


def test_the_pages_forms_refuse_deep_json(explorer):
    deep = "[" * 100_000 + "]" * 100_000
    cases = [
        (deep.encode(), "The body is nested too deeply (over 256 levels); send the arguments as they are."),
        (
            json.dumps({"address": VERIFIED, "function": "value()", "args": [deep]}).encode(),
            "args: an argument is nested too deeply (over 256 levels).",
        ),
    ]
    for body, expected in cases:
        send = lambda: requests.post(explorer.url + "/page-api/read", data=body, timeout=10)  # noqa: E731
        response = while_in_flight(explorer, send)
        assert response.status_code == 400 and response.headers["x-content-type-options"] == "nosniff"
        assert response.json() == {"ok": False, "error": expected}


def test_json_depth_is_told_before_parsing():
    from ape_contract_verify.server.params import json_too_deep

    assert not json_too_deep("[" * 256 + "]" * 256) and json_too_deep("[" * 257 + "]" * 257)
    assert json_too_deep('{"a":' * 300 + "1" + "}" * 300) and json_too_deep(b"[" * 10_000)  # left open
    assert not json_too_deep(json.dumps({"s": "[{" * 10_000, "t": '\\"' + "{" * 300}))  # inside strings
    assert not json_too_deep("[]," * 100_000) and not json_too_deep("]" * 1000)


def test_every_answer_is_nosniff(explorer, monkeypatch):
    answers = [
        requests.get(
            explorer.base_url, params={"module": "contract", "action": "getabi", "address": VERIFIED}, timeout=10
        ),
        requests.get(explorer.base_url, params={"module": "nope"}, timeout=10),
        requests.put(explorer.base_url, timeout=10),
        requests.get(explorer.url + "/nothing", timeout=10),
        requests.get(explorer.url + "/static/explorer.css", timeout=10),
        requests.get(explorer.url + "/static/missing.css", timeout=10),
        requests.get(explorer.url + "/", timeout=10),
        requests.get(explorer.url + f"/address/{VERIFIED}", timeout=10),
        requests.get(explorer.url + "/address/nope", timeout=10),
        requests.post(explorer.url + "/page-api/calldata", json={}, timeout=10),
    ]

    def boom(address):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(explorer.store, "get_abi", boom)
    answers.append(
        requests.get(
            explorer.base_url, params={"module": "contract", "action": "getabi", "address": VERIFIED}, timeout=10
        )
    )
    assert "RuntimeError: disk on fire" in answers[-1].json()["result"]  # the catch-all's own answer
    for response in answers:
        assert response.headers.get("x-content-type-options") == "nosniff", (response.url, response.status_code)
    # uvicorn's own answer to a request that is not HTTP
    with socket.create_connection(("127.0.0.1", explorer.port), timeout=10) as sock:
        sock.sendall(b"NOT HTTP AT ALL\r\n\r\n")
        data, _ = read_until_closed(sock, bound=10)
    assert data.startswith(b"HTTP/1.1 400") and b"x-content-type-options: nosniff\r\n" in data


# -- a bad --db for `ape verify serve` -----------------------------------------------------------


class _Rpc(BaseHTTPRequestHandler):
    """Enough of a node for the explorer to start: a chain id and a genesis block."""

    def do_POST(self):
        call = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        result = {"eth_chainId": "0x7a69", "eth_getBlockByNumber": {"hash": "0x" + "ab" * 32}}.get(call["method"])
        body = json.dumps({"jsonrpc": "2.0", "id": call["id"], "result": result}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def rpc():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Rpc)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _corrupt(path):
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t (x)")
    conn.executemany("INSERT INTO t VALUES (?)", [("x" * 100,)] * 500)
    conn.commit()
    conn.close()
    data = bytearray(path.read_bytes())
    data[100:4096] = b"\xff" * 3996  # the first page's b-tree, past the valid file header
    path.write_bytes(bytes(data))


def _serve(rpc_url, db, cwd, drop_root=False):
    env = dict(os.environ, PATH=f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    env.setdefault("SOLCX_BINARY_PATH", str(REPO / ".solcx"))
    prefix = []
    if drop_root:  # root writes read-only files; without these capabilities it cannot
        prefix = [
            "setpriv",
            "--bounding-set=-dac_override,-dac_read_search",
            "--inh-caps=-dac_override,-dac_read_search",
        ]
    return subprocess.run(
        [*prefix, str(VENV_BIN / "ape"), "verify", "serve", "--rpc", rpc_url, "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
        env=env,
    )


@pytest.mark.parametrize(
    "case, problem",
    [
        ("text", "it is not an SQLite database (another kind of file?); give another path, or move that file away"),
        (
            "corrupt",
            "it is a damaged SQLite database; restore it from a backup, or move it away to start an empty explorer",
        ),
        (
            "read-only",
            "it cannot be written (read-only file or folder); make it and its folder writable (chmod u+w), "
            "or give another path",
        ),
        (
            "directory",
            "it is a folder, not a database file; give the path of a file inside it, e.g. {db}/explorer.sqlite",
        ),
        ("under a file", "it is under {parent}, which is a file, not a folder; give a path in a folder"),
    ],
)
def test_a_bad_db_ends_serve_with_one_line_and_exit_2(rpc, tmp_path, case, problem):
    db, drop_root = tmp_path / "explorer.sqlite", False
    if case == "text":
        db.write_text("name,amount\nalice,3\n")
    elif case == "corrupt":
        _corrupt(db)
    elif case == "read-only":
        conn = sqlite3.connect(db)
        conn.execute("CREATE TABLE kept (x)")
        conn.close()
        db.chmod(0o444)
        if os.geteuid() == 0:
            # Root writes read-only files: drop the capability (util-linux's setpriv, in every Debian).
            assert shutil.which("setpriv"), "setpriv (util-linux) is needed to run this case as root"
            drop_root = True
    elif case == "directory":
        db = tmp_path / "a-folder"
        (db / "inside").mkdir(parents=True)
    else:
        (tmp_path / "notes.txt").write_text("a file")
        db = tmp_path / "notes.txt" / "explorer.sqlite"
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    out = _serve(rpc, db, tmp_path, drop_root)
    expected = f"Error: Cannot use the database {db} (--db): " + problem.format(db=db, parent=db.parent) + "."
    assert out.returncode == 2, out
    assert out.stdout == "" and out.stderr.splitlines() == [expected], out.stderr
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before, "the command changed a file"


def test_a_good_db_path_still_starts(rpc, tmp_path):
    db = tmp_path / "new" / "folder" / "explorer.sqlite"
    env = dict(os.environ, PATH=f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}", PYTHONUNBUFFERED="1")
    proc = subprocess.Popen(
        [str(VENV_BIN / "ape"), "verify", "serve", "--rpc", rpc, "--db", str(db)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=tmp_path,
        env=env,
    )
    watchdog = threading.Timer(60, proc.kill)  # bounds the read below
    watchdog.start()
    try:
        lines = []
        for line in proc.stdout:
            lines.append(line)
            if line.startswith("Base URL: "):
                break
        assert lines and lines[-1].startswith("Base URL: "), lines
        assert f"Database: {db}\n" in lines and db.is_file()
    finally:
        watchdog.cancel()
        proc.kill()
        proc.wait(timeout=10)
