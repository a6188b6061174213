"""The local explorer's HTTP face: Etherscan's contract API at `<base>/api`, as a Starlette app.

Everything answers HTTP 200 with Etherscan's envelope and texts (`answers.Texts`), errors
included. Bad input gets status "0" and a text that names the parameter and the fix; an
unexpected exception is caught by `CatchAll` and answered the same way, never as a 500.
No engine module is imported here: the embedded explorer starts inside `ape run`.
"""

from __future__ import annotations

import hmac
import json
import logging
import re
import threading
from typing import Any, Callable, Iterable, Optional
from urllib.parse import parse_qsl

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ape_contract_verify.protocol.answers import Texts
from ape_contract_verify.server.jobs import code_hash, request_to_payload
from ape_contract_verify.server.store import GUID_LENGTH, PROXY, SOURCE, Store, VerifiedContract
from ape_contract_verify.request import CodeFormat, VerificationRequest
from ape_contract_verify.exceptions import ContractVerifyError
from ape_contract_verify.protocol.values import ADDRESS, checksum, hex_to_bytes

logger = logging.getLogger("ape_contract_verify.server")

MAX_BODY_BYTES = 20 * 1024 * 1024
MAX_LIBRARIES = 10
ACTIONS = (
    "getabi",
    "getsourcecode",
    "verifysourcecode",
    "checkverifystatus",
    "verifyproxycontract",
    "checkproxyverification",
    "getcontractcreation",
)
EVM_VERSIONS = (
    "homestead", "tangerineWhistle", "spuriousDragon", "byzantium", "constantinople", "petersburg",
    "istanbul", "berlin", "london", "paris", "shanghai", "cancun", "prague", "osaka",
)  # fmt: skip
_GUID = re.compile(r"^[0-9A-Za-z]+$")
_HEX = re.compile(r"^[0-9a-fA-F]*$")
_SOLC_VERSION = re.compile(r"^v?(\d+)\.(\d+)\.(\d+)(?:-nightly\.[\d.]+)?(?:\+commit\.[0-9a-fA-F]{4,40})?$")
_VYPER_VERSION = re.compile(r"^vyper:\d+\.\d+\.\d+(?:\S*)$")

_JSON_HEADERS = [(b"content-type", b"application/json")]


class BadRequest(ContractVerifyError):
    """Input we refuse: answered as status "0" with this text."""


def envelope(status: str, result: Any, message: Optional[str] = None) -> bytes:
    body = {"status": status, "message": message or ("OK" if status == "1" else "NOTOK"), "result": result}
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def envelope_response(status: str, result: Any, message: Optional[str] = None) -> Response:
    return Response(envelope(status, result, message), media_type="application/json")


class CatchAll:
    """Outermost own layer: any exception becomes status "0" with its type and text, HTTP 200."""

    def __init__(self, app: Callable):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        started = False

        async def tracking_send(message):
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, tracking_send)
        except Exception as err:  # the point of this layer
            logger.warning("Explorer request failed: %s: %s", type(err).__name__, err)
            if started:
                return
            text = f"Internal error while handling the request ({type(err).__name__}: {err}). Nothing was recorded."
            try:
                await send({"type": "http.response.start", "status": 200, "headers": _JSON_HEADERS})
                await send({"type": "http.response.body", "body": envelope("0", text)})
            except Exception:  # the client is gone (e.g. it disconnected mid-body): nobody to answer
                pass


class _SerializedChain:
    """One chain call at a time from this service (Ape providers and requests sessions are not
    promised to be thread-safe); the engine's calls go through the same lock."""

    def __init__(self, chain: Any):
        self._chain = chain
        self._lock = threading.RLock()

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._chain, name)
        if not callable(attr):
            return attr

        def locked(*args, **kwargs):
            with self._lock:
                return attr(*args, **kwargs)

        return locked


class ExplorerService:
    """The state the handlers need: the store, the job queue, the chain, the configured keys."""

    def __init__(
        self,
        store: Store,
        chain: Any,
        notify: Callable[[], None] = lambda: None,
        api_keys: Iterable[str] = (),
        max_body: int = MAX_BODY_BYTES,
        proxy_daily_limit: int = 100,
    ):
        self.store = store
        self.chain = chain
        self.notify = notify
        self._api_keys = tuple(k for k in api_keys if k)
        self.max_body = max_body
        self.proxy_daily_limit = proxy_daily_limit
        self._chain_id: Optional[int] = None

    def __repr__(self) -> str:  # never show keys
        return f"<ExplorerService db={self.store.path!r} keys={len(self._api_keys)}>"

    @property
    def requires_key(self) -> bool:
        return bool(self._api_keys)

    def key_ok(self, key: str) -> bool:
        if not self._api_keys:
            return True
        candidate = (key or "").encode()
        return any(hmac.compare_digest(candidate, k.encode()) for k in self._api_keys)

    def chain_id(self) -> int:
        if self._chain_id is None:
            self._chain_id = int(self.chain.chain_id())
        return self._chain_id


# -- parameters ------------------------------------------------------------------------------


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


def need(params: dict[str, str], name: str, what: str) -> str:
    value = (params.get(name) or "").strip()
    if not value:
        raise BadRequest(f"Missing parameter: {name} ({what}).")
    return value


def address_param(params: dict[str, str], name: str, what: str = "the contract's 0x-prefixed address") -> str:
    value = need(params, name, what)
    if not ADDRESS.match(value):
        raise BadRequest(
            f"Invalid {name}: {_clip(value)!r} is not an address; expected 0x followed by 40 hex digits."
        )
    return value.lower()


def _clip(value: str, limit: int = 60) -> str:
    return value if len(value) <= limit else value[:limit] + "…"


def _flag(params: dict[str, str], name: str) -> Optional[bool]:
    value = (params.get(name) or "").strip().lower()
    if value == "":
        return None
    if value in ("1", "true"):
        return True
    if value in ("0", "false"):
        return False
    raise BadRequest(f"Invalid {name}: {_clip(value)!r}; use 0 or 1.")


def _constructor_arguments(params: dict[str, str]) -> str:
    misspelt = (params.get("constructorArguements") or "").strip()
    right = (params.get("constructorArguments") or "").strip()
    if misspelt and right and misspelt.lower().removeprefix("0x") != right.lower().removeprefix("0x"):
        raise BadRequest(
            "constructorArguements and constructorArguments differ; send the same ABI-encoded hex in both, or only one."
        )
    value = (misspelt or right).removeprefix("0x").removeprefix("0X")
    if not _HEX.match(value) or len(value) % 2:
        raise BadRequest(
            "Invalid constructor arguments provided. Please verify that they are in ABI-encoded format "
            "(constructorArguements: an even number of hex digits, with or without 0x)."
        )
    return value.lower()


def _libraries(params: dict[str, str]) -> dict[str, str]:
    libraries: dict[str, str] = {}
    for key in params:
        match = re.fullmatch(r"library(name|address)(\d+)", key)
        if match and not 1 <= int(match.group(2)) <= MAX_LIBRARIES:
            raise BadRequest(f"Invalid {key}: at most {MAX_LIBRARIES} library pairs are supported (1 to 10).")
    for number in range(1, MAX_LIBRARIES + 1):
        name = (params.get(f"libraryname{number}") or "").strip()
        address = (params.get(f"libraryaddress{number}") or "").strip()
        if not name and not address:
            continue
        if not name or not address:
            missing = f"libraryname{number}" if not name else f"libraryaddress{number}"
            raise BadRequest(f"Missing parameter: {missing} (libraryname{number} and libraryaddress{number} go together).")
        if not ADDRESS.match(address):
            raise BadRequest(
                f"Invalid libraryaddress{number}: {_clip(address)!r} is not an address; expected 0x and 40 hex digits."
            )
        libraries[name] = address
    return libraries


def parse_verification(params: dict[str, str]) -> VerificationRequest:
    """verifysourcecode's form, checked field by field, as a VerificationRequest."""
    address = address_param(params, "contractaddress")
    source = params.get("sourceCode") or ""
    if not source.strip():
        raise BadRequest("Missing parameter: sourceCode (the flat source, or the standard-json input as JSON text).")
    raw_format = (params.get("codeformat") or CodeFormat.SINGLE_FILE.value).strip()
    try:
        code_format = CodeFormat(raw_format)
    except ValueError:
        known = ", ".join(f.value for f in CodeFormat)
        raise BadRequest(f"Invalid codeformat: {_clip(raw_format)!r}; use one of {known}.")
    name = need(params, "contractname", "the contract's name; path/File.sol:Name for JSON inputs")
    if code_format is not CodeFormat.SINGLE_FILE:
        try:
            data = json.loads(source)
        except ValueError as err:
            raise BadRequest(f"Invalid JSON in sourceCode (codeformat {code_format.value}): {err}.")
        if not isinstance(data, dict) or not isinstance(data.get("sources"), dict) or not data["sources"]:
            raise BadRequest(
                f"sourceCode for codeformat {code_format.value} must be a JSON object with a non-empty "
                '"sources" object (the compiler\'s standard JSON input).'
            )
        if ":" not in name:
            raise BadRequest(
                f"Invalid contractname: {_clip(name)!r}; with codeformat {code_format.value} use "
                "<source unit>:<Name>, e.g. src/Box.sol:Box."
            )
    version = need(params, "compilerversion", "e.g. v0.8.26+commit.8a97fa7a, or vyper:0.4.3")
    solc = _SOLC_VERSION.match(version)
    if not solc and not _VYPER_VERSION.match(version):
        raise BadRequest(
            f"Invalid compilerversion: {_clip(version)!r}; expected v<major>.<minor>.<patch>+commit.<hash> "
            "(e.g. v0.8.26+commit.8a97fa7a) or vyper:<X.Y.Z>."
        )
    if solc and tuple(int(p) for p in solc.groups()) < (0, 4, 11):
        raise BadRequest(f"Invalid compilerversion: {version}; only v0.4.11 and above are supported.")
    runs_text = (params.get("runs") or "").strip()
    runs = None
    if runs_text:
        if not runs_text.isdigit() or int(runs_text) >= 2**32:
            raise BadRequest(f"Invalid runs: {_clip(runs_text)!r}; use a whole number from 0 to 4294967295.")
        runs = int(runs_text)
    evm = (params.get("evmversion") or params.get("evmVersion") or "").strip()
    if evm.lower() in ("", "default"):
        evm = ""
    else:
        canonical = {v.lower(): v for v in EVM_VERSIONS}.get(evm.lower())
        if canonical is None:
            raise BadRequest(f"Invalid evmversion: {_clip(evm)!r}; leave it blank or use one of {', '.join(EVM_VERSIONS)}.")
        evm = canonical
    license_type = None
    license_text = (params.get("licenseType") or "").strip()
    if license_text:
        from ape_contract_verify.protocol.licenses import UnknownLicense, license_code

        try:
            license_type = license_code(license_text)
        except UnknownLicense as err:
            raise BadRequest(str(err))
    return VerificationRequest(
        address=address,
        contract_name=name,
        source_code=source,
        code_format=code_format,
        compiler_version=version,
        optimization_used=_flag(params, "optimizationUsed"),
        runs=runs,
        evm_version=evm or None,
        via_ir=_flag(params, "viaIR"),
        constructor_arguments=_constructor_arguments(params),
        license_type=license_type,
        libraries=_libraries(params),
    )


def guid_param(params: dict[str, str], submitted_by: str) -> str:
    value = need(params, "guid", f"the 50-character receipt returned by {submitted_by}")
    if len(value) != GUID_LENGTH or not _GUID.match(value):
        raise BadRequest(
            f"{Texts.UNKNOWN_UID} (a guid is the {GUID_LENGTH}-character receipt returned by {submitted_by}; "
            f"got {len(value)} characters)"
        )
    return value


# -- actions ---------------------------------------------------------------------------------


async def _code_at(service: ExplorerService, address: str) -> bytes:
    try:
        return hex_to_bytes(await run_in_threadpool(service.chain.get_code, address))
    except Exception as err:
        raise BadRequest(f"The explorer could not read the chain: {type(err).__name__}: {err}")


def _require_key(service: ExplorerService, params: dict[str, str]) -> None:
    if not service.key_ok(params.get("apikey", "")):
        raise BadRequest(Texts.INVALID_API_KEY)


async def getabi(service: ExplorerService, params: dict[str, str], method: str) -> Response:
    address = address_param(params, "address")
    abi = service.store.get_abi(address)
    if abi is None:
        return envelope_response("0", Texts.NOT_VERIFIED)
    return envelope_response("1", abi)


UNVERIFIED_SOURCE = {
    "SourceCode": "",
    "ABI": Texts.NOT_VERIFIED,
    "ContractName": "",
    "CompilerVersion": "",
    "OptimizationUsed": "",
    "Runs": "",
    "ConstructorArguments": "",
    "EVMVersion": "",
    "Library": "",
    "LicenseType": "Unknown",
    "Proxy": "0",
    "Implementation": "",
    "SwarmSource": "",
}


def source_entry(contract: VerifiedContract, proxy_implementation: Optional[str]) -> dict[str, str]:
    """One getsourcecode result object in Etherscan's layout: every value a string."""
    from ape_contract_verify.protocol.licenses import code_from_source, license_name

    settings = contract.settings or {}
    if contract.code_format != CodeFormat.SINGLE_FILE.value:
        source_code = "{" + contract.source_code + "}"  # Etherscan's {{…}} for JSON inputs
        try:
            settings = {**settings, **json.loads(contract.source_code).get("settings", {})}  # the input rules
        except (ValueError, AttributeError):
            pass
    else:
        source_code = contract.source_code
    optimizer = settings.get("optimizer") or {}
    if contract.compiler_version.startswith("vyper:"):
        # Vyper has modes, not runs: optimize gas (the default) or codesize counts as on.
        optimization_used = "0" if str(settings.get("optimize", "gas")).lower() in ("none", "false") else "1"
        runs = "0"
    else:
        optimization_used = "1" if optimizer.get("enabled") else "0"
        runs = str(optimizer.get("runs", 200))
    license_code = contract.license_type or code_from_source(contract.source_code)
    implementation = ""
    if proxy_implementation:
        implementation = checksum(proxy_implementation)
    return {
        "SourceCode": source_code,
        "ABI": contract.abi,
        "ContractName": contract.contract_name.rsplit(":", 1)[-1],
        "CompilerVersion": contract.compiler_version,
        "OptimizationUsed": optimization_used,
        "Runs": runs,
        "ConstructorArguments": contract.constructor_arguments,
        "EVMVersion": settings.get("evmVersion") or "Default",
        "Library": ";".join(f"{name}:{address}" for name, address in sorted(contract.libraries.items())),
        "LicenseType": license_name(license_code),
        "Proxy": "1" if implementation else "0",
        "Implementation": implementation,
        "SwarmSource": "",
        # Our own additions: how the code matched, and in which form the source was sent.
        "MatchType": contract.match,
        "CodeFormat": contract.code_format,
    }


async def getsourcecode(service: ExplorerService, params: dict[str, str], method: str) -> Response:
    address = address_param(params, "address")
    contract = service.store.get_contract(address)
    if contract is None:
        return envelope_response("1", [dict(UNVERIFIED_SOURCE)])
    proxy = service.store.get_proxy(address)
    return envelope_response("1", [source_entry(contract, proxy.implementation if proxy else None)])


def _post_only(action: str, method: str) -> None:
    if method != "POST":
        raise BadRequest(f"{action} must be sent as a POST with form fields; GET is not supported for submissions.")


async def verifysourcecode(service: ExplorerService, params: dict[str, str], method: str) -> Response:
    _post_only("verifysourcecode", method)
    _require_key(service, params)
    request = parse_verification(params)
    existing = service.store.get_contract(request.address)
    code = await _code_at(service, request.address)
    if not code:
        raise BadRequest(Texts.UNABLE_TO_LOCATE.format(address=request.address))
    if existing is not None and existing.match == "full":
        if not existing.code_hash or existing.code_hash == code_hash(code):
            raise BadRequest(Texts.SOURCE_ALREADY_VERIFIED)
    guid = service.store.add_submission(SOURCE, request.address, request_to_payload(request))
    service.notify()
    return envelope_response("1", guid)


async def checkverifystatus(service: ExplorerService, params: dict[str, str], method: str) -> Response:
    guid = guid_param(params, "verifysourcecode")
    submission = service.store.get_submission(guid)
    if submission is None:
        return envelope_response("0", Texts.UNKNOWN_UID)
    if submission.kind != SOURCE:
        return envelope_response("0", f"{Texts.UNKNOWN_UID} (this guid is a proxy submission; use checkproxyverification)")
    if submission.state != "done":
        return envelope_response("0", Texts.PENDING)
    return envelope_response(submission.status or "0", submission.result or "")


async def verifyproxycontract(service: ExplorerService, params: dict[str, str], method: str) -> Response:
    _post_only("verifyproxycontract", method)
    _require_key(service, params)
    name = "address" if (params.get("address") or "").strip() or not params.get("contractaddress") else "contractaddress"
    address = address_param(params, name, "the proxy contract's 0x-prefixed address")
    expected = (params.get("expectedimplementation") or "").strip()
    if expected and not ADDRESS.match(expected):
        raise BadRequest(
            f"Invalid expectedimplementation: {_clip(expected)!r} is not an address; expected 0x and 40 hex digits, "
            "or leave it out."
        )
    code = await _code_at(service, address)
    if not code:
        raise BadRequest(Texts.UNABLE_TO_LOCATE.format(address=address))
    if not service.store.take_proxy_quota(params.get("apikey") or None, limit=service.proxy_daily_limit):
        raise BadRequest(
            f"Max daily proxy verification submissions reached ({service.proxy_daily_limit} a day per API key); "
            "try again after 00:00 UTC."
        )
    guid = service.store.add_submission(PROXY, address, {"expected_implementation": expected.lower()})
    service.notify()
    return envelope_response("1", guid)


async def checkproxyverification(service: ExplorerService, params: dict[str, str], method: str) -> Response:
    guid = guid_param(params, "verifyproxycontract")
    submission = service.store.get_submission(guid)
    if submission is None:
        return envelope_response("0", Texts.UNKNOWN_UID)
    if submission.kind != PROXY:
        return envelope_response("0", f"{Texts.UNKNOWN_UID} (this guid is a source code submission; use checkverifystatus)")
    if submission.state != "done":
        return envelope_response("0", Texts.PROXY_IN_PROGRESS)
    return envelope_response(submission.status or "0", submission.result or "")


async def getcontractcreation(service: ExplorerService, params: dict[str, str], method: str) -> Response:
    raw = need(params, "contractaddresses", "up to 5 comma-separated contract addresses")
    addresses = [a.strip() for a in raw.split(",") if a.strip()]
    if len(addresses) > 5:
        raise BadRequest(f"Invalid contractaddresses: {len(addresses)} given, at most 5 are allowed.")
    for value in addresses:
        if not ADDRESS.match(value):
            raise BadRequest(f"Invalid contractaddresses: {_clip(value)!r} is not an address; expected 0x and 40 hex digits.")
    found = []
    for address in addresses:
        try:
            creation = await run_in_threadpool(service.chain.find_creation, address.lower())
        except Exception as err:
            raise BadRequest(f"The explorer could not find the creation of {address}: {type(err).__name__}: {err}")
        if creation is None:
            continue
        factory = bool(_creation_field(creation, "factory"))
        found.append(
            {
                "contractAddress": checksum(address),
                "contractCreator": _creation_field(creation, "deployer", "sender", "from"),
                "txHash": _creation_field(creation, "tx_hash", "transaction_hash", "txHash", "hash"),
                "blockNumber": _creation_field(creation, "block", "block_number"),
                "contractFactory": _creation_field(creation, "creator") if factory else "",
            }
        )
    if not found:
        return envelope_response("0", "No data found")
    return envelope_response("1", found)


def _creation_field(creation: Any, *names: str) -> str:
    for name in names:
        value = creation.get(name) if isinstance(creation, dict) else getattr(creation, name, None)
        if value is True:
            return "1"
        if value:
            return "0x" + bytes(value).hex() if isinstance(value, (bytes, bytearray)) else str(value)
    return ""


HANDLERS = {
    "getabi": getabi,
    "getsourcecode": getsourcecode,
    "verifysourcecode": verifysourcecode,
    "checkverifystatus": checkverifystatus,
    "verifyproxycontract": verifyproxycontract,
    "checkproxyverification": checkproxyverification,
    "getcontractcreation": getcontractcreation,
}


def create_app(service: ExplorerService) -> Starlette:
    async def api(request: Request) -> Response:
        try:
            params = await read_params(request, service.max_body)
            module = (params.get("module") or "").strip()
            if module != "contract":
                raise BadRequest(f"Error! Missing Or invalid Module name{_got(module)}; this explorer serves module=contract.")
            action = (params.get("action") or "").strip()
            handler = HANDLERS.get(action)
            if handler is None:
                raise BadRequest(f"Error! Missing Or invalid Action name{_got(action)}; use one of {', '.join(ACTIONS)}.")
            chain_id = (params.get("chainid") or "").strip()
            if chain_id and chain_id != str(await _chain_id(service)):
                raise BadRequest(
                    "Missing or unsupported chainid parameter (required for v2 api); "
                    f"this explorer serves chainid {await _chain_id(service)}, got {_clip(chain_id)!r}."
                )
            return await handler(service, params, request.method)
        except BadRequest as err:
            return envelope_response("0", str(err))

    async def not_found(request: Request, exc: Exception) -> Response:
        code = getattr(exc, "status_code", 404)
        if code == 405:
            text = f"Method {request.method} is not supported; use GET or POST on /api."
        else:
            text = f"Not found: {request.url.path}. The API is at /api (module=contract&action=…)."
        return Response(envelope("0", text), status_code=code, media_type="application/json")

    from ape_contract_verify.server import pages

    routes = [
        Route("/api", api, methods=["GET", "POST"]),
        Route("/v2/api", api, methods=["GET", "POST"]),
        *pages.routes(),
    ]
    app = Starlette(routes=routes, middleware=[Middleware(CatchAll)], exception_handlers={404: not_found, 405: not_found})
    app.state.service = service
    return app


async def _chain_id(service: ExplorerService) -> int:
    if service._chain_id is None:
        try:
            await run_in_threadpool(service.chain_id)
        except Exception as err:
            raise BadRequest(f"The explorer could not read the chain id: {type(err).__name__}: {err}")
    return service.chain_id()


def _got(value: str) -> str:
    return f" (got {_clip(value)!r})" if value else ""


