"""A compiler version in every spelling the contract API, Sourcify and the compilers use, parsed once.

`CompilerVersion.parse` reads Solidity's `v0.8.26+commit.8a97fa7a`, `0.8.26`,
`v0.8.28-nightly.2024.9.2+commit.12345678` and Vyper's `vyper:0.4.3`, `v0.3.10+commit.91361694`,
`0.4.0rc6`, `0.3.10b1`; the number is packaging's `Version` (so pre-releases compare as PEP 440
orders them), the frame around it (`vyper:`, `v`, `-nightly.<date>`, `+commit.<hash>`) is ours, as
no library knows compilers' spellings. A number must be written as packaging writes it
(`0.4.0rc6`, not `0.4.0-rc6`): what the explorers and compilers print.

Where the old rules disagreed, the answers chosen: a commit has 7 to 40 hex digits (solc prints 8;
Vyper's older PyPI packages print 7, `0.3.10+commit.9136169`); Vyper's pre-releases are `aN`, `bN`
and `rcN`, Solidity has none; a nightly's date is `YYYY.M.D`.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, replace
from typing import Literal

from packaging.version import InvalidVersion, Version

from ape_contract_verify.exceptions import ContractVerifyError

Language = Literal["solidity", "vyper"]
EXAMPLES: dict[Language, str] = {"solidity": "v0.8.26+commit.8a97fa7a", "vyper": "vyper:0.4.3"}

_COMMIT = re.compile(r"commit\.([0-9a-f]{7,40})")
# `vyper:` (Vyper's only), `v`, the number, Solidity's `-nightly.<date>`, `+commit.<7-40 hex>`.
_SPELLING = re.compile(
    r"(?P<vyper>vyper:)?v?(?P<number>[^+]+?)(?:-nightly\.(?P<nightly>[0-9]{4}\.[0-9]{1,2}\.[0-9]{1,2}))?"
    r"(?:\+commit\.(?P<commit>[0-9a-f]{7,40}))?"
)
_PRE_RELEASES = ("a", "b", "rc")


class InvalidCompilerVersion(ContractVerifyError, ValueError):
    """Text that is not a compiler version of the language asked for."""


@functools.total_ordering
@dataclass(frozen=True)
class CompilerVersion:
    """One compiler's version: language, number (release and pre-release), nightly date, commit.

    Versions of one language order by their number (a nightly before its release); `str()` is the
    explorers' form (`v0.8.26+commit.8a97fa7a`, `vyper:0.4.3`)."""

    language: Language
    version: Version
    commit: str | None = None  # lower-case hex
    nightly: str | None = None  # Solidity's nightly date, `2024.9.2`

    @classmethod
    def parse(cls, text: str, language: Language | None = None) -> CompilerVersion:
        """Every spelling above; `language` forces one, else `vyper:` makes it Vyper and anything
        else Solidity. Raises InvalidCompilerVersion naming the form to use."""
        raw = (text or "").strip()
        lowered = raw.lower()
        if language is None:
            language = "vyper" if lowered.startswith("vyper") else "solidity"
        parsed = _parse(lowered, language)
        if parsed is None:
            raise InvalidCompilerVersion(
                f"compilerversion {raw!r} is not a {language} compiler version; use the form {EXAMPLES[language]}"
            )
        return parsed

    @classmethod
    def printed(cls, output: str, language: Language) -> CompilerVersion | None:
        """The first version in a compiler's `--version` output, None if none. A platform may follow
        the commit (`Version: 0.8.26+commit.8a97fa7a.Linux.g++`): it is left out."""
        for word in output.split():
            number, plus, local = word.lower().partition("+commit.")
            found = _parse(f"{number}+commit.{local.split('.', 1)[0]}" if plus else number, language)
            if found is not None:
                return found
        return None

    @property
    def release(self) -> tuple[int, int, int]:
        """(major, minor, patch), without pre-release or nightly."""
        major, minor, patch = self.version.release
        return major, minor, patch

    @property
    def number(self) -> str:
        """`0.8.26`, `0.4.0rc6`: how the compiler's package and install folder name it."""
        return str(self.version)

    @property
    def long(self) -> str:
        """The explorers' form: `v0.8.26+commit.8a97fa7a` (a nightly with its date), `vyper:0.4.3`
        (with `+commit.…` when known)."""
        prefix = "vyper:" if self.language == "vyper" else "v"
        return prefix + self.plain

    @property
    def plain(self) -> str:
        """Without prefix (Sourcify's and the compilers' own form): `0.8.26+commit.8a97fa7a`."""
        nightly = f"-nightly.{self.nightly}" if self.nightly else ""
        commit = f"+commit.{self.commit}" if self.commit else ""
        return f"{self.number}{nightly}{commit}"

    @property
    def form(self) -> str:
        """The contract API's `compilerversion`, as explorers list compilers: Solidity's with its
        commit (`v0.8.26+commit.8a97fa7a`), Vyper's without (`vyper:0.4.3`)."""
        return (self.without_commit() if self.language == "vyper" else self).long

    def without_commit(self) -> CompilerVersion:
        return replace(self, commit=None)

    def with_commit(self, commit: str) -> CompilerVersion:
        """This version built from `commit` (7 to 40 hex digits, as `parse` takes them)."""
        lowered = commit.lower()
        if not _COMMIT.fullmatch(f"commit.{lowered}"):
            raise InvalidCompilerVersion(f"commit {commit!r} of {self.number} is not 7 to 40 hex digits")
        return replace(self, commit=lowered)

    def __str__(self) -> str:
        return self.long

    def __lt__(self, other: CompilerVersion) -> bool:
        """By number, a nightly before its release, then by commit (`functools.total_ordering` gives the rest);
        TypeError when `other` is no version of this compiler."""
        if not isinstance(other, CompilerVersion) or other.language != self.language:
            raise TypeError(f"cannot order {self!s} against {other!r}: compare versions of one compiler")
        return self._sort_key < other._sort_key

    @property
    def _sort_key(self) -> tuple[Version, bool, tuple[int, ...], str]:
        date = tuple(int(part) for part in self.nightly.split(".")) if self.nightly else ()
        return self.version, self.nightly is None, date, self.commit or ""  # the commit: a total order


def _parse(lowered: str, language: Language) -> CompilerVersion | None:
    found = _SPELLING.fullmatch(lowered)
    if found is None or (found["vyper"] and language != "vyper") or (found["nightly"] and language != "solidity"):
        return None
    number = found["number"]
    try:
        version = Version(number)
    except InvalidVersion:
        return None
    # Only X.Y.Z with a Vyper pre-release, written as packaging writes it (no epoch, post, dev).
    if str(version) != number or len(version.release) != 3 or version.epoch or version.is_postrelease:
        return None
    if version.is_devrelease or (version.pre and (language != "vyper" or version.pre[0] not in _PRE_RELEASES)):
        return None
    return CompilerVersion(language, version, found["commit"], found["nightly"])
