"""The local explorer in this process, and the contract API's actions on its store and job queue, without HTTP.

`EmbeddedExplorer` is the explorer: `ExplorerService`, the state every action reads (its store,
the chain it reads one call at a time, the keys), with its job queue's workers. It is what `ape run` and
`ape verify` verify on for a local network (through the workflow's in-process target: no HTTP
server, no port), and what `ape verify serve` serves over HTTP (`server/runner.py`).

`answer(service, params, method)` is one request's (status, result): what the HTTP face at /api
sends in Etherscan's envelope, and what the in-process local target classifies, so both answer
with the same texts (`answers.Texts`). Bad input is status "0" with a text that names the
parameter and the fix. Every rule about a parameter's value is `protocol.forms`'s, the client's own;
module and action name the handler (`HANDLERS`). getsourcecode's entry is built here in
Etherscan's layout from what the store holds (`source_result`).
No engine module is imported here: the local explorer starts inside `ape run`.
"""

from __future__ import annotations

import hmac
import json
import re
import tempfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from functools import partial
from itertools import accumulate
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from ape_contract_verify.evm.reads import SerializedChain
from ape_contract_verify.exceptions import ContractVerifyError, InvalidRequest
from ape_contract_verify.explorer.jobs import JobRunner, RealEngine, current_contract, request_to_payload
from ape_contract_verify.explorer.store import PROXY, PROXY_DAILY_LIMIT, SOURCE, Store, VerifiedContract
from ape_contract_verify.json_types import JsonObject, JsonReadable, as_object
from ape_contract_verify.protocol import forms
from ape_contract_verify.protocol.answers import Texts
from ape_contract_verify.protocol.inputs import JSON_FORMATS
from ape_contract_verify.protocol.values import checksum, hex_to_bytes
from ape_contract_verify.request import CodeFormat, VerificationRequest

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from ape_contract_verify.engine.compilers import CompileCache
    from ape_contract_verify.evm.reads import ChainReader, SearchingReader

Answer = tuple[str, JsonReadable]  # an envelope's status and result


class BadRequest(ContractVerifyError):
    """A request we refuse for what it is, not for a parameter's value (body, method, quota):
    answered as status "0" with this text."""


class ChainUnreadable(BadRequest):
    """The chain could not be read to answer (the Sourcify face's 503)."""


MAX_BODY_BYTES = 20 * 1024 * 1024  # a submission's size, whichever face it comes through


class ExplorerService:
    """The state every action reads, held by the app (`app.state.service`) and by the in-process
    local target: the store, the chain, the job queue's wake-up (`notify`), the accepted keys."""

    def __init__(
        self,
        store: Store,
        chain: SearchingReader,  # LocalExplorer's SerializedChain passes on a reader's search, where it has one
        notify: Callable[[], None] = lambda: None,
        api_keys: Iterable[str] = (),
        max_body: int = MAX_BODY_BYTES,
        proxy_daily_limit: int = PROXY_DAILY_LIMIT,
    ):
        self.store = store
        self.chain = chain
        self.notify = notify
        self._api_keys = tuple(k for k in api_keys if k)
        self.max_body = max_body
        self.proxy_daily_limit = proxy_daily_limit
        self.known_chain_id: int | None = None  # the chain id once read

    def __repr__(self) -> str:  # never show keys
        return f"<ExplorerService db={self.store.path!r} keys={len(self._api_keys)}>"

    @property
    def requires_key(self) -> bool:
        return bool(self._api_keys)

    def require_key(self, params: Mapping[str, str]) -> None:
        """A request's `apikey`: any, when no key is configured, else one of them."""
        candidate = (params.get("apikey") or "").encode()
        if self._api_keys and not any(hmac.compare_digest(candidate, k.encode()) for k in self._api_keys):
            raise BadRequest(Texts.INVALID_API_KEY)

    def chain_id(self) -> int:
        """The chain's id, read once (a failed read is tried again next time)."""
        if self.known_chain_id is None:
            try:
                self.known_chain_id = int(self.chain.chain_id())
            except Exception as err:
                raise ChainUnreadable(f"The explorer could not read the chain id: {type(err).__name__}: {err}")
        return self.known_chain_id


# -- the explorer in this process ------------------------------------------------------------


class ExplorerOptions(TypedDict, total=False):
    """What an explorer is made with beyond its chain, store and keys (`EmbeddedExplorer`'s keywords)."""

    engine: RealEngine | None
    workers: int
    max_body: int
    compile_timeout: float | None
    cache: CompileCache | None  # the compile cache its engine shares (the process's, with the runs' pre-checks)


class EmbeddedExplorer(ExplorerService):
    """The explorer's state (the service every action reads) and workers; `start()` starts the
    workers, `stop()` ends them and closes the store. Without `db_path` its data lives in a
    temporary file removed by `stop()`. Safe to use from several threads (the store has a
    connection per thread; the chain is read one call at a time)."""

    def __init__(
        self,
        chain: ChainReader,
        db_path: str | Path | None = None,
        api_keys: Iterable[str] = (),
        **options: Unpack[ExplorerOptions],
    ):
        self._tmpdir: tempfile.TemporaryDirectory[str] | None = None
        if db_path is None:  # removed at stop(), or as soon as the explorer is dropped (its store failed to open)
            self._tmpdir = tempfile.TemporaryDirectory(prefix="ape-verify-explorer-", ignore_cleanup_errors=True)
            db_path = Path(self._tmpdir.name) / "explorer.sqlite"
        self.db_path = Path(db_path)
        serialized, store = SerializedChain(chain), Store(self.db_path)
        timeout = options.get("compile_timeout")
        engine = options.get("engine") or RealEngine(serialized, options.get("cache"), compile_timeout=timeout)
        self.runner = JobRunner(store, engine, options.get("workers", 1))
        max_body = options.get("max_body", MAX_BODY_BYTES)
        super().__init__(store, serialized, self.runner.notify, api_keys, max_body)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} db={str(self.db_path)!r}>"

    def start(self) -> EmbeddedExplorer:
        self.runner.start()
        return self

    def stop(self, timeout: float = 10.0) -> None:
        self.runner.stop(timeout)
        self.store.close()
        if self._tmpdir is not None:
            self._tmpdir.cleanup()

    def __enter__(self) -> EmbeddedExplorer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def envelope(status: str, result: JsonReadable, message: str | None = None) -> bytes:
    body = {"status": status, "message": message or ("OK" if status == "1" else "NOTOK"), "result": result}
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def answer(service: ExplorerService, params: dict[str, str], method: str) -> Answer:
    """One contract API request (its query and form fields merged) as (status, result)."""
    try:
        module, action = ((params.get(name) or "").strip() for name in ("module", "action"))
        if module != "contract":
            problem = f"{forms.clip(module)!r} is not served here" if module else "is missing"
            raise InvalidRequest("module", problem, "send module=contract")
        if action not in HANDLERS:
            problem = f"{forms.clip(action)!r} is not an action of module=contract" if action else "is missing"
            raise InvalidRequest("action", problem, f"use one of {', '.join(HANDLERS)}")
        asked = (params.get("chainid") or "").strip()
        if asked and asked != str(served := service.chain_id()):
            raise InvalidRequest(
                "chainid",
                f"this explorer serves chainid {served}, got {forms.clip(asked)!r}",
                f"send chainid={served}, or leave it out",
            )
        return HANDLERS[action](service, params, method)
    except InvalidRequest as err:  # a parameter's value: the protocol's own words, then param and fix
        return "0", forms.refusal_text(err)
    except BadRequest as err:
        return "0", str(err)


def code_at(service: ExplorerService, address: str) -> bytes:
    try:
        return hex_to_bytes(service.chain.get_code(address))
    except Exception as err:
        raise ChainUnreadable(f"The explorer could not read the chain: {type(err).__name__}: {err}")


def verified_in_full(service: ExplorerService, address: str, code: bytes) -> bool:
    """Whether a full match is stored for this code, so a submission of either face is refused."""
    existing = current_contract(service.store, address, code)
    return existing is not None and existing.match == "full"


def _submission(service: ExplorerService, params: dict[str, str], method: str, action: str) -> None:
    """A submission is a POST with an accepted key."""
    if method != "POST":
        raise BadRequest(f"{action} must be sent as a POST with form fields; GET is not supported for submissions.")
    service.require_key(params)


def _deployed(service: ExplorerService, address: str) -> bytes:
    """The code at `address`: a submission for an address without code is refused."""
    if not (code := code_at(service, address)):
        raise BadRequest(Texts.UNABLE_TO_LOCATE.format(address=address))
    return code


def _queued(service: ExplorerService, kind: str, address: str, payload: JsonObject) -> Answer:
    guid = service.store.add_submission(kind, address, payload)
    service.notify()
    return "1", guid


# -- actions ---------------------------------------------------------------------------------


def getabi(service: ExplorerService, params: dict[str, str], method: str) -> Answer:
    abi = service.store.get_abi(forms.validate_read_form(params).lower())
    return ("0", Texts.NOT_VERIFIED) if abi is None else ("1", abi)


def getsourcecode(service: ExplorerService, params: dict[str, str], method: str) -> Answer:
    return "1", [source_result(service.store, forms.validate_read_form(params).lower())]


def verifysourcecode(service: ExplorerService, params: dict[str, str], method: str) -> Answer:
    _submission(service, params, method, "verifysourcecode")
    request = verification_request(params)
    if verified_in_full(service, request.address, _deployed(service, request.address)):
        raise BadRequest(Texts.SOURCE_ALREADY_VERIFIED)
    return _queued(service, SOURCE, request.address, request_to_payload(request))


def _check(service: ExplorerService, params: dict[str, str], method: str, *, kind: str) -> Answer:
    """checkverifystatus (`kind` SOURCE) and checkproxyverification (PROXY): one lookup, each with its own texts."""
    submission = service.store.get_submission(forms.validate_guid(params.get("guid")))
    if submission is None:
        return "0", Texts.UNKNOWN_UID
    if submission.kind != kind:
        other = (
            "a proxy submission; use checkproxyverification"
            if kind == SOURCE
            else "a source code submission; use checkverifystatus"
        )
        return "0", f"{Texts.UNKNOWN_UID} (this guid is {other})"
    if submission.state != "done":
        return "0", Texts.PENDING if kind == SOURCE else Texts.PROXY_IN_PROGRESS
    return submission.status or "0", submission.result or ""


def verifyproxycontract(service: ExplorerService, params: dict[str, str], method: str) -> Answer:
    _submission(service, params, method, "verifyproxycontract")
    checked = forms.validate_proxy_form(params)
    address, expected = checked["address"].lower(), checked.get("expectedimplementation", "").lower()
    _deployed(service, address)
    if not service.store.take_proxy_quota(params.get("apikey") or None, limit=service.proxy_daily_limit):
        raise BadRequest(
            f"Max daily proxy verification submissions reached ({service.proxy_daily_limit} a day per API key); "
            "try again after 00:00 UTC."
        )
    return _queued(service, PROXY, address, {"expected_implementation": expected})


def getcontractcreation(service: ExplorerService, params: dict[str, str], method: str) -> Answer:
    found = []
    for address in (address.lower() for address in forms.validate_creation_form(params)):
        try:
            creation = service.chain.find_creation(address)
        except Exception as err:
            raise BadRequest(f"The explorer could not find the creation of {address}: {type(err).__name__}: {err}")
        if creation is not None:
            found.append(
                {
                    "contractAddress": checksum(address),
                    "contractCreator": creation.deployer,
                    "txHash": creation.tx_hash,
                    "blockNumber": str(creation.block or ""),
                    "contractFactory": (creation.creator or "") if creation.factory else "",
                    # Etherscan API V2 gives the creation input (init code + constructor arguments):
                    # what a verifier without traces needs for a factory's child.
                    "creationBytecode": "0x" + bytes(creation.input).hex() if creation.input else "",
                }
            )
    return ("1", found) if found else ("0", "No data found")


HANDLERS: dict[str, Callable[[ExplorerService, dict[str, str], str], Answer]] = {
    "getabi": getabi,
    "getsourcecode": getsourcecode,
    "verifysourcecode": verifysourcecode,
    "checkverifystatus": partial(_check, kind=SOURCE),
    "verifyproxycontract": verifyproxycontract,
    "checkproxyverification": partial(_check, kind=PROXY),
    "getcontractcreation": getcontractcreation,
}


# -- getsourcecode's result object in Etherscan's layout, from what the store holds ----------


# Etherscan's fields, empty but for these three.
_FIELDS = "SourceCode ABI ContractName CompilerVersion OptimizationUsed Runs ConstructorArguments EVMVersion Library"
UNVERIFIED_SOURCE = {
    **dict.fromkeys(f"{_FIELDS} LicenseType Proxy Implementation SwarmSource".split(), ""),
    **{"ABI": Texts.NOT_VERIFIED, "LicenseType": "Unknown", "Proxy": "0"},
}


def source_entry(contract: VerifiedContract, proxy_implementation: str | None) -> dict[str, str]:
    """One getsourcecode result object in Etherscan's layout: every value a string."""
    from ape_contract_verify.protocol.licenses import code_from_source, license_name

    settings = contract.input_settings()
    source_code = contract.source_code
    if contract.code_format != CodeFormat.SINGLE_FILE.value:
        source_code = "{" + source_code + "}"  # Etherscan's {{…}} for JSON inputs
    optimizer = as_object(settings.get("optimizer"))
    if contract.compiler_version.startswith("vyper:"):
        # Vyper has modes, not runs: optimize gas (the default) or codesize counts as on.
        optimization_used = "0" if str(settings.get("optimize", "gas")).lower() in ("none", "false") else "1"
        runs = "0"
    else:
        optimization_used = "1" if optimizer.get("enabled") else "0"
        runs = str(optimizer.get("runs", 200))
    license_code = contract.license_type or code_from_source(contract.source_code)
    implementation = checksum(proxy_implementation) if proxy_implementation else ""
    return {
        "SourceCode": source_code,
        "ABI": contract.abi,
        "ContractName": contract.contract_name.rsplit(":", 1)[-1],
        "CompilerVersion": contract.compiler_version,
        "OptimizationUsed": optimization_used,
        "Runs": runs,
        "ConstructorArguments": contract.constructor_arguments,
        "EVMVersion": str(settings.get("evmVersion") or "Default"),
        "Library": ";".join(f"{name}:{address}" for name, address in sorted(contract.libraries.items())),
        "LicenseType": license_name(license_code),
        "Proxy": "1" if implementation else "0",
        "Implementation": implementation,
        "SwarmSource": "",
        # Our own additions: how the code matched, and in which form the source was sent.
        "MatchType": contract.match,
        "CodeFormat": contract.code_format,
    }


def source_result(store: Store, address: str) -> dict[str, str]:
    """getsourcecode's one result object for `address`.

    A proxy linked by verifyproxycontract whose own source is not verified (an EIP-1167 clone has
    none to verify) answers as Blockscout does for minimal proxies: the implementation's source
    and ABI, with `Proxy` "1" and its `Implementation`. Constructor arguments are the address's
    own, so a proxy that was not verified itself shows none."""
    contract = store.get_contract(address)
    proxy = store.get_proxy(address)
    if contract is not None:
        return source_entry(contract, proxy.implementation if proxy else None)
    if proxy is None:
        return dict(UNVERIFIED_SOURCE)
    implementation = store.get_contract(proxy.implementation)
    if implementation is None:  # the link is known, the code behind it is not
        return {**UNVERIFIED_SOURCE, "Proxy": "1", "Implementation": checksum(proxy.implementation)}
    entry = source_entry(implementation, proxy.implementation)
    entry["ConstructorArguments"] = ""
    entry["MatchType"] = "proxy"  # ours: the address's code was not compared, only linked
    return entry


# -- the form, as the store keeps it (addresses lowercase) -------------------------------------


def verification_request(params: dict[str, str]) -> VerificationRequest:
    """verifysourcecode's form as a VerificationRequest, by the client's own rules."""
    code_format = str(params.get("codeformat") or "").strip()
    if code_format in JSON_FORMATS and json_too_deep(str(params.get("sourceCode") or "")):
        raise InvalidRequest(
            "sourceCode",
            f"is JSON nested too deeply (over {MAX_JSON_DEPTH} levels)",
            "send the compiler's JSON input as is",
        )
    request = forms.form_to_request(params)
    return replace(request, address=request.address.lower())


MAX_JSON_DEPTH = 256  # a compiler input nests about 6 deep
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKETS = bytes(sorted(set(range(256)) - set(b"[]{}")))
_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}
_CHUNK = 1 << 20


def json_too_deep(text: str | bytes, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether JSON text nests arrays/objects deeper than `limit` (or leaves that many open), told
    before json.loads sees it: json recurses in C per level, and where a library has raised the
    recursion limit (py_ecc sets 100,000) deep input overflows the stack and kills the process."""
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    if data.count(b"[") + data.count(b"{") <= limit:  # the common case, at C speed
        return False
    brackets = _JSON_STRING.sub(b"", data).translate(None, _NOT_BRACKETS)  # brackets in strings do not nest
    depth = 0
    for start in range(0, len(brackets), _CHUNK):  # in chunks: other threads run between them
        *_, depth = steps = list(accumulate(map(_STEP.__getitem__, brackets[start : start + _CHUNK]), initial=depth))
        if max(steps) > limit:
            return True
    return False
