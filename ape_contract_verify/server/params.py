"""Reading a request's parameters, the query and then the body (urlencoded, multipart or JSON), within bounds.

Every rule about a parameter's value is `protocol.forms`'s, the client's own, which
`explorer/contract_api.py` applies; this module only reads bodies."""

from __future__ import annotations

import json
import re

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request

from ape_contract_verify.explorer.contract_api import MAX_BODY_BYTES, MAX_JSON_DEPTH, BadRequest, json_too_deep
from ape_contract_verify.protocol import forms

__all__ = ["MAX_BODY_BYTES", "MAX_JSON_DEPTH", "BadRequest", "json_too_deep", "parse_body", "read_body", "read_params"]
MAX_FIELDS = 200  # the verifysourcecode form has about 30 (10 library pairs included)


async def read_params(request: Request, max_body: int) -> dict[str, str]:
    """Query parameters, overridden by the body's form fields (urlencoded, multipart or JSON)."""
    params = dict(request.query_params)
    if request.method != "POST":
        return params
    body = await read_body(request, max_body)
    if body:
        # Off the event loop: a body's parse must never hold up another client's request.
        params.update(await run_in_threadpool(parse_body, body, request.headers.get("content-type", "")))
    return params


async def read_body(request: Request, max_body: int) -> bytes:
    """The body, refused as soon as it passes `max_body` bytes (declared or streamed)."""
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > max_body:
        raise BadRequest(_too_large(int(declared), max_body))
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > max_body:
            raise BadRequest(_too_large(size, max_body))
        chunks.append(chunk)
    return b"".join(chunks)


def parse_body(body: bytes, content_type: str) -> dict[str, str]:
    """A body's form fields, at most MAX_FIELDS of them: parts are counted (in C) before any is parsed."""
    ctype = content_type.lower()
    if ctype.startswith("multipart/form-data"):
        return _parse_multipart(body, content_type)
    if ctype.startswith("application/json"):
        return _parse_json_body(body)
    # urlencoded, or no content type at all (curl -d sends urlencoded)
    if body.count(b"&") >= MAX_FIELDS:
        raise BadRequest(_too_many("urlencoded body", "fields"))
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as err:
        raise BadRequest(f"The request body is not valid UTF-8 (byte {err.start}); send form fields as UTF-8.")
    return _urlencoded_fields(text)


def _urlencoded_fields(text: str) -> dict[str, str]:
    """`dict(parse_qsl(text, keep_blank_values=True))`, field for field (the tests compare them),
    with yarl's C unquoting: parse_qsl's Python loop held the GIL for 1.7 s on 19 MiB of %-escapes,
    and other clients' requests waited for the event loop's turns."""
    from yarl import URL

    return dict(URL.build(query_string=text, encoded=True).query.items())


def _too_large(size: int, limit: int) -> str:
    return (
        f"Request body too large: {size} bytes or more, the limit is {limit} bytes "
        f"({limit // (1024 * 1024)} MB). Send only the sources the contract needs."
    )


def _too_many(what: str, items: str) -> str:
    return (
        f"The request's {what} has more than {MAX_FIELDS} {items}, the limit. "
        "Send only the contract API's parameters (module, action, sourceCode, …), once each."
    )


_BOUNDARY = re.compile(r"""boundary\s*=\s*(?:"([^"]{1,200})"|([^\s;,"]{1,200}))""", re.IGNORECASE)
_NAME = re.compile(rb"""\bname\s*=\s*(?:"((?:[^"\\\r\n]|\\.)*)"|([^;\s"]+))""", re.IGNORECASE)
_CHARSET = re.compile(rb"""charset\s*=\s*"?([A-Za-z0-9_.:-]{1,40})""", re.IGNORECASE)
MAX_PART_HEADER_BYTES = 8 * 1024


def _parse_multipart(body: bytes, content_type: str) -> dict[str, str]:
    """RFC 7578 form-data: split on the boundary; each part's Content-Disposition name is its field."""
    found = _BOUNDARY.search(content_type)
    if not found:
        raise BadRequest("The multipart/form-data body has no boundary in its Content-Type; send boundary=….")
    delimiter = b"\r\n--" + (found.group(1) or found.group(2)).encode("latin-1")
    data = b"\r\n" + body  # the first delimiter may start the body
    if data.count(delimiter) > MAX_FIELDS + 1:  # + 1: the closing delimiter
        raise BadRequest(_too_many("multipart/form-data body", "parts"))
    pieces = data.split(delimiter)
    if len(pieces) < 3 or not pieces[-1].startswith(b"--"):
        raise BadRequest("The multipart/form-data body could not be parsed: no closing boundary; check its boundary.")
    fields: dict[str, str] = {}
    for number, piece in enumerate(pieces[1:-1], start=1):
        head, sep, content = piece.partition(b"\r\n\r\n")
        if not sep or len(head) > MAX_PART_HEADER_BYTES:
            raise BadRequest(f"Part {number} of the multipart/form-data body has no complete headers; check the body.")
        disposition = next(
            (line for line in head.split(b"\r\n") if line.lower().startswith(b"content-disposition:")), b""
        )
        name = _NAME.search(disposition)
        if not name:
            continue
        field = (name.group(1) or name.group(2)).decode("utf-8", errors="replace")
        charset = next((m.group(1) for m in map(_CHARSET.search, head.split(b"\r\n")) if m), b"utf-8")
        try:
            fields[field] = content.decode(charset.decode("ascii"), errors="replace")
        except LookupError:
            raise BadRequest(
                f"{forms.clip(field)}: the part's charset {charset.decode('ascii')!r} is unknown; send UTF-8."
            )
    return fields


def _parse_json_body(body: bytes) -> dict[str, str]:
    # Both told before json.loads builds anything: it recurses per level, and builds every member.
    if json_too_deep(body):
        raise BadRequest(
            f"The JSON request body is nested too deeply (over {MAX_JSON_DEPTH} levels of arrays or objects); "
            "send a flat object."
        )
    if json_members_over(body, MAX_FIELDS):
        raise BadRequest(_too_many("JSON body", "keys"))
    try:
        data = json.loads(body)
    except ValueError as err:
        raise BadRequest(f"The JSON request body is not valid JSON: {err}. Send form fields or a JSON object.")
    if not isinstance(data, dict):
        raise BadRequest('The JSON request body must be an object of parameters, e.g. {"action": "getabi", …}.')
    return {str(k): v if isinstance(v, str) else json.dumps(v) for k, v in data.items()}


_JSON_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[][{}:]')  # a string, or a mark of structure
_OPENS, _CLOSES, _COLON = frozenset(b"[{"), frozenset(b"]}"), ord(":")


def json_members_over(data: bytes, limit: int) -> bool:
    """Whether a JSON object's top level has more than `limit` members (colons outside strings at
    depth 1), told before json.loads builds them all: a body of a million keys is a million objects.
    The scan ends at the first member over the limit."""
    if data.count(b":") <= limit:  # the common case, at C speed: not that many colons anywhere
        return False
    members = depth = 0
    for token in _JSON_TOKEN.finditer(data):
        mark = token.group()[0]
        if mark in _OPENS:
            depth += 1
        elif mark in _CLOSES:
            depth -= 1
        elif mark == _COLON and depth == 1:
            members += 1
            if members > limit:
                return True
    return False
