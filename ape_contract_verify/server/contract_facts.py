"""`ContractFacts`: a stored verification's settings, licence, ABI and files as the pages name them.

Read in Etherscan's terms ("Yes, 200 runs", "Default") from what the store holds."""

from __future__ import annotations

from ape_contract_verify.explorer.store import VerifiedContract
from ape_contract_verify.json_types import as_object
from ape_contract_verify.request import CodeFormat
from ape_contract_verify.server import abi_io
from ape_contract_verify.server.page_text import short_name


class ContractFacts:
    """A stored verification's settings as a page names them ("Yes, 200 runs", "Default")."""

    def __init__(self, contract: VerifiedContract):
        from ape_contract_verify.protocol.licenses import code_from_source, license_name

        self.contract = contract
        self.is_vyper = (
            contract.compiler_version.startswith("vyper:") or contract.code_format == CodeFormat.VYPER_JSON.value
        )
        self.settings = settings = contract.input_settings()
        optimizer = settings.get("optimizer") or {}
        if self.is_vyper:
            mode = settings.get("optimize", "gas")
            self.optimizer = "No" if mode == "none" else f"Yes ({mode})"
        elif isinstance(optimizer, dict) and optimizer.get("enabled"):
            self.optimizer = f"Yes, {optimizer.get('runs', 200)} runs"
        else:
            self.optimizer = "No"
        self.evm_version = str(settings.get("evmVersion") or "Default")
        self.via_ir = bool(settings.get("viaIR"))
        self.license = license_name(contract.license_type or code_from_source(contract.source_code))
        self.abi = abi_io.load_abi(contract.abi)

    def sources(self) -> dict[str, str]:
        """The source files by name: a flat file named after the contract, else the JSON input's sources."""
        contract = self.contract
        if contract.code_format == CodeFormat.SINGLE_FILE.value:
            return {short_name(contract.contract_name) + (".vy" if self.is_vyper else ".sol"): contract.source_code}
        sources = contract.json_input().get("sources")
        if not isinstance(sources, dict):
            return {"input.json": contract.source_code}
        return {str(k): str(as_object(v).get("content", "")) for k, v in sources.items()}
