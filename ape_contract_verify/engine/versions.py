"""The engine's compiler errors, from a compiler version it cannot read to a compiler that crashed.

The version itself is `protocol/compiler_version.py`'s `CompilerVersion`, one parse for engine,
client and server; here its refusal becomes a `CompilerError`, whose text is a verification's reason.
"""

from ape_contract_verify.exceptions import ContractVerifyError
from ape_contract_verify.protocol import compiler_version
from ape_contract_verify.protocol.compiler_version import CompilerVersion as CompilerVersion  # compilers.py's
from ape_contract_verify.protocol.compiler_version import Language


class CompilerError(ContractVerifyError):
    """Base of every compiler problem; `str()` is a reason fit for `Fail - Unable to verify. …`."""


class InvalidCompilerVersion(CompilerError, compiler_version.InvalidCompilerVersion):
    """A compilerversion that names no compiler: a compiler problem to the engine."""


class CompilerNotInstalled(CompilerError):
    """The compiler of the requested version is not on this machine."""


class CompilerFailed(CompilerError):
    """The compiler ran and refused the sources, or did not finish."""


class CompilerCrashed(CompilerFailed):
    """solc stopped on an internal error (a bug of its own), not on the sources."""


def parse_compiler_version(text: str, language: Language | None = None) -> CompilerVersion:
    """`CompilerVersion.parse`, its refusal raised as the engine's `InvalidCompilerVersion`."""
    try:
        return CompilerVersion.parse(text, language)
    except compiler_version.InvalidCompilerVersion as err:
        raise InvalidCompilerVersion(str(err)) from None
