"""An ABI entry's canonical types, signature, selector and event topic, written once.

On eth_utils' ABI helpers: the engine decodes constructor arguments with these types, the explorer's
forms encode calls and its transaction page names methods and events by these selectors.

Our own code here is only the tolerance compiler-free ABIs need (a missing `type` or `inputs`, a
tuple without `components`) and the signature's text: eth-utils' `abi_to_signature` is newer
than the floor this package shares with eth-ape (eth-utils 2.1).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from eth_utils.abi import collapse_if_tuple, event_signature_to_log_topic, function_signature_to_4byte_selector

from ape_contract_verify.json_types import JsonMapping


def abi_type(param: JsonMapping) -> str:
    """The canonical type, tuples spelt out with their array suffix: `(uint256,address)[]`."""
    kind = param.get("type")
    if not isinstance(kind, str) or (kind.startswith("tuple") and not param.get("components")):
        param = {**param, "type": "" if kind is None else str(kind), "components": param.get("components") or []}
    return collapse_if_tuple(param if isinstance(param, dict) else dict(param))


def signature(item: JsonMapping) -> str:
    """`name(type,…)` of a function, event or error entry."""
    inputs = item.get("inputs") or []
    params = [p for p in inputs if isinstance(p, Mapping)] if isinstance(inputs, Sequence) else []
    return f"{item.get('name', '')}({','.join(abi_type(p) for p in params)})"


def selector(item: JsonMapping) -> bytes:
    """A function's (or custom error's) 4-byte selector."""
    return function_signature_to_4byte_selector(signature(item))


def event_topic(item: JsonMapping) -> bytes:
    """An event's topic 0 (the keccak of its signature)."""
    return event_signature_to_log_topic(signature(item))
