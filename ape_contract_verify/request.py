"""The one request type that flows through every part: derive, submit, poll, report."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum


class CodeFormat(str, Enum):
    """The contract API's `codeformat`: how `sourceCode` is written. The config (`codeformat:`), the
    API (`code_format=`) and the CLI (`--flatten`) choose Solidity's, also spelt `standard-json`
    and `flatten`; Vyper's sources are always sent as vyper-json."""

    SINGLE_FILE = "solidity-single-file"
    STANDARD_JSON = "solidity-standard-json-input"
    VYPER_JSON = "vyper-json"

    @classmethod
    def _missing_(cls, value: object) -> CodeFormat | None:
        aliases = {"standard-json": cls.STANDARD_JSON, "flatten": cls.SINGLE_FILE}
        return aliases.get(value) if isinstance(value, str) else None

    @classmethod
    def for_solidity(cls, value: object) -> CodeFormat:
        """`value` as a Solidity format a user chose; a ValueError saying the choices otherwise."""
        try:
            chosen = cls(value)
        except ValueError:
            chosen = cls.VYPER_JSON
        if chosen is cls.VYPER_JSON:
            raise ValueError(f"{value!r} is not a Solidity code format: give standard-json or flatten")
        return chosen


@dataclass
class VerificationRequest:
    """Everything verifysourcecode needs for one contract at one address.

    `source_code` is the flat text for single-file submissions, or the JSON text of the
    standard-json / vyper-json input. `contract_name` is `path/File.sol:Name` for the JSON
    formats and the bare name for single-file ones. `constructor_arguments` is hex without 0x.
    """

    address: str
    contract_name: str
    source_code: str
    code_format: CodeFormat
    compiler_version: str  # v0.8.26+commit.8a97fa7a, or vyper:0.4.3
    optimization_used: bool | None = None
    runs: int | None = None
    evm_version: str | None = None
    via_ir: bool | None = None
    constructor_arguments: str = ""
    license_type: int | None = None
    libraries: dict[str, str] = field(default_factory=dict)  # library name -> address
    # Sourcify reads constructor arguments from the creation transaction; Etherscan's form has no field for it.
    creation_tx_hash: str | None = None

    @property
    def format_text(self) -> str:
        """`codeformat` as the contract API spells it; a request built by hand may hold the text."""
        code_format: CodeFormat | str | None = self.code_format
        return code_format.value if isinstance(code_format, CodeFormat) else str(code_format or "")

    @property
    def bare_name(self) -> str:
        return self.contract_name.rsplit(":", 1)[-1]

    def to_form(self) -> dict[str, str]:
        """The verifysourcecode form fields (without module, action and apikey)."""
        form = {
            "contractaddress": self.address,
            "sourceCode": self.source_code,
            "codeformat": self.code_format.value,
            "contractname": self.contract_name,
            "compilerversion": self.compiler_version,
            # Etherscan documents the misspelt name; its V2 docs and Blockscout use the right one.
            "constructorArguements": self.constructor_arguments,
            "constructorArguments": self.constructor_arguments,
        }
        if self.optimization_used is not None:
            form["optimizationUsed"] = "1" if self.optimization_used else "0"
        if self.runs is not None:
            form["runs"] = str(self.runs)
        if self.evm_version:
            form["evmversion"] = self.evm_version
        if self.via_ir is not None:
            form["viaIR"] = "1" if self.via_ir else "0"
        if self.license_type is not None:
            form["licenseType"] = str(self.license_type)
        for number, (name, address) in enumerate(sorted(self.libraries.items()), start=1):
            form[f"libraryname{number}"] = name
            form[f"libraryaddress{number}"] = address
        return form


@dataclass(frozen=True)
class Receipt:
    """An accepted submission: the explorer's GUID, and what it was for."""

    guid: str
    address: str
    proxy: bool = False
