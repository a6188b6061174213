"""A compiler version as the contract API names it (`v0.8.26+commit.8a97fa7a`, `vyper:0.4.3`), parsed
once for engine, client and server, and the root of the compiler errors."""

import re
from dataclasses import dataclass

from ape_contract_verify.exceptions import ContractVerifyError


class CompilerError(ContractVerifyError):
    """Base of every compiler problem; `str()` is a reason fit for `Fail - Unable to verify. …`."""


class InvalidCompilerVersion(CompilerError):
    pass


@dataclass(frozen=True)
class CompilerVersion:
    language: str  # "solidity" or "vyper"
    version: str  # X.Y.Z
    commit: str | None = None

    @property
    def long(self) -> str:
        """The explorer's form: v0.8.26+commit.8a97fa7a, or vyper:0.4.3."""
        if self.language == "vyper":
            return f"vyper:{self.version}"
        return f"v{self.version}" + (f"+commit.{self.commit}" if self.commit else "")

    @property
    def triple(self) -> tuple[int, int, int]:
        major, minor, patch = (int(part) for part in self.version.split("."))
        return major, minor, patch


_SOLC_VERSION = re.compile(r"^v?(\d+\.\d+\.\d+)(?:-nightly\.\d{4}\.\d+\.\d+)?(?:\+commit\.([0-9a-f]{6,40}))?$", re.I)
_VYPER_VERSION = re.compile(r"^(?:vyper:)?v?(\d+\.\d+\.\d+)(?:(?:rc|b)\d+)?(?:\+commit\.([0-9a-f]{6,40}))?$", re.I)


def parse_compiler_version(text: str, language: str | None = None) -> CompilerVersion:
    """`v0.8.26+commit.8a97fa7a` (Solidity) or `vyper:0.4.3` (Vyper). `language` forces one."""
    raw = (text or "").strip()
    if language is None:
        language = "vyper" if raw.lower().startswith("vyper") else "solidity"
    pattern = _VYPER_VERSION if language == "vyper" else _SOLC_VERSION
    match = pattern.match(raw)
    if not match:
        example = "vyper:0.4.3" if language == "vyper" else "v0.8.26+commit.8a97fa7a"
        raise InvalidCompilerVersion(
            f"compilerversion {raw!r} is not a {language} compiler version; use the form {example}"
        )
    commit = match.group(2).lower() if match.group(2) else None
    return CompilerVersion(language, match.group(1), commit)
