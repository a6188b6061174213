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
    from ethpm_types import ContractType, PackageManifest

    from ape_contract_verify.client.provider import ExplorerRecord, VerificationTarget
    from ape_contract_verify.client.targets import ClientOptions, Target
    from ape_contract_verify.config import ContractVerifyConfig
    from ape_contract_verify.workflow.report import Report

logger = get_logger()


def registrations(cfg: ContractVerifyConfig | None) -> Iterator[tuple[str, str]]:
    """(ecosystem, network) pairs this explorer serves, each once: every chain with a known target
    (Etherscan V2's chains; the public chains Ape's `evmchains` lists (offline data), which
    Sourcify and often a Blockscout serve) and their forks, the local network of each of those
    ecosystems, and every network configured under `explorers`."""
    from evmchains import PUBLIC_CHAIN_META

    from ape_contract_verify.client.known import ETHERSCAN_V2_CHAINS

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
        from ape_contract_verify.client.known import ETHERSCAN_V2_CHAINS, chain_meta

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
                if client is not None and (record := _source_or_none(client, address)) is not None:
                    return record
            except Exception as err:  # one line, then the next target: never a traceback in Ape
                logger.warning("contract_verify: %s: %s", target.url or "local explorer", _one_line(err))
        return None

    # -- ExplorerAPI ---------------------------------------------------------------------------

    def get_address_url(self, address: AddressType) -> str:
        from ape_contract_verify.client.provider import Kind

        for target, base in self._pages():
            if target is None or target.kind is Kind.ETHERSCAN:  # an Etherscan-style explorer's pages
                return f"{base}/address/{address}"
            if url := target.contract_url(str(address)):  # Sourcify's repo: <repo>/<chainId>/<address>
                return url
        return ""

    def get_transaction_url(self, transaction_hash: str | bytes) -> str:
        if isinstance(transaction_hash, (bytes, bytearray)):  # HexBytes' .hex() has no 0x since 1.0
            transaction_hash = "0x" + bytes(transaction_hash).hex()
        from ape_contract_verify.client.provider import Kind

        # Sourcify shows contracts only: the first target with transaction pages.
        pages = (base for target, base in self._pages() if target is None or target.kind is Kind.ETHERSCAN)
        return next((f"{base}/tx/{transaction_hash}" for base in pages), "")

    def _pages(self) -> Iterator[tuple[Target | None, str]]:
        """(target, pages base URL) of each target with browser pages, in target order (the local
        network's explorer runs in process: it has none), then (None, Etherscan's pages) on
        Etherscan's chains: links need no key, though verifying there does."""
        for target in self._targets():
            if not target.is_local and (browser := _browser(target)):
                yield target, browser.rstrip("/")
        if etherscan := _etherscan_pages(self._chain_id()):
            yield None, etherscan

    def get_contract_type(self, address: AddressType) -> ContractType | None:
        """The verified type at `address`; for a proxy Ape did not recognise, its implementation's."""

        address = checksum(str(address))

        after_deploy.verify_now(address)  # a deploy of this run the hook holds: verified first
        own = self._verified_type(address)
        if (target := self._ape_proxy_target(address)) is not None:
            # Ape asks for the implementation itself and appends the proxy's ABI to it, unfiltered;
            # an explorer that serves the implementation's source for a proxy (a clone's similar
            # match) would give every function twice. So: only what the implementation lacks.
            implementation = self.chain_manager.contracts.contract_types[target] or self._verified_type(target)
            return _without(own, implementation)
        implementation = self._implementation(address)
        found = self._verified_type(implementation) if implementation is not None else None
        return own if found is None else _with_extras(found, own)

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

        from ape_contract_verify.evm.chain import ApeProviderChain
        from ape_contract_verify.workflow.plan import Options
        from ape_contract_verify.workflow.report import summary_table
        from ape_contract_verify.workflow.verification import Item, VerificationRun

        address = checksum(str(address))
        if after_deploy.HOOK.holding(address) is not None:
            logger.info("contract_verify: %s is verified by the deploy hook (contract_verify.auto)", address)
            return []
        cfg = self._cfg
        label = f"{self.network.ecosystem.name}:{self.network.name}"
        targets = self._targets()
        if not targets:
            raise ContractVerifyError(
                f"No explorer for {label}: set contract_verify.explorers.{label.replace(':', '.')}.url"
            )
        options = Options.from_config(cfg)
        # The targets side by side on one derivation, and the process's embedded explorer: the one
        # `Contract(address)` and the links read from.
        client_options: ClientOptions = {"max_retries": min(cfg.max_retries, 1)}
        from ape_contract_verify.derive.ape_gate import GATE

        # The script's thread waits for this run's workers: they may use Ape's managers meanwhile.
        run = VerificationRun(project, options, client_options=client_options)
        with GATE.script_waits():
            run.add_network(label, targets, self.provider, ApeProviderChain(self.provider))
            reports = run.verify([Item(label, address, deployed_type=_deployed_type(address))])
        click.echo(summary_table(reports, styled=sys.stdout.isatty()))
        failed = [r for r in reports if not r.ok]
        if failed or not reports:
            reason = "; ".join(f"{r.contract}: {r.outcome}: {r.reason}" for r in failed) or "nothing was submitted"
            raise ContractVerifyError(f"{address} was not verified: {reason}")
        return reports


def _deployed_type(address: str) -> str | None:
    """The type Ape just deployed at `address` (`deploy` caches it before it publishes), so the
    verification does not guess among types with the same code."""
    from ape import chain

    from ape_contract_verify.derive.artifacts import type_reference

    try:
        contract_type = chain.contracts.get(address, fetch_from_explorer=False, detect_proxy=False)
    except Exception as err:  # the code still identifies it
        logger.debug("contract_verify: no cached type for %s: %s", address, err)
        return None
    return type_reference(contract_type) if contract_type is not None else None


# -- records to ethpm types ---------------------------------------------------------------------


def _source_or_none(client: VerificationTarget, address: str) -> ExplorerRecord | None:

    try:
        record = client.contract_record(address)
    except ContractNotVerified:
        return None
    return record if record.verified else None


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
    contract_type = _contract_type(record)
    return PackageManifest(
        compilers=[compiler],
        sources={sid: Source.model_validate({"content": text}) for sid, text in record.files.items()},
        contractTypes={name: contract_type},
    )


def _manifest_version(record: ExplorerRecord) -> str:
    """The record's compiler as a manifest names it (`0.8.26+commit.8a97fa7a`, `0.4.3`)."""
    from ape_contract_verify.protocol.compiler_version import CompilerVersion, InvalidCompilerVersion

    try:
        return CompilerVersion.parse(record.compiler, "vyper" if record.language.lower() == "vyper" else None).plain
    except InvalidCompilerVersion:
        return record.compiler  # no version: as the explorer holds it (a record is read, not checked)


def _with_extras(implementation: ContractType, own: ContractType | None) -> ContractType:
    """The implementation's type plus the proxy's own functions, events and errors it lacks."""
    if own is None:
        return implementation
    merged = implementation.model_copy(deep=True)
    have = {abi.signature for abi in merged.abi if hasattr(abi, "signature")}
    merged.abi.extend(
        abi for abi in own.abi if abi.type in ("function", "event", "error") and abi.signature not in have
    )
    return merged


def _without(own: ContractType | None, implementation: ContractType | None) -> ContractType | None:
    from ethpm_types.contract_type import ABIList

    if own is None or implementation is None:
        return own
    have = {abi.signature for abi in implementation.abi if hasattr(abi, "signature")}
    kept = own.model_copy(deep=True)
    # An ABIList, as the field is declared: a plain list is not validated on assignment, and Ape
    # warns when it serialises one (caching the type).
    kept.abi = ABIList(abi for abi in kept.abi if not hasattr(abi, "signature") or abi.signature not in have)
    return kept


def _browser(target: Target) -> str | None:
    if target.browser_url:
        return target.browser_url
    from ape_contract_verify.client.known import is_etherscan_v2

    return _etherscan_pages(target.chain_id) if target.url and is_etherscan_v2(target.url) else None


def _etherscan_pages(chain_id: int | None) -> str | None:
    """Etherscan's pages for a chain Etherscan V2 serves (links need no key)."""
    from ape_contract_verify.client.known import ETHERSCAN_V2_CHAINS, chain_meta, etherscan_pages

    return etherscan_pages(chain_meta("", "", chain_id), chain_id) if chain_id in ETHERSCAN_V2_CHAINS else None


def _one_line(err: BaseException) -> str:
    from ape_contract_verify.protocol.secrets import redact

    text = " ".join(str(err).split()) or type(err).__name__
    return redact(text[:300])
