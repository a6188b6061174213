"""Solidity source text as the flattener reads it, at file level; no flat file is built here.

A file-level scanner (imports, pragmas, SPDX lines, declarations) and solc's version-range
semantics for merging `pragma solidity` lines. `derive/flatten.py` builds the flat file from it."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache

from ape_contract_verify.exceptions import ContractVerifyError


class FlattenError(ContractVerifyError, ValueError):
    """The sources cannot be flattened into a file that compiles to the same code."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


# ----------------------------------------------------------------------------------------------
# Scanning. A fast scan finds what matters at file level (comments, strings, braces, keywords);
# a full tokenizer is used only for import statements and for files that use aliases.

_IDENT = r"[A-Za-z_$][A-Za-z0-9_$]*"
_STRING = r""""(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'"""
DECL_KW = ("contract", "interface", "library", "struct", "enum", "type", "error", "event", "function")
# Comments, strings and braces: everything else is code, and only code at brace depth 0 matters here.
_SKIP = re.compile(rf"""//[^\n]*|/\*.*?\*/|{_STRING}|[{{}}]""", re.S)
_KEYWORDS = "|".join(("import", "pragma", "constant") + DECL_KW)
_KEYWORD = re.compile(rf"(?<![A-Za-z0-9_$])(?:{_KEYWORDS})(?![A-Za-z0-9_$])")
_TOKEN = re.compile(
    rf"""(?P<ws>\s+)|(?P<c>//[^\n]*|/\*.*?\*/)|(?P<s>{_STRING})|(?P<id>{_IDENT})"""
    r"""|(?P<num>[0-9][A-Za-z0-9_.]*)|(?P<p>.)""",
    re.S,
)
_BRACES = {"{": 1, "}": -1}
_NAME_AFTER = re.compile(rf"(?:\s+|//[^\n]*|/\*.*?\*/)*({_IDENT})", re.S)
# solc's own pattern (Parser::findLicenseString); it searches the text between top-level nodes.
_SPDX = re.compile(r"SPDX-License-Identifier:\s*(.+?)(?=[\n\r]|\*/|$)", re.S)
INHERITDOC = re.compile(rf"(@inheritdoc\s+)({_IDENT}(?:\s*\.\s*{_IDENT})*)")


@dataclass(frozen=True)
class Token:
    kind: str  # c (comment), s (string), id, num, p (punctuation)
    text: str
    start: int
    end: int
    depth: int  # brace depth before the token


def tokenize(text: str, pos: int = 0, endpos: int | None = None) -> Iterator[Token]:
    depth = 0
    for m in _TOKEN.finditer(text, pos, len(text) if endpos is None else endpos):
        kind = m.lastgroup or ""  # every alternative of _TOKEN is a named group
        if kind == "ws":
            continue
        tok = Token(kind, m.group(), m.start(), m.end(), depth)
        depth += _BRACES.get(tok.text, 0)  # only punctuation is a lone brace
        yield tok


def _statement(text: str, start: int, name: str) -> tuple[list[Token], int]:
    """The tokens of the statement at ``start`` (comments dropped) and the offset after its ``;``."""
    toks: list[Token] = []
    for tok in tokenize(text, start):
        if tok.kind == "c":
            continue
        if tok.text == ";":
            return toks, tok.end
        toks.append(tok)
    line = text.count("\n", 0, start) + 1
    raise FlattenError(f"{name} line {line}: `{text[start : start + 40].split(chr(10))[0]}…` has no closing ';'")


def _unquote(literal: str) -> str:
    return re.sub(r"\\(.)", r"\1", literal[1:-1])


@dataclass
class ImportDirective:
    start: int
    end: int
    path: str
    statement: str
    unit_alias: str | None = None
    symbols: list[tuple[str, str]] = field(default_factory=list)  # (name, alias)


@dataclass
class _Pragma:
    start: int
    end: int
    name: str  # solidity, abicoder, experimental, ...
    value: str  # the text after the name, whitespace normalised


@dataclass
class SourceUnit:
    """What a source unit contributes to the flat file, and the edits that remove it."""

    text: str
    imports: list[ImportDirective]
    pragmas: list[_Pragma]
    licenses: list[str]
    spdx_edits: list[tuple[int, int, str]]
    declarations: list[tuple[str, str, int]]  # (keyword, name, offset after the name) at file level


# An import statement's forms, on its tokens joined by newlines (no string holds one).
_SYMBOL = rf"({_IDENT})(?:\nas\n({_IDENT}))?"
_IMPORT_FORMS = [
    re.compile(form.replace(" ", r"\n"), re.S)
    for form in (
        rf"(?P<path>{_STRING})(?: as (?P<alias>{_IDENT}))?",
        rf"\* as (?P<alias>{_IDENT}) from (?P<path>{_STRING})",
        rf"\{{ (?P<symbols>(?:{_IDENT}(?: as {_IDENT})? , )*(?:{_IDENT}(?: as {_IDENT})? )?)\}} from (?P<path>{_STRING})",
    )
]


def _parse_import(text: str, start: int, name: str) -> ImportDirective:
    toks, end = _statement(text, start, name)
    statement = text[start:end]
    for form in _IMPORT_FORMS:
        if found := form.fullmatch("\n".join(tok.text for tok in toks[1:])):
            parts = found.groupdict()
            symbols = [(sym, alias or sym) for sym, alias in re.findall(_SYMBOL, parts.get("symbols") or "")]
            return ImportDirective(start, end, _unquote(parts["path"]), statement, parts.get("alias"), symbols)
    raise FlattenError(f"{name}: cannot parse the import statement `{statement}`")


def _spdx_edit(comment: str, start: int) -> tuple[list[str], tuple[int, int, str] | None]:
    found = list(_SPDX.finditer(comment))
    if not found:
        return [], None
    licenses = [m.group(1).strip() for m in found]
    rest = _SPDX.sub("", comment)
    bare = rest[2:-2] if rest.startswith("/*") else rest[2:]
    return licenses, (start, start + len(comment), rest if bare.strip(" \t/*") else "")


@lru_cache(maxsize=1024)
def analyse(text: str, name: str) -> SourceUnit:
    unit = SourceUnit(text, [], [], [], [], [])
    depth = 0
    pos = 0  # the end of the last comment, string or brace
    resume = 0  # the end of the last statement parsed, so its parts are not read twice
    for m in _SKIP.finditer(text):
        start = m.start()
        if depth == 0 and start > pos and start > resume:
            resume = max(resume, _file_level_code(unit, name, max(pos, resume), start))
        first = text[start]
        depth += _BRACES.get(first, 0)
        if first == "/" and depth == 0 and start >= resume:
            found, edit = _spdx_edit(m.group(), start)
            unit.licenses.extend(found)
            if edit:
                unit.spdx_edits.append(edit)
        pos = m.end()
    if depth == 0 and len(text) > max(pos, resume):
        _file_level_code(unit, name, max(pos, resume), len(text))
    return unit


def _file_level_code(unit: SourceUnit, name: str, start: int, end: int) -> int:
    """Record the imports, pragmas and declarations in text[start:end]; return where parsing got to."""
    text = unit.text
    resume = start
    for m in _KEYWORD.finditer(text, start, end):
        if m.start() < resume:
            continue
        kw = m.group()
        if kw == "import":
            imp = _parse_import(text, m.start(), name)
            unit.imports.append(imp)
            resume = imp.end
        elif kw == "pragma":
            toks, stmt_end = _statement(text, m.start(), name)
            if len(toks) < 2:
                raise FlattenError(f"{name}: cannot parse `{text[m.start() : stmt_end]}`")
            value = " ".join(text[toks[2].start : toks[-1].end].split()) if len(toks) > 2 else ""
            unit.pragmas.append(_Pragma(m.start(), stmt_end, toks[1].text, value))
            resume = stmt_end
        elif after := _NAME_AFTER.match(text, m.end()):
            unit.declarations.append((kw, after.group(1), after.end()))
    return resume


# ----------------------------------------------------------------------------------------------
# Version ranges: solc's SemVerMatcher semantics, as unions of half-open intervals.

_Version = tuple[int, int, int]
_RANGE_TOKEN = re.compile(r"\s*(\|\||>=|<=|[<>=^~]|-(?=\s)|[0-9xX*]+(?:\.[0-9xX*]+){0,2})")
_OPERATORS = (">=", "<=", "<", ">", "=", "^", "~")


def _padded(nums: list[int]) -> _Version:
    """`[0, 8]` as `(0, 8, 0)`: a version of one to three numbers, zeros after."""
    full = [*nums[:3], 0, 0, 0]
    return full[0], full[1], full[2]


def _bump(nums: list[int], levels: int) -> _Version:
    head = nums[:levels]
    head[-1] += 1
    return _padded(head)


class VersionRange:
    """A union of [low, high) intervals of compiler versions (high None: unbounded)."""

    def __init__(self, intervals: Iterable[tuple[_Version, _Version | None]]):
        merged: list[tuple[_Version, _Version | None]] = []
        for lo, hi in sorted(i for i in intervals if i[1] is None or i[0] < i[1]):
            if merged and (merged[-1][1] is None or lo <= merged[-1][1]):
                plo, phi = merged[-1]
                merged[-1] = (plo, None if phi is None or hi is None else max(phi, hi))
            else:
                merged.append((lo, hi))
        self.intervals = merged

    @classmethod
    def parse(cls, text: str) -> VersionRange:
        tokens, pos = [], 0
        text = text.strip()
        while pos < len(text):
            m = _RANGE_TOKEN.match(text, pos)
            if not m:
                raise FlattenError(f"cannot parse the version range {text!r} near {text[pos:]!r}")
            tokens.append(m.group(1))
            pos = m.end()
        return cls(cls._conjunction(part.split(), text) for part in " ".join(tokens).split("||"))

    @staticmethod
    def _conjunction(tokens: list[str], text: str) -> tuple[_Version, _Version | None]:
        lo: _Version = (0, 0, 0)
        hi: _Version | None = None  # unbounded

        def version(tok: str) -> list[int]:
            nums = []
            for part in tok.split("."):
                if part in ("x", "X", "*"):
                    break
                if not part.isdigit():
                    raise FlattenError(f"cannot parse the version {tok!r} in {text!r}")
                nums.append(int(part))
            return nums

        def cap(new_lo: _Version | None, new_hi: _Version | None) -> None:
            nonlocal lo, hi
            if new_lo is not None:
                lo = max(lo, new_lo)
            if new_hi is not None:
                hi = new_hi if hi is None else min(hi, new_hi)

        i = 0
        while i < len(tokens):
            op = tokens[i] if tokens[i] in _OPERATORS else "="
            if tokens[i] in _OPERATORS:
                i += 1
                if i >= len(tokens):
                    raise FlattenError(f"version range {text!r} ends with {op!r}")
            nums = version(tokens[i])
            if op == "=" and i + 2 < len(tokens) and tokens[i + 1] == "-":  # a hyphen range, `1.0 - 2.0`
                upper = version(tokens[i + 2])
                cap(_padded(nums), _bump(upper, len(upper)) if upper else None)
                i += 3
                continue
            i += 1
            n, padded = len(nums), _padded(nums)
            if n == 0:  # a wildcard: every comparison but < and > matches
                cap(None, (0, 0, 0) if op in ("<", ">") else None)
                continue
            cap(
                *{
                    ">=": (padded, None),
                    ">": (_bump(nums, n), None),
                    "<=": (None, _bump(nums, n)),
                    "<": (None, padded),
                    "=": (padded, _bump(nums, n)),
                    "^": (padded, _bump(nums, 2 if nums[0] == 0 and n != 1 else 1)),
                    "~": (padded, _bump(nums, 2 if n >= 2 else 1)),
                }[op]
            )
        return lo, hi

    def __and__(self, other: VersionRange) -> VersionRange:
        out = []
        for alo, ahi in self.intervals:
            for blo, bhi in other.intervals:
                hi = bhi if ahi is None else ahi if bhi is None else min(ahi, bhi)
                out.append((max(alo, blo), hi))
        return VersionRange(out)

    def __bool__(self) -> bool:
        return bool(self.intervals)

    def __contains__(self, version: str) -> bool:
        # Semver, as solc's pragma check reads it (`+…` is build text, any): not CompilerVersion's spelling.
        v = tuple(int(x) for x in version.split("+")[0].split("."))
        return any(lo <= v and (hi is None or v < hi) for lo, hi in self.intervals)

    def __str__(self) -> str:
        def fmt(v: _Version) -> str:
            return ".".join(map(str, v))

        parts = []
        for lo, hi in self.intervals:
            if hi is None:
                parts.append(f">={fmt(lo)}")
            elif hi == (lo[0], lo[1], lo[2] + 1):
                parts.append(fmt(lo))
            elif (lo[0] > 0 and hi == (lo[0] + 1, 0, 0)) or (lo[0] == 0 < lo[1] and hi == (0, lo[1] + 1, 0)):
                parts.append(f"^{fmt(lo)}")
            elif lo == (0, 0, 0):
                parts.append(f"<{fmt(hi)}")
            else:
                parts.append(f">={fmt(lo)} <{fmt(hi)}")
        return " || ".join(parts)

    def __repr__(self) -> str:
        return f"VersionRange({str(self)!r})"
