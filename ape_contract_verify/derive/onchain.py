"""What the chain holds for an address: its runtime code and the input that created it.

Read through the chain's reader or, when it cannot say (a factory's child on a node without
traces), from an explorer's record of the creation."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from ape_contract_verify.evm.reads import Creation, MemoizingChain, attempts_of

if TYPE_CHECKING:
    from ape_contract_verify.evm.reads import ChainReader


@dataclass
class OnChain:
    runtime: bytes
    creation_input: bytes | None
    tx_hash: str | None = None
    factory: bool = False
    source: str = ""  # which source gave creation_input: transaction, trace, fork replay, explorer record
    tried: list[str] = field(default_factory=list)  # the sources that could not, in words


class CreationRecordLike(Protocol):
    """An explorer's record of a creation (`client.provider.CreationRecord`, a layer beside this
    one): the creation input when it has one, else `note` says why not."""

    @property
    def input(self) -> bytes | None: ...
    @property
    def tx_hash(self) -> str | None: ...
    @property
    def factory(self) -> bool: ...
    @property
    def source(self) -> str: ...
    @property
    def note(self) -> str: ...


def chain_reader_or_provider(chain_reader: ChainReader | None = None) -> ChainReader:
    """The given reader, or one on the active Ape provider."""
    if chain_reader is not None:
        return chain_reader
    from ape import chain

    from ape_contract_verify.evm.chain import ApeProviderChain

    return ApeProviderChain(chain.provider)


def read_chain(
    address: str,
    chain_reader: ChainReader | None = None,
    creation_record: Callable[[str], CreationRecordLike | None] | None = None,
) -> OnChain:
    """Runtime code and the creation input, through the active Ape provider by default.

    The chain reader finds the creation (its transaction, the node's traces, or a replay on a
    fork); when it cannot, `creation_record(address)`, an explorer's record of the creation
    (`client.provider.CreationRecord`), is asked."""
    reader = chain_reader_or_provider(chain_reader)
    runtime = bytes(reader.get_code(address))
    creation = reader.find_creation(address) if runtime else None
    if creation is not None:
        source = creation.source or ("trace" if creation.factory else "transaction")
        return OnChain(runtime, bytes(creation.input), creation.tx_hash, creation.factory, source)
    tried = attempts_of(reader, address) if runtime else []
    if runtime and creation_record is not None:
        record = creation_record(address)
        if record is not None and record.input:
            return OnChain(runtime, bytes(record.input), record.tx_hash, record.factory, record.source, tried)
        tried.append(record.note if record is not None else "the explorer's record (none)")
    return OnChain(runtime=runtime, creation_input=None, tried=tried)


class KnownCreation(MemoizingChain):
    """A chain reader that knows one address's creation from elsewhere (an explorer's record);
    what else it is asked, its reader answers."""

    def __init__(self, reader: ChainReader, address: str, state: OnChain):
        super().__init__(reader)
        known = Creation(state.tx_hash or "", state.creation_input or b"", factory=state.factory, source=state.source)
        self.remember_creation(address, known)


def tx_hash_of(value: str | bytes | None) -> str | None:
    text = value if isinstance(value, str) else ("0x" + bytes(value).hex() if value else "")
    return text if len(text) == 66 and text[:2] == "0x" else None
