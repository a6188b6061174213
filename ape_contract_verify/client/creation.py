"""An explorer's own record of a contract's creation: its creation code, where the node has none.

Explorers index every creation with their own tracers, so they know a factory's child's creation
code when a hosted node refuses traces: Etherscan API V2's `getcontractcreation` carries it as
`creationBytecode` (with `contractFactory` naming the factory), and so does Blockscout's
Etherscan-compatible one in recent versions; Blockscout's REST API has it as `creation_bytecode`
of `GET /api/v2/smart-contracts/{address}`. `explorer_record(client, name)` is what derive asks.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, runtime_checkable
from urllib.parse import urlsplit, urlunsplit

from ape_contract_verify.exceptions import ExplorerError
from ape_contract_verify.protocol.values import hex_to_bytes

if TYPE_CHECKING:
    import requests

    from ape_contract_verify.client.provider import VerificationTarget
    from ape_contract_verify.json_types import JsonMapping


@runtime_checkable
class KeepsCreations(Protocol):
    """A target with `getcontractcreation` (`client.etherscan.ExplorerClient`; Sourcify has none),
    and the HTTP session and base URL Blockscout's REST API is reached through."""

    base_url: str
    session: requests.Session
    timeout: float | tuple[float, float]

    def get_contract_creation(self, address: str) -> JsonMapping | None: ...


@dataclass(frozen=True)
class CreationRecord:
    """The creation input (init code + constructor arguments) an explorer recorded, or why not."""

    input: bytes | None = field(default=None, repr=False)
    tx_hash: str | None = None
    factory: bool = False
    source: str = ""  # e.g. "etherscan's creation record", for the summary and -v
    note: str = ""  # when `input` is None: what was asked, and its answer, in words


def _bytes(value: object) -> bytes | None:  # object: any JSON value; only a hex string is code
    if not isinstance(value, str) or not value.strip() or value.strip().lower() == "0x":
        return None
    try:
        return hex_to_bytes(value.strip())
    except ValueError:
        return None


def blockscout_rest_url(base_url: str, address: str) -> str | None:
    """`https://<instance>/api/v2/smart-contracts/{address}` for an instance's `…/api` base URL."""
    parts = urlsplit(base_url)
    path = parts.path.rstrip("/")
    if not path.endswith("/api"):
        return None
    return urlunsplit((parts.scheme, parts.netloc, f"{path}/v2/smart-contracts/{address}", "", ""))


def read_record(client: KeepsCreations, address: str, name: str, blockscout: bool = False) -> CreationRecord:
    """`client`'s record of `address`'s creation. `blockscout` also asks the instance's REST API
    when the Etherscan-style answer has no creation bytecode."""
    source = f"{name}'s creation record"
    try:
        entry = client.get_contract_creation(address)
    except ExplorerError as err:
        return CreationRecord(source=source, note=f"{source} ({err.reason or err})")
    if entry is not None:
        code = _bytes(entry.get("creationBytecode"))
        if code:
            factory = bool(str(entry.get("contractFactory") or "").strip())
            return CreationRecord(code, str(entry.get("txHash") or "") or None, factory, source)
    if blockscout:
        code = _blockscout_rest(client, address)
        if code:
            return CreationRecord(code, None, True, f"{name}'s creation bytecode (REST API)")
    what = "no record of it" if entry is None else "a record without creationBytecode"
    return CreationRecord(source=source, note=f"{source} ({what})")


def _blockscout_rest(client: KeepsCreations, address: str) -> bytes | None:
    url = blockscout_rest_url(client.base_url, address)
    if url is None:
        return None
    try:
        response = client.session.get(url, timeout=client.timeout)
        body = response.json() if response.status_code == 200 else {}
    except Exception:  # a REST API this instance may not have: the record stays unknown
        return None
    return _bytes(body.get("creation_bytecode")) if isinstance(body, dict) else None


def explorer_record(
    client: VerificationTarget, name: str, blockscout: bool = False
) -> Callable[[str], CreationRecord] | None:
    """What derive asks when the chain cannot give a creation; None for a client without the action
    (Sourcify's has none)."""
    if not isinstance(client, KeepsCreations):
        return None
    return lambda address: read_record(client, address, name, blockscout)
