"""Pure functions on EVM bytecode: what explorers normalise before comparing, and the comparison.

Explorers ignore three things and nothing else: the CBOR metadata that compilers append (its
length sits in the last 2 bytes), immutable slots (zeros at compile time) and library link
positions (placeholders at compile time, whose on-chain addresses must equal the submitted
libraries). These functions know nothing about the service, so other checks reuse them.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeAlias, TypedDict, TypeGuard, Union

import cbor2

from ape_contract_verify.protocol.values import hex_to_bytes

Code = Union[bytes, bytearray, str]  # noqa: UP007 (a runtime alias, kept as Union)


# solc's `immutableReferences` ({ast id: [{start, length}]}) and `linkReferences`
# ({file: {library: [{start, length}]}}).
class CodeReference(TypedDict, total=False):
    start: int
    length: int


ImmutableReferences: TypeAlias = Mapping[str, Sequence[CodeReference]]
LinkReferences: TypeAlias = Mapping[str, Mapping[str, Sequence[CodeReference]]]
# What compiler metadata's CBOR holds (`_plain`): no floats, tags or simple values.
CborValue: TypeAlias = Union[int, str, bytes, bool, None, list["CborValue"], dict[str, "CborValue"]]  # noqa: UP007

# Keys that only compiler metadata CBOR carries; found anywhere, they anchor a segment.
_MARKERS = (b"\x64ipfs", b"\x65bzzr0", b"\x65bzzr1", b"\x64solc", b"\x65vyper", b"\x6cexperimental")
_SEARCH_BACK = 256


to_bytes = hex_to_bytes  # hex (placeholders zeroed) or bytes, as bytes


def to_hex(code: object) -> str:
    """Hex text, bytes or None (`to_bytes`'s) as 0x hex text."""
    return "0x" + to_bytes(code).hex()


DATA_CONTRACT = "a data contract (its code does nothing: run from its start, it halts at once): nothing to verify"

# What an instruction takes from the stack, for the opcodes a data contract's first bytes can run
# through without doing anything (PUSH, DUP and SWAP are counted apart).
_TAKES = {
    **dict.fromkeys((0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x0A, 0x0B), 2),
    **dict.fromkeys((0x08, 0x09), 3),
    **dict.fromkeys((0x10, 0x11, 0x12, 0x13, 0x14, 0x16, 0x17, 0x18, 0x1A, 0x1B, 0x1C, 0x1D, 0x20), 2),
    **dict.fromkeys((0x15, 0x19, 0x31, 0x35, 0x3B, 0x3F, 0x40, 0x49, 0x50, 0x51, 0x54, 0x5C), 1),
    **dict.fromkeys((0x30, 0x32, 0x33, 0x34, 0x36, 0x38, 0x3A, 0x3D, 0x41, 0x42, 0x43, 0x44), 0),
    **dict.fromkeys((0x45, 0x46, 0x47, 0x48, 0x4A, 0x58, 0x59, 0x5A, 0x5B), 0),
    **dict.fromkeys((0x37, 0x39, 0x3E, 0x5E), 3),
    0x3C: 4,
    **dict.fromkeys((0x52, 0x53), 2),
}
_GIVES_NOTHING = {0x37, 0x39, 0x3C, 0x3E, 0x50, 0x52, 0x53, 0x5B, 0x5E}
# Instructions that make code a program: control flow, state, logs, calls, creation, answers.
_ACTS = {0x55, 0x56, 0x57, 0x5D, *range(0xA0, 0xA5), 0xF0, 0xF1, 0xF2, 0xF3, 0xF4, 0xF5, 0xFA, 0xFD, 0xFF}


def is_data_contract(code: Code) -> bool:
    """Code that can do nothing: run from its first byte, it halts (STOP, INVALID, an undefined
    opcode, a stack underflow or its end) before any jump, store, log, call, creation, return or
    revert. Factories keep bytes as such code: SSTORE2 after a STOP, Balancer's CodeDeployer after
    an INVALID, a constructor that returns raw bytes. Compiled code always reaches a jump or a
    revert first; an ERC-5202 blueprint (`0xFE71…`) is compiled creation code, verified as such."""
    from ape_contract_verify.evm.blueprint import is_blueprint

    data = to_bytes(code)
    if not data or is_blueprint(data):
        return False
    height = 0
    for op, pushed in instructions(data):
        if op in _ACTS:
            return False
        if pushed is not None:  # PUSH0-PUSH32
            height += 1
        elif 0x80 <= op <= 0x9F:  # DUPn needs n, SWAPn n + 1
            if height < (op - 0x7F if op < 0x90 else op - 0x8E):
                return True
            height += op < 0x90
        elif op in _TAKES:
            if height < _TAKES[op]:
                return True
            height += (0 if op in _GIVES_NOTHING else 1) - _TAKES[op]
        else:  # STOP, INVALID, an undefined opcode
            return True
    return True


# --- CBOR metadata ----------------------------------------------------------------------------


_MAX_DEPTH = 8  # metadata nests two levels; garbage that parses deeper is not metadata
_PLAIN = (int, str, bytes, bool, type(None))


def _plain(value: object, depth: int = 0) -> TypeGuard[CborValue]:
    """Only what compiler metadata holds: ints, strings, byte strings, arrays, maps with text keys,
    true/false/null. cbor2 also decodes floats, tags and simple values; here they mark garbage."""
    if depth > _MAX_DEPTH:
        return False
    if isinstance(value, list):
        return all(_plain(item, depth + 1) for item in value)
    if isinstance(value, dict):
        return all(isinstance(key, str) and _plain(item, depth + 1) for key, item in value.items())
    return isinstance(value, _PLAIN)


@dataclass(frozen=True)
class MetadataSegment:
    """A CBOR metadata blob at code[start:end], including its 2-byte length suffix."""

    start: int
    end: int
    value: CborValue

    @property
    def compiler(self) -> tuple[str, str] | None:
        """("solc", "0.8.26") or ("vyper", "0.4.3"), when the metadata records it."""
        mapping = self.value
        if isinstance(mapping, list):  # Vyper >= 0.3.10 wraps the map in an array
            mapping = next((item for item in mapping if isinstance(item, dict)), {})
        if not isinstance(mapping, dict):
            return None
        for name in ("solc", "vyper"):
            version = mapping.get(name)
            # solc's three bytes, Vyper's list of numbers, or text
            if (isinstance(version, bytes) and len(version) == 3) or (
                isinstance(version, list) and all(isinstance(v, int) for v in version)
            ):
                return name, ".".join(map(str, version))
            if isinstance(version, str):
                return name, version
        return None


def _segment_at(code: bytes, start: int) -> MetadataSegment | None:
    """The blob whose CBOR item starts at code[start] (cbor2; what follows it is ignored), if any."""
    if start >= len(code) or code[start] >> 5 not in (4, 5):  # metadata is a map (Vyper's: an array)
        return None
    stream = io.BytesIO(code)  # shares `code`'s buffer: no copy per try
    stream.seek(start)
    try:
        value: object = cbor2.CBORDecoder(stream).decode()  # reads one byte at a time: tell() is the item's end
    except (cbor2.CBORDecodeError, ValueError, OverflowError, RecursionError):
        return None
    end = stream.tell()
    if not isinstance(value, (dict, list)) or not _plain(value) or end + 2 > len(code):
        return None
    # Solidity counts the CBOR bytes; Vyper >= 0.3.10 also counts the 2 length bytes.
    if int.from_bytes(code[end : end + 2], "big") not in (end - start, end - start + 2):
        return None
    return MetadataSegment(start, end + 2, value)


def metadata_segments(code: Code) -> list[MetadataSegment]:
    """Every compiler metadata blob in `code`: the tail, and those of embedded creation codes."""
    data = to_bytes(code)
    found: dict[int, MetadataSegment] = {}
    for marker in _MARKERS:
        index = data.find(marker)
        while index >= 0:
            # The blob starts a little before its first key; the longest valid parse wins.
            for start in range(max(0, index - _SEARCH_BACK), index):
                segment = _segment_at(data, start)
                if segment and segment.end > index:
                    found.setdefault(segment.start, segment)
                    break
            index = data.find(marker, index + 1)
    merged: list[MetadataSegment] = []
    for segment in sorted(found.values(), key=lambda s: s.start):
        if not merged or segment.start >= merged[-1].end:  # a nested blob inside a larger one is part of it
            merged.append(segment)
    return merged


def tail_metadata(code: Code) -> MetadataSegment | None:
    """The CBOR blob at the very end of `code` (length in the last 2 bytes), if any."""
    data = to_bytes(code)
    if len(data) < 2:
        return None
    length = int.from_bytes(data[-2:], "big")
    for start in (len(data) - 2 - length, len(data) - length):
        if length and start >= 0:
            segment = _segment_at(data, start)
            if segment and segment.end == len(data):
                return segment
    return None


def strip_metadata(code: Code) -> bytes:
    """`code` without its trailing CBOR metadata (unchanged when there is none)."""
    data = to_bytes(code)
    segment = tail_metadata(data)
    return data[: segment.start] if segment else data


def vyper_immutables(creation: Code, runtime: Code) -> int:
    """What Vyper appends to the runtime on chain: the size in the initcode's metadata (>= 0.3.10,
    the last of its integers, after the runtime's size), else what its deploy sequence returns
    beyond the runtime (0.3.x has no such metadata: `vyper_deploy_immutables`)."""
    segment = tail_metadata(creation)
    items = segment.value if segment and isinstance(segment.value, list) else []
    ints = [item for item in items if isinstance(item, int)]
    sizes = next((item for item in items if isinstance(item, list)), [])
    if len(ints) >= 2 and all(isinstance(size, int) for size in sizes):  # a data section's size is a number
        return ints[-1]
    return vyper_deploy_immutables(creation, runtime) or 0


_PUSH0, _PUSH1, _PUSH32, _CODECOPY, _RETURN = 0x5F, 0x60, 0x7F, 0x39, 0xF3


def instructions(code: bytes, stop: int | None = None) -> Iterator[tuple[int, int | None]]:
    """(opcode, pushed value or None) of each instruction before `stop` (the end): PUSH data is
    never read as opcodes."""
    pos, stop = 0, len(code) if stop is None else stop
    while pos < stop:
        op = code[pos]
        if _PUSH1 <= op <= _PUSH32:
            size = op - _PUSH1 + 1
            yield op, int.from_bytes(code[pos + 1 : pos + 1 + size], "big")
            pos += 1 + size
        else:
            yield op, 0 if op == _PUSH0 else None
            pos += 1


def vyper_deploy_immutables(creation: Code, runtime: Code) -> int | None:
    """The immutables' size that a Vyper initcode appends to `runtime`, from its deploy sequence.

    Vyper < 0.3.10 records it nowhere else (vyper-json gives no layout): the constructor ends with
    `PUSH len(runtime) PUSH begin PUSH mem CODECOPY PUSH len(runtime)+immutables PUSH mem RETURN`,
    and creation[begin:begin+len(runtime)] is `runtime`. None unless exactly one such sequence.
    """
    code, body = to_bytes(creation), to_bytes(runtime)
    begin = code.find(body) if body else -1
    if begin < 0:
        return None
    found: set[int] = set()
    ops = list(instructions(code, begin))
    for window in zip(*(ops[i:] for i in range(7))):  # each run of 7 instructions
        (_, size), (_, start), (_, mem), (copy, _), (_, total), (_, mem2), (ret, _) = window
        if copy != _CODECOPY or ret != _RETURN:
            continue
        if size is None or start is None or mem is None or total is None or mem2 is None:
            continue
        if size == len(body) and mem == mem2 and total >= size and code[start : start + size] == body:
            found.add(total - size)
    return found.pop() if len(found) == 1 else None


# --- immutables and libraries -----------------------------------------------------------------


def immutable_ranges(immutable_references: ImmutableReferences | None) -> list[tuple[int, int]]:
    """(start, length) of every immutable slot, from solc's `immutableReferences`."""
    refs = [ref for refs in (immutable_references or {}).values() for ref in refs]
    return sorted((int(ref["start"]), int(ref["length"])) for ref in refs)


@dataclass(frozen=True)
class LinkPosition:
    file: str
    library: str
    start: int
    length: int = 20


def link_positions(link_references: LinkReferences | None) -> list[LinkPosition]:
    """Every library placeholder, from solc's `linkReferences` ({file: {lib: [{start, length}]}})."""
    positions = []
    for file, libraries in (link_references or {}).items():
        for library, refs in libraries.items():
            for ref in refs:
                positions.append(LinkPosition(file, library, int(ref["start"]), int(ref.get("length", 20))))
    return sorted(positions, key=lambda p: p.start)


def masked_ranges(
    immutable_references: ImmutableReferences | None, link_references: LinkReferences | None
) -> list[tuple[int, int]]:
    """(start, length) of what a comparison zeroes in both codes: the immutables and the library links."""
    return immutable_ranges(immutable_references) + [(p.start, p.length) for p in link_positions(link_references)]


def zero_ranges(code: Code, ranges: Iterable[tuple[int, int]]) -> bytes:
    data = bytearray(to_bytes(code))
    for start, length in ranges:
        end = min(start + length, len(data))
        if start < end:
            data[start:end] = bytes(end - start)
    return bytes(data)


def link_addresses_all(code: Code, link_references: LinkReferences | None) -> dict[str, list[str]]:
    """{library: [0x-address, …]} found at the link positions of on-chain `code`, each address once."""
    data = to_bytes(code)
    found: dict[str, list[str]] = {}
    for position in link_positions(link_references):
        chunk = data[position.start : position.start + position.length]
        if len(chunk) == position.length:
            addresses = found.setdefault(position.library, [])
            if "0x" + chunk.hex() not in addresses:
                addresses.append("0x" + chunk.hex())
    return found


# --- comparison -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Comparison:
    """`match` is "full" (identical), "partial" (only metadata differs) or None (mismatch).

    `offset` is the first differing byte outside the metadata (None when they match).
    """

    match: str | None
    offset: int | None = None
    expected_length: int = 0
    metadata_differs: bool = False

    @property
    def matches(self) -> bool:
        return self.match is not None


def _first_difference(a: bytes, b: bytes, masked: list[tuple[int, int]]) -> int | None:
    skipped = {index for start, end in masked for index in range(start, end)}
    differing = (i for i in range(min(len(a), len(b))) if a[i] != b[i] and i not in skipped)
    return next(differing, None if len(a) == len(b) else min(len(a), len(b)))


def compare(
    expected: Code,
    actual: Code,
    *,
    immutable_references: ImmutableReferences | None = None,
    link_references: LinkReferences | None = None,
    trailing_immutables: int = 0,
) -> Comparison:
    """Compare compiled code with on-chain code, normalising only metadata, immutables and links.

    `immutable_references`/`link_references` are solc's outputs for `expected`; their positions are
    zeroed in both. `trailing_immutables` is Vyper's immutables section appended to the runtime on
    chain (its length comes from the initcode's metadata).
    """
    exp = library_guard(to_bytes(expected), to_bytes(actual))
    act = to_bytes(actual)
    if trailing_immutables and len(act) == len(exp) + trailing_immutables:
        act = act[: len(exp)]
    ranges = masked_ranges(immutable_references, link_references)
    exp = zero_ranges(exp, ranges)
    act = zero_ranges(act, ranges)
    if exp == act:
        return Comparison("full", None, len(exp))
    segments = [(s.start, s.end) for s in metadata_segments(exp)]
    offset = _first_difference(exp, act, segments)
    if offset is None:
        return Comparison("partial", None, len(exp), metadata_differs=True)
    raw_offset = _first_difference(exp, act, [])
    metadata_first = raw_offset is not None and raw_offset != offset
    return Comparison(None, offset, len(exp), metadata_differs=metadata_first)


def library_guard(expected: bytes, actual: bytes) -> bytes:
    """A library's runtime starts with PUSH20 <its own address>: zeros at compile time, filled in
    at deployment (the guard against state-changing calls). Take the chain's address there."""
    if expected[:1] == b"\x73" and expected[1:21] == bytes(20) and actual[:1] == b"\x73" and len(actual) >= 21:
        return expected[:1] + actual[1:21] + expected[21:]
    return expected


def split_constructor_args(creation_input: Code, compiled_creation: Code) -> str:
    """The constructor arguments (hex, no 0x) after the creation code in a deployment's input.

    Metadata hashes have a fixed size, so the compiled code's length locates the arguments even
    when only the metadata differs.
    """
    data = to_bytes(creation_input)
    length = len(to_bytes(compiled_creation))
    return data[length:].hex() if len(data) >= length else ""


def find_address(code: Code, address: str) -> list[int]:
    """Byte offsets where the 20-byte `address` occurs in `code`."""
    data = to_bytes(code)
    needle = bytes.fromhex(address.lower().removeprefix("0x").rjust(40, "0"))
    positions, index = [], data.find(needle)
    while index >= 0:
        positions.append(index)
        index = data.find(needle, index + 1)
    return positions
