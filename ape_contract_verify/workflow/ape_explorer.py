"""Ape's `ExplorerAPI` answered by the plugin's targets: `Contract(address)`, links, `publish=True`.

The targets are Etherscan V2, the configured explorers and the local explorer.

Ape asks `network.explorer` and takes the first registered explorer plugin for the network (see
`registrations`, which `__init__.py` yields). On a local network with no explorer URL configured the
explorer is the one in this process: one per process and chain (`local_explorers`), shared with the
deploy hook, kept until the process ends, so what a script verified is what `Contract(address)`
finds. It has no pages (no server): its links are empty.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from ape.api.explorers import ExplorerAPI

from ape_contract_verify.exceptions import ContractNotVerified, ContractVerifyError
from ape_contract_verify.logs import get_logger
from ape_contract_verify.protocol.values import checksum
from ape_contract_verify.workflow import after_deploy

if TYPE_CHECKING:
    from ape.types import AddressType
    from ethpm_types import ABI, ContractType, PackageManifest

    from ape_contract_verify.client.provider import ExplorerRecord, VerificationTarget
    from ape_contract_verify.client.targets import Target
    from ape_contract_verify.config import ContractVerifyConfig
    from ape_contract_verify.workflow.report import Report

logger = get_logger()


def registrations(cfg: ContractVerifyConfig | None) -> Iterator[tuple[str, str]]:
    """(ecosystem, network) pairs this explorer serves, each once: every chain with a known target
    (Etherscan V2's chains; the public chains Ape's `evmchains` lists (offline data), which
    Sourcify and often a Blockscout serve) and their forks, the local network of each of those
    ecosystems, and every network configured under `explorers`."""
    from evmchains import PUBLIC_CHAIN_META

    from ape_contract_verify.client.targets import ETHERSCAN_V2_CHAINS

    pairs: list[tuple[str, str]] = [("ethereum", "local")]
    choices = [choice.split(":", 1) for choice in ETHERSCAN_V2_CHAINS.values()]
    choices += [
        [ecosystem, network]
        for ecosystem, networks in PUBLIC_CHAIN_META.items()
        for network, meta in networks.items()
        if isinstance(meta, dict) and isinstance(meta.get("chainId"), int)
    ]
    for ecosystem, network in choices:
        pairs += [(ecosystem, network), (ecosystem, f"{network}-fork"), (ecosystem, "local")]
    for ecosystem, networks in (cfg.explorers if cfg is not None else {}).items():
        pairs += [(ecosystem, network) for network in networks]
    yield from dict.fromkeys(pairs)


class ContractVerifyExplorer(ExplorerAPI):
    """Reads from the first target that has a contract; publishes through `Verification`."""

    @classmethod
    def supports_chain(cls, chain_id: int) -> bool:
        """Ad-hoc networks (Ape knows only their chain id): the chains Etherscan V2 serves, and the
        public chains evmchains lists (Sourcify's, and the Blockscouts it names)."""
        from ape_contract_verify.client.targets import ETHERSCAN_V2_CHAINS, chain_meta

        try:
            chain_id = int(chain_id)
        except (TypeError, ValueError):
            return False
        return chain_id in ETHERSCAN_V2_CHAINS or chain_meta("", "", chain_id) is not None

    # -- where to ask -------------------------------------------------------------------------

    @property
    def _cfg(self) -> ContractVerifyConfig:
        return after_deploy.plugin_config()

    def _chain_id(self) -> int | None:
        """The connected chain's id, else the network's own (public networks know theirs), else None."""
        provider = self.network_manager.active_provider
        connected = provider is not None and provider.network is self.network
        if not connected and self.network.is_local:
            return None
        try:
            return int(self.chain_manager.chain_id if connected else self.network.chain_id)
        except Exception:  # a provider not connected yet, or Ape knows no id without one: names decide
            return None

    def _targets(self) -> list[Target]:
        """This network's targets; a fork also reads from the network it forks (after its own)."""
        from ape_contract_verify.client.targets import resolve_targets

        ecosystem, network = self.network.ecosystem.name, self.network.name
        names = [network] + ([network.removesuffix("-fork")] if network.endswith("-fork") else [])
        found: list[Target] = []
        for name in names:
            try:
                found += resolve_targets(
                    ecosystem, name, self._chain_id() if name == network else None, config=self._cfg
                )
            except ContractVerifyError as err:
                logger.debug("contract_verify: %s:%s: %s", ecosystem, name, err)
        return found

    def _reader(self, target: Target) -> VerificationTarget | None:
        """A client to read `target` with; for the local network, only if its explorer runs."""
        if not target.is_local:
            return target.client(max_retries=min(self._cfg.max_retries, 1))
        from ape_contract_verify.workflow import local_explorers
        from ape_contract_verify.workflow.local_target import LocalTarget

        embedded = local_explorers.shared(self.provider, start=False)
        return None if embedded is None else LocalTarget(embedded)

    def _first_verified(self, address: str) -> ExplorerRecord | None:
        """The verified record of `address` on the first target that has one."""
        for target in self._targets():
            try:
                client = self._reader(target)
                record = client.contract_record(address) if client is not None else None
            except ContractNotVerified:
                continue
            except Exception as err:  # one line, then the next target: never a traceback in Ape
                logger.warning("contract_verify: %s: %s", target.url or "local explorer", _one_line(err))
                continue
            if record is not None and record.verified:
                return record
        return None

    # -- ExplorerAPI ---------------------------------------------------------------------------

    def get_address_url(self, address: AddressType) -> str:
        for target in self._targets():  # the local network's explorer runs in process: it has no pages
            if not target.is_local and (url := target.contract_url(str(address))):
                return url  # an explorer's page, or Sourcify's repo: <repo>/<chainId>/<address>
        return self._etherscan_link(f"address/{address}")

    def get_transaction_url(self, transaction_hash: str | bytes) -> str:
        if isinstance(transaction_hash, (bytes, bytearray)):  # HexBytes' .hex() has no 0x since 1.0
            transaction_hash = "0x" + bytes(transaction_hash).hex()
        from ape_contract_verify.client.provider import Kind

        # Sourcify shows contracts only: the first target with transaction pages.
        for target in self._targets():
            if not target.is_local and target.browser_url and target.kind is Kind.ETHERSCAN:
                return f"{target.browser_url.rstrip('/')}/tx/{transaction_hash}"
        return self._etherscan_link(f"tx/{transaction_hash}")

    def _etherscan_link(self, path: str) -> str:
        """Etherscan's page on a chain Etherscan V2 serves: links need no key, though verifying there does."""
        from ape_contract_verify.client.targets import ETHERSCAN_V2_CHAINS, chain_meta, etherscan_pages

        chain_id = self._chain_id()
        pages = etherscan_pages(chain_meta("", "", chain_id), chain_id) if chain_id in ETHERSCAN_V2_CHAINS else None
        return f"{pages}/{path}" if pages else ""

    def get_contract_type(self, address: AddressType) -> ContractType | None:
        """The verified type at `address`; for a proxy Ape did not recognise, its implementation's."""

        address = checksum(str(address))

        if (queue := after_deploy.HOOK.holding(address)) is not None:
            queue.verify_now(address)  # a deploy of this run the hook holds: verified first
        own = self._verified_type(address)
        if (target := self._ape_proxy_target(address)) is not None:
            # Ape asks for the implementation itself and appends the proxy's ABI to it, unfiltered;
            # an explorer that serves the implementation's source for a proxy (a clone's similar
            # match) would give every function twice. So: only what the implementation lacks.
            behind = self.chain_manager.contracts.contract_types[target] or self._verified_type(target)
            if own is None or behind is None:
                return own
            from ethpm_types.contract_type import ABIList

            kept = own.model_copy(deep=True)
            # An ABIList, as the field is declared: a plain list is not validated on assignment, and
            # Ape warns when it serialises one (caching the type).
            kept.abi = ABIList(_lacking(kept, behind))
            return kept
        implementation = self._implementation(address)
        found = self._verified_type(implementation) if implementation is not None else None
        if found is None or own is None:
            return own if found is None else found
        merged = found.model_copy(deep=True)  # the implementation's, plus what of the proxy's own it lacks
        merged.abi.extend(abi for abi in _lacking(own, merged) if abi.type in ("function", "event", "error"))
        return merged

    def _verified_type(self, address: str) -> ContractType | None:
        record = self._first_verified(address)
        return None if record is None else _contract_type(record)

    def _ape_proxy_target(self, address: str) -> str | None:
        """The implementation Ape found behind `address` before asking the explorer, if any."""
        try:
            entry = self.chain_manager.contracts.proxy_infos.get_entry(address)
        except Exception:
            return None
        return entry.value.target if entry.exists and entry.value is not None else None

    def _implementation(self, address: str) -> str | None:
        from ape_contract_verify.evm.chain import ApeProviderChain
        from ape_contract_verify.evm.proxies import detect_proxy

        if self.network_manager.active_provider is None:
            return None
        try:
            proxy = detect_proxy(ApeProviderChain(self.provider), address)
        except Exception as err:
            logger.debug("contract_verify: proxy detection at %s: %s", address, _one_line(err))
            return None
        return checksum(proxy.implementation) if proxy else None

    def get_manifest(self, address: AddressType) -> PackageManifest | None:
        """The verified sources and compiler settings at `address`, as an ethpm PackageManifest."""

        record = self._first_verified(checksum(str(address)))
        return None if record is None else _record_manifest(record)

    def publish_contract(self, address: AddressType) -> list[Report]:
        """Verify `address` on every target of the network, as `ape verify contract ADDRESS` does,
        and print the same summary table. Raises ContractVerifyError when one did not verify."""
        import sys

        import click
        from ape import project

        from ape_contract_verify.derive.ape_gate import GATE
        from ape_contract_verify.evm.chain import ApeProviderChain
        from ape_contract_verify.workflow.plan import Item, Options
        from ape_contract_verify.workflow.report import summary_table
        from ape_contract_verify.workflow.verification import VerificationRun

        address = checksum(str(address))
        if after_deploy.HOOK.holding(address) is not None:
            logger.info("contract_verify: %s is verified by the deploy hook (contract_verify.auto)", address)
            return []
        label = f"{self.network.ecosystem.name}:{self.network.name}"
        targets = self._targets()
        if not targets:
            raise ContractVerifyError(
                f"No explorer for {label}: set contract_verify.explorers.{label.replace(':', '.')}.url"
            )
        # The targets side by side on one derivation, and the process's embedded explorer: the one
        # `Contract(address)` and the links read from.
        cfg = self._cfg
        run = VerificationRun(
            project, Options.from_config(cfg), client_options={"max_retries": min(cfg.max_retries, 1)}
        )
        with GATE.script_waits():  # the script waits for this run's workers: they may use Ape's managers
            run.add_network(label, targets, self.provider, ApeProviderChain(self.provider))
            reports = run.verify([Item(label, address, deployed_type=self._deployed_type(address))])
        click.echo(summary_table(reports, styled=sys.stdout.isatty()))
        failed = [r for r in reports if not r.ok]
        if failed or not reports:
            reason = "; ".join(f"{r.contract}: {r.outcome}: {r.reason}" for r in failed) or "nothing was submitted"
            raise ContractVerifyError(f"{address} was not verified: {reason}")
        return reports

    def _deployed_type(self, address: str) -> str | None:
        """The type Ape just deployed at `address` (`deploy` caches it before it publishes), so the
        verification does not guess among types with the same code."""
        from ape_contract_verify.derive.artifacts import type_reference

        try:
            contract_type = self.chain_manager.contracts.get(address, fetch_from_explorer=False, detect_proxy=False)
        except Exception as err:  # the code still identifies it
            logger.debug("contract_verify: no cached type for %s: %s", address, err)
            return None
        return type_reference(contract_type) if contract_type is not None else None


# -- records to ethpm types ---------------------------------------------------------------------


def _names(record: ExplorerRecord) -> tuple[str, str]:
    """(contract name, source id) from the record's name (`path:Name` or `Name`)."""
    path, _, name = record.name.rpartition(":")
    if path:
        return name, path
    suffix = ".vy" if record.language.lower().startswith("vyper") else ".sol"
    for source_id, text in record.files.items():
        if f"contract {name}" in text or len(record.files) == 1:
            return name, source_id
    return name, f"{name}{suffix}"


def _contract_type(record: ExplorerRecord) -> ContractType:
    from ethpm_types import ContractType

    name, source_id = _names(record)
    return ContractType.model_validate({"contractName": name, "sourceId": source_id, "abi": record.abi})


def _record_manifest(record: ExplorerRecord) -> PackageManifest:
    from ethpm_types import Compiler, PackageManifest
    from ethpm_types.source import Source

    name, _ = _names(record)
    compiler = Compiler(
        name=record.language or "Solidity",
        version=_manifest_version(record),
        settings=record.settings,
        contractTypes=[name],
    )
    return PackageManifest(
        compilers=[compiler],
        sources={sid: Source.model_validate({"content": text}) for sid, text in record.files.items()},
        contractTypes={name: _contract_type(record)},
    )


def _manifest_version(record: ExplorerRecord) -> str:
    """The record's compiler as a manifest names it (`0.8.26+commit.8a97fa7a`, `0.4.3`)."""
    from ape_contract_verify.protocol.compiler_version import CompilerVersion, InvalidCompilerVersion

    try:
        return CompilerVersion.parse(record.compiler, "vyper" if record.language.lower() == "vyper" else None).plain
    except InvalidCompilerVersion:
        return record.compiler  # no version: as the explorer holds it (a record is read, not checked)


def _lacking(own: ContractType, other: ContractType) -> list[ABI]:
    """`own`'s ABI entries that `other` lacks, by signature (one without a signature is kept)."""
    have = {abi.signature for abi in other.abi if hasattr(abi, "signature")}
    return [abi for abi in own.abi if not hasattr(abi, "signature") or abi.signature not in have]


def _one_line(err: BaseException) -> str:
    """The error on one line, cut (the plugin's logger redacts keys from it)."""
    return (" ".join(str(err).split()) or type(err).__name__)[:300]
