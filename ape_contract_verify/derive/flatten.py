"""Flatten a Solidity source and its imports into one file (``solidity-single-file`` submissions).

The flat file must compile to the same code as the multi-file input, so this module only removes
what a single file cannot repeat (import statements, SPDX identifiers, pragmas) and rewrites
import aliases where that is provably safe. Everything else is copied byte for byte.
Import paths are resolved the way solc resolves them: relative to the importing unit's name,
then through the remappings (longest context, then longest prefix, last one wins).
The sources are read by a file-level scanner (imports, pragmas, SPDX lines, declarations), and
`pragma solidity` lines merged with solc's version-range semantics (`VersionRange`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
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


@dataclass(frozen=True)
class FlattenResult:
    source: str
    order: list[str]  # source unit names, dependencies first, the entry last
    license: str | None  # the combined SPDX expression, None when no file declares one
    pragma: str  # the merged `pragma solidity` range ("" when no file has one)


# ----------------------------------------------------------------------------------------------
# Import path resolution (solc's ImportRemapper and util::absolutePath)


@dataclass(frozen=True)
class Remapping:
    context: str
    prefix: str
    target: str


def parse_remapping(text: str) -> Remapping:
    """``[context:]prefix=target``, as solc parses it."""
    eq = text.find("=")
    if eq < 0:
        raise FlattenError(f"remapping {text!r} has no '=': write it as [context:]prefix=target")
    head, target = text[:eq], text[eq + 1 :]
    context, colon, prefix = head.partition(":")
    if not colon:
        context, prefix = "", head
    if not prefix:
        raise FlattenError(f"remapping {text!r} has an empty prefix: write it as [context:]prefix=target")
    return Remapping(context, prefix, target)


def _absolute_path(path: str, importer: str) -> str:
    segments = [s for s in path.split("/") if s]
    if not segments or segments[0] not in (".", ".."):
        return path  # only ./ and ../ imports are relative
    result = importer if importer == "/" else _parent(importer)
    for seg in segments:
        if seg == "..":
            result = _parent(result)
        elif seg != ".":
            result = seg if not result else f"{result}{seg}" if result.endswith("/") else f"{result}/{seg}"
    return result


def _parent(path: str) -> str:
    """boost::filesystem's parent_path: `a/b` -> `a`, `a` -> ``, `/a` -> `/`, `/` -> ``."""
    if path == "/":
        return ""
    cut = path.rstrip("/").rfind("/")
    if cut < 0:
        return ""
    return path[:cut].rstrip("/") or "/"


def resolve_import(path: str, importer: str, remappings: Sequence[Remapping | str] = ()) -> str:
    """The source unit name solc gives to ``import path`` written in the unit ``importer``."""
    resolved = _absolute_path(path, importer)
    best_context = best_prefix = -1
    target = None
    for r in remappings:
        r = parse_remapping(r) if isinstance(r, str) else r
        if len(r.context) < best_context or not importer.startswith(r.context):
            continue
        if len(r.prefix) < best_prefix and len(r.context) == best_context:
            continue
        if not resolved.startswith(r.prefix):
            continue
        best_context, best_prefix, target = len(r.context), len(r.prefix), r.target
    if target is None:
        return resolved
    return target + resolved[best_prefix:]


# ----------------------------------------------------------------------------------------------
# Dependency order


def _postorder(roots: Iterable[str], children: Callable[[str], Iterable[str]]) -> list[str]:
    """Every unit reachable from `roots`, each after its children (a cycle is cut where it is met).
    Iterative depth-first search: OpenZeppelin-sized graphs are deep enough to matter."""
    order: list[str] = []
    state: dict[str, int] = {}  # 1 = being visited, 2 = done
    for root in roots:
        if root in state:
            continue
        state[root] = 1
        stack = [(root, iter(children(root)))]
        while stack:
            unit, it = stack[-1]
            for child in it:
                if child not in state:
                    state[child] = 1
                    stack.append((child, iter(children(child))))
                    break
            else:
                stack.pop()
                state[unit] = 2
                order.append(unit)
    return order


def _import_order(
    roots: Iterable[str], known: dict[str, str], remappings: Sequence[str], read: Callable[[str], str | None] | None
) -> list[str]:
    """`roots` and what they import, transitively, dependencies first. Without `read` an import
    that is not `known` is a FlattenError; with it, it is read into `known` (None: not there, for
    the compile to report), and a file the scanner cannot read adds nothing."""
    remaps = [parse_remapping(r) for r in remappings]

    def imported(unit: str) -> list[str]:
        if unit not in known:
            if read is None or (text := read(unit)) is None:
                return []
            known[unit] = text
        try:
            deps = [(imp, resolve_import(imp.path, unit, remaps)) for imp in analyse(known[unit], unit).imports]
        except FlattenError:
            if read is None:
                raise
            return []
        for imp, dep in deps:
            if read is None and dep not in known:
                raise FlattenError(
                    f"{unit}: `{imp.statement}` resolves to {dep!r}, which is not among the sources"
                    " (add it, or pass the remapping that maps it)"
                )
        return [dep for _imp, dep in deps]

    return _postorder(roots, imported)


def collect_imports(entry: str, sources: Mapping[str, str], remappings: Sequence[str] = ()) -> list[str]:
    """``entry`` and every unit it imports, transitively: dependencies first, ``entry`` last."""
    if entry not in sources:
        raise FlattenError(f"entry {entry!r} is not among the sources; pass its source unit name")
    return _import_order([entry], dict(sources), remappings, None)


def missing_imports(
    sources: Mapping[str, str], remappings: Sequence[str], read: Callable[[str], str | None]
) -> dict[str, str]:
    """The files ``sources`` import, transitively, that they lack: {source unit name: text}, each
    import resolved as solc resolves it and read by ``read`` (None: not there, for the compile to
    report). A file the scanner cannot read, or remappings not in solc's form, add nothing."""
    known = dict(sources)
    try:
        _import_order(list(known), known, remappings, read)
    except FlattenError:  # remappings not in solc's form
        return {}
    return {unit: text for unit, text in known.items() if unit not in sources}


# ----------------------------------------------------------------------------------------------
# Alias rewriting

_USE_KW = frozenset("return emit new is using delete revert else do throw import from as override case".split())
_NAME_KW = frozenset(DECL_KW + ("modifier",))
_TOP_KW = _NAME_KW | {"constant"}


def _is_declaration(toks: list[Token], i: int) -> bool:
    """Conservative: could toks[i] be the name of a declaration (which would shadow a global)?"""
    prev = toks[i - 1] if i > 0 else None
    nxt = toks[i + 1] if i + 1 < len(toks) else None
    if prev is None:
        return False
    if prev.kind == "id" and prev.text in _NAME_KW:
        return True
    if (prev.kind == "id" and prev.text not in _USE_KW) or prev.text in ("]", ")"):
        return nxt is None or nxt.text not in ("(", ".")
    return False


class _Aliases:
    def __init__(self, units: dict[str, SourceUnit], order: list[str], declared_in: dict[str, set[str]]):
        self.units, self.order, self.declared_in = units, order, declared_in
        self._tokens: dict[str, list[Token]] = {}
        self._checked: set[str] = set()

    def tokens(self, name: str) -> list[Token]:
        if name not in self._tokens:
            self._tokens[name] = [t for t in tokenize(self.units[name].text) if t.kind != "c"]
        return self._tokens[name]

    def _require_global(self, global_name: str, file: str, imp: ImportDirective, what: str) -> None:
        """``global_name`` must mean the same declaration everywhere in the flat file."""
        if len(self.declared_in.get(global_name, ())) != 1:
            raise FlattenError(
                f"{file}: cannot flatten `{imp.statement}`: {what} refers to {global_name!r}, which is "
                "not a file-level declaration of the imported sources; import it by its own name instead"
            )
        if global_name in self._checked:
            return
        for unit in self.order:
            toks = self.tokens(unit)
            for i, tok in enumerate(toks):
                if tok.text != global_name or tok.kind != "id" or (i and toks[i - 1].text == "."):
                    continue
                top_level = tok.depth == 0 and i and toks[i - 1].text in _TOP_KW
                if not top_level and _is_declaration(toks, i):
                    line = self.units[unit].text.count("\n", 0, tok.start) + 1
                    raise FlattenError(
                        f"{file}: cannot flatten `{imp.statement}`: {global_name!r} is also declared in "
                        f"{unit} line {line}, so the rewritten reference could bind to that declaration; "
                        "rename one of them or submit standard-json"
                    )
        self._checked.add(global_name)

    def edits(self, file: str) -> list[tuple[int, int, str]]:
        unit = self.units[file]
        units = {imp.unit_alias: imp for imp in unit.imports if imp.unit_alias}
        renames = {alias: (sym, imp) for imp in unit.imports for sym, alias in imp.symbols if sym != alias}
        if not units and not renames:
            return []

        def rewrite(alias: str, start: int, member: str = "", member_start: int = 0) -> tuple[int, int, str]:
            """`Alias.member` as `member`, a renamed symbol as its own name: each a global's."""
            if alias in units:
                self._require_global(member, file, units[alias], f"{alias}.{member}")
                return start, member_start, ""
            sym, imp = renames[alias]
            self._require_global(sym, file, imp, f"the alias {alias!r}")
            return start, start + len(alias), sym

        toks = self.tokens(file)
        spans = [(imp.start, imp.end) for imp in unit.imports]
        out: list[tuple[int, int, str]] = []
        for i, tok in enumerate(toks):
            if tok.kind != "id" or (tok.text not in units and tok.text not in renames):
                continue
            if (i and toks[i - 1].text == ".") or any(s <= tok.start < e for s, e in spans):
                continue
            imp = units[tok.text] if tok.text in units else renames[tok.text][1]
            if _is_declaration(toks, i):
                raise FlattenError(
                    f"{file}: cannot flatten `{imp.statement}`: the alias {tok.text!r} is redeclared "
                    f"at line {unit.text.count(chr(10), 0, tok.start) + 1}"
                )
            if tok.text not in units:
                out.append(rewrite(tok.text, tok.start))
            elif i + 2 >= len(toks) or toks[i + 1].text != "." or toks[i + 2].kind != "id":
                raise FlattenError(
                    f"{file}: cannot flatten `{imp.statement}`: the unit alias {tok.text!r} is used "
                    f"without a member at line {unit.text.count(chr(10), 0, tok.start) + 1}"
                )
            else:
                out.append(rewrite(tok.text, tok.start, toks[i + 2].text, toks[i + 2].start))
        # NatSpec `@inheritdoc Name` is resolved by the compiler, so it must follow the rename.
        for tok in tokenize(unit.text):
            if tok.kind != "c" or not (tok.text.startswith("///") or tok.text.startswith("/**")):
                continue
            for m in INHERITDOC.finditer(tok.text):
                parts = [p.strip() for p in m.group(2).split(".")]
                start = tok.start + m.start(2)
                if parts[0] in units and len(parts) > 1:
                    member_at = tok.text.index(parts[1], m.start(2) + len(parts[0]))
                    out.append(rewrite(parts[0], start, parts[1], tok.start + member_at))
                elif parts[0] in renames:
                    out.append(rewrite(parts[0], start))
        return out


# ----------------------------------------------------------------------------------------------
# Assembly


def _line_span(text: str, start: int, end: int) -> tuple[int, int]:
    """Widen a removal to its whole line when nothing else is on that line."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line_end = len(text) if line_end < 0 else line_end
    if text[line_start:start].strip() or text[end:line_end].strip():
        return start, end
    return line_start, min(line_end + 1, len(text))


def _apply(text: str, edits: list[tuple[int, int, str]]) -> str:
    out, pos = [], 0
    for start, end, new in sorted(edits):
        out.append(text[pos:start])
        out.append(new)
        pos = end
    out.append(text[pos:])
    return "".join(out)


def _combine_licenses(per_file: list[str]) -> str | None:
    seen = list(dict.fromkeys(per_file))
    if not seen:
        return None
    if len(seen) == 1:
        return seen[0]
    # AND binds tighter than OR in SPDX expressions, so compound ones keep their meaning in brackets.
    return " AND ".join(f"({lic})" if re.search(r"\bOR\b", lic) and not lic.startswith("(") else lic for lic in seen)


_ABICODER_V2 = {("abicoder", "v2"), ("experimental", "ABIEncoderV2"), ("experimental", '"ABIEncoderV2"')}


def _merge_pragmas(order: list[str], units: dict[str, SourceUnit]) -> tuple[str, list[str]]:
    """The one `pragma solidity` range every file allows, and the other pragmas, each once."""
    ranges = [
        (n, VersionRange.parse(p.value), p.value) for n in order for p in units[n].pragmas if p.name == "solidity"
    ]
    merged: VersionRange | None = None
    for i, (name, rng, value) in enumerate(ranges):
        new = rng if merged is None else merged & rng
        if not new:
            culprit = next(((n, v) for n, r, v in ranges[:i] if not (r & rng)), None)
            if culprit:
                raise FlattenError(
                    f"pragma solidity ranges do not intersect: {name} requires {value!r} "
                    f"but {culprit[0]} requires {culprit[1]!r}"
                )
            raise FlattenError(
                f"pragma solidity ranges do not intersect: {name} requires {value!r}, which excludes "
                f"every version ({merged}) that the files before it allow"
            )
        merged = new
    if merged is None:
        pragma = ""
    elif len({v for _, _, v in ranges}) == 1:
        pragma = ranges[0][2]  # unchanged text reads best
    else:
        pragma = str(merged)

    # Other pragmas apply to their own file only; abicoder changes the code, so it must agree.
    others: list[str] = []
    coder: dict[str, str] = {}
    default = "v2" if merged is not None and merged.intervals[0][0] >= (0, 8, 0) else "default"
    for name in order:
        coder[name] = default
        for p in units[name].pragmas:
            line = f"pragma {p.name} {p.value};" if p.value else f"pragma {p.name};"
            if p.name == "abicoder" or (p.name, p.value) in _ABICODER_V2:
                coder[name] = "v2" if (p.name, p.value) in _ABICODER_V2 else p.value or default
                if not any(o.startswith("pragma abicoder") or "ABIEncoderV2" in o for o in others):
                    others.append(line)
            elif p.name != "solidity" and line not in others:
                others.append(line)
    if len(set(coder.values())) > 1:
        a = next(n for n in order if coder[n] != coder[order[-1]])
        raise FlattenError(
            f"{a} uses ABI coder {coder[a]} but {order[-1]} uses ABI coder {coder[order[-1]]}; "
            "one file cannot mix them, submit standard-json"
        )
    return pragma, others


def flatten(
    entry: str, sources: Mapping[str, str], remappings: Sequence[str] = (), layout: str = "imports"
) -> FlattenResult:
    """One source that compiles to the same code as ``entry`` with its imports (metadata aside).

    ``layout`` orders the files: "imports" depth-first along the import statements, "names" by
    source unit name as solc reads a standard-json input, each file after those that define its
    contracts' bases (one file needs nothing more: it may use a name declared further down).
    Legacy code generation does not care; via-IR's output can (see derive's flat pre-check).

    ``entry`` is the source unit name of the contract's file, ``sources`` maps source unit names to
    their text (dependencies under their remapped names included), ``remappings`` are solc's
    ``[context:]prefix=target``. Raises FlattenError when the result could not be faithful: a
    missing import, pragma ranges that do not intersect, a name declared in two files, an alias
    that cannot be rewritten safely, mixed ABI coders, or an import cycle that inverts inheritance.
    """
    order = collect_imports(entry, sources, remappings)
    if layout not in ("imports", "names"):
        raise FlattenError(f"layout {layout!r} is unknown: use 'imports' or 'names'")
    units = {name: analyse(sources[name], name) for name in order}
    first: dict[str, tuple[str, str]] = {}  # each file-level name's first (unit, keyword)
    declared_in: dict[str, set[str]] = {}
    for name in order:
        for kw, decl, _ in units[name].declarations:
            prev = first.setdefault(decl, (name, kw))
            if prev[0] != name and not (kw == "function" == prev[1]):
                raise FlattenError(
                    f"{decl!r} is declared in both {prev[0]} and {name}; one file cannot hold both, "
                    "submit standard-json"
                )
            declared_in.setdefault(decl, set()).add(name)
    owners = {decl: unit for decl, (unit, _kw) in first.items()}
    if layout == "names":
        # The units in the order solc reads a standard-json input (by source unit name), each preceded
        # only by what one file requires: the units that define its contracts' bases.
        order = _postorder(sorted(order), lambda unit: sorted({b for _, _, b in _inherited(unit, units, owners)}))
    _check_bases_come_first(order, units, owners)

    license = _combine_licenses([lic for name in order for lic in units[name].licenses])
    pragma, other_pragmas = _merge_pragmas(order, units)
    aliases = _Aliases(units, order, declared_in)

    header = []
    if license:
        header.append(f"// SPDX-License-Identifier: {license}")
    if pragma:
        header.append(f"pragma solidity {pragma};")
    header += other_pragmas
    parts = ["\n".join(header) + "\n"]
    for name in order:
        unit = units[name]
        text = unit.text
        edits = [(*_line_span(text, i.start, i.end), "") for i in unit.imports]
        edits += [(*_line_span(text, p.start, p.end), "") for p in unit.pragmas]
        edits += [(*_line_span(text, s, e), "") if not new else (s, e, new) for s, e, new in unit.spdx_edits]
        edits += aliases.edits(name)
        body = _apply(text, edits).lstrip("\r\n")
        parts.append(f"\n// File: {name}\n\n{body}")
        if not body.endswith("\n"):
            parts.append("\n")
    return FlattenResult("".join(parts), order, license, pragma)


def _inherited(unit: str, units: dict[str, SourceUnit], owners: dict[str, str]) -> Iterator[tuple[str, str, str]]:
    """(contract, base, the unit that defines the base) for each base a contract of `unit`
    inherits from another unit, an aliased base by its own name."""
    source = units[unit]
    renames = {alias: sym for imp in source.imports for sym, alias in imp.symbols}
    for kw, name, end in source.declarations:
        for base in _bases(source.text, end) if kw in ("contract", "interface") else ():
            base = renames.get(base, base)
            if owners.get(base, unit) != unit:
                yield name, base, owners[base]


def _bases(source: str, end: int) -> list[str]:
    """The base names after a contract's name (which ends at `end`): `is A, B(1), Unit.C`."""
    bases: list[str] = []
    expect_base, parens = False, 0
    for tok in tokenize(source, end):
        if tok.kind == "c":
            continue
        if tok.text == "{" and parens == 0:
            break
        if tok.text in ("(", ")"):
            parens += 1 if tok.text == "(" else -1
        elif parens == 0 and tok.text in ("is", ",", "."):
            expect_base = True
            if tok.text == "." and bases:
                bases.pop()  # `Unit.C`: the unit alias's member is the base
        elif expect_base and tok.kind == "id":
            bases.append(tok.text)
            expect_base = False
    return bases


def _check_bases_come_first(order: list[str], units: dict[str, SourceUnit], owners: dict[str, str]) -> None:
    """In one file a base contract must be defined before the contracts that inherit it.

    Across files solc accepts import cycles in any order, so after a cycle the depth-first order
    may put a derived contract first (a file in the names layout too)."""
    position = {unit: i for i, unit in enumerate(order)}
    for unit in order:
        for name, base, base_unit in _inherited(unit, units, owners):
            if position[base_unit] > position[unit]:
                raise FlattenError(
                    f"cannot flatten: {name} ({unit}) inherits {base} ({base_unit}), which the "
                    "import cycle between them places after it, and one file must define a base first; "
                    "flatten from the other file of the cycle or submit standard-json"
                )
