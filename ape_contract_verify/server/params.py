"""Reading a request's parameters: the query, then the body (urlencoded, multipart or JSON) under
a size limit. Every rule about a parameter's value is `protocol.forms`'s, the client's own; this
module only reads bodies and adapts those rules to the server (lowercase addresses for the store).
"""

from __future__ import annotations

import json
from dataclasses import replace
from urllib.parse import parse_qsl

from starlette.requests import Request

from ape_contract_verify.exceptions import ContractVerifyError
from ape_contract_verify.protocol import forms
from ape_contract_verify.request import VerificationRequest

MAX_BODY_BYTES = 20 * 1024 * 1024


class BadRequest(ContractVerifyError):
    """A request we refuse for what it is, not for a parameter's value (body, method, quota):
    answered as status "0" with this text."""


async def read_params(request: Request, max_body: int) -> dict[str, str]:
    """Query parameters, overridden by the body's form fields (urlencoded, multipart or JSON)."""
    params = dict(request.query_params)
    if request.method != "POST":
        return params
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > max_body:
        raise BadRequest(_too_large(int(declared), max_body))
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > max_body:
            raise BadRequest(_too_large(size, max_body))
        chunks.append(chunk)
    body = b"".join(chunks)
    if not body:
        return params
    ctype = request.headers.get("content-type", "").lower()
    if ctype.startswith("multipart/form-data"):
        params.update(_parse_multipart(body, request.headers.get("content-type", "")))
    elif ctype.startswith("application/json"):
        params.update(_parse_json_body(body))
    else:  # urlencoded, or no content type at all (curl -d sends urlencoded)
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError as err:
            raise BadRequest(f"The request body is not valid UTF-8 (byte {err.start}); send form fields as UTF-8.")
        params.update(parse_qsl(text, keep_blank_values=True))
    return params


def _too_large(size: int, limit: int) -> str:
    return (
        f"Request body too large: {size} bytes or more, the limit is {limit} bytes "
        f"({limit // (1024 * 1024)} MB). Send only the sources the contract needs."
    )


def _parse_multipart(body: bytes, content_type: str) -> dict[str, str]:
    from email import policy
    from email.parser import BytesParser

    message = BytesParser(policy=policy.HTTP).parsebytes(
        b"Content-Type: " + content_type.encode("latin-1") + b"\r\n\r\n" + body
    )
    if not message.is_multipart():
        raise BadRequest("The multipart/form-data body could not be parsed; check its boundary.")
    fields: dict[str, str] = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        if not name:
            continue
        payload = part.get_payload(decode=True) or b""
        fields[str(name)] = payload.decode(part.get_content_charset() or "utf-8", errors="replace")
    return fields


def _parse_json_body(body: bytes) -> dict[str, str]:
    try:
        data = json.loads(body)
    except ValueError as err:
        raise BadRequest(f"The JSON request body is not valid JSON: {err}. Send form fields or a JSON object.")
    if not isinstance(data, dict):
        raise BadRequest("The JSON request body must be an object of parameters, e.g. {\"action\": \"getabi\", …}.")
    return {str(k): v if isinstance(v, str) else json.dumps(v) for k, v in data.items()}


# -- the protocol's rules, as the server needs them ---------------------------------------------


def read_address(params: dict[str, str]) -> str:
    """getabi / getsourcecode's address, lowercase as the store keeps it."""
    return forms.validate_read_form(params).lower()


def guid_param(params: dict[str, str]) -> str:
    return forms.validate_check_form(params)


def verification_request(params: dict[str, str]) -> VerificationRequest:
    """verifysourcecode's form as a VerificationRequest, by the client's own rules."""
    request = forms.form_to_request(params)
    return replace(request, address=request.address.lower())


def proxy_params(params: dict[str, str]) -> tuple[str, str]:
    """verifyproxycontract's address and expected implementation ("" when not given), lowercase."""
    checked = forms.validate_proxy_form(params)
    return checked["address"].lower(), checked.get("expectedimplementation", "").lower()


def creation_addresses(params: dict[str, str]) -> list[str]:
    return [address.lower() for address in forms.validate_creation_form(params)]
