"""`ape verify status`: what each recorded deployment is on each target, as the explorers answer now.

For every address, each target gets one read through the seam, `contract_record(full=False)`: an
Etherscan-style target's `getsourcecode` (verified or not, and the proxy link it holds:
`Implementation`), a Sourcify target's lookup of `proxyResolution` (`match`, and the implementation
it resolves). The chain is read once per address (`evm.proxies.detect_proxy`, no explorer call) to
tell a current link from a stale one where the target's kind links proxies: an Etherscan-style
explorer keeps the implementation it was linked to until `verifyproxycontract` is sent again.

Targets are read side by side, each by its own threads under its own rate limiter (and its
`TargetHealth`: one found down ends its remaining rows with one reason), so the whole costs about
what the slowest target's calls cost at its rate. Nothing else is asked.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

from ape_contract_verify.client.provider import Kind
from ape_contract_verify.exceptions import ContractNotVerified, ContractVerifyError, ExplorerError
from ape_contract_verify.json_types import JsonObject, JsonValue
from ape_contract_verify.logs import get_logger
from ape_contract_verify.protocol.values import checksum
from ape_contract_verify.retry import TargetHealth
from ape_contract_verify.workflow import local_explorers
from ape_contract_verify.workflow.choice import NetworkChoice, chain_id_of

if TYPE_CHECKING:
    from ape.api import ProviderAPI
    from typing_extensions import Unpack

    from ape_contract_verify.client.provider import VerificationTarget
    from ape_contract_verify.client.targets import ClientOptions, Target
    from ape_contract_verify.evm.reads import ChainReader

logger = get_logger()


VERIFIED = "verified"
NOT_VERIFIED = "not verified"
LINKED = "linked"  # a proxy, verified, linked to the implementation on chain
STALE = "stale link"  # linked to an implementation the proxy no longer uses
UNLINKED = "not linked"  # a proxy, verified, with no link to its implementation
ERROR = "error"  # the target gave no usable answer
DATA = "data contract"  # code that does nothing (it halts at once): nothing to verify
UNSUPPORTED = "unsupported"  # the target cannot verify this kind of contract yet (Sourcify: blueprints)
NO_SOURCE = "no source"  # a factory's template proxy on a target that resolves proxies itself (Sourcify)
OK_STATES = (VERIFIED, LINKED, DATA, UNSUPPORTED, NO_SOURCE)
# Calls in flight per target: its limiter spaces them; this only hides each call's latency
# (8 covers 5 calls/s at 1.5 s a call), and stays within a requests session's 10 pooled connections.
WORKERS = 8
MATCHES = {"exact_match": "full", "perfect": "full", "match": "partial", "partial": "partial"}


@dataclass
class TargetStatus:
    """What one target holds for one address: `state` (verified, not verified, linked, stale link,
    not linked, error), Sourcify's `match`, the `implementation` it links or resolves, and why."""

    target: str
    kind: Kind
    state: str
    match: str | None = None  # full | partial: Sourcify says; Etherscan-style explorers do not
    implementation: str | None = None  # the explorer's link (Etherscan-style) or resolution (Sourcify)
    reason: str = ""
    link: str | None = None
    label: str = ""  # the target as a person reads it (`Target.label`), for the table's head

    @property
    def ok(self) -> bool:
        return self.state in OK_STATES

    def as_dict(self) -> JsonObject:
        data: JsonObject = {key: value for key, value in asdict(self).items() if key not in ("target", "label")}
        return {**data, "ok": self.ok}

    def cell(self) -> str:
        """The table's text for this target."""
        texts = {
            VERIFIED: f"verified ({self.match})" if self.match else "verified",
            LINKED: f"linked {short(self.implementation)}",
            STALE: f"STALE {short(self.implementation)}",
            UNLINKED: "verified, NOT LINKED",
            NOT_VERIFIED: "NOT VERIFIED",
        }
        return texts.get(self.state, self.state)


@dataclass
class Row:
    """One recorded deployment: its proxy pattern and implementation on chain, and each target's
    `TargetStatus` (by target name, in the network's target order)."""

    network: str
    contract: str
    address: str
    proxy: str | None = None  # the pattern on chain (evm.proxies.ProxyKind), if a proxy
    implementation: str | None = None  # the implementation on chain, if a proxy
    chain_error: str = ""  # the chain could not be read (no proxy verdict)
    data: bool = False  # a data contract on chain: no explorer holds a source for it
    stamped: bool = False  # a proxy made from a factory's template: only its link can be verified
    blueprint: bool = False  # an ERC-5202 blueprint on chain: verified as its creation code
    targets: dict[str, TargetStatus] = field(default_factory=dict)

    def as_dict(self) -> JsonObject:
        proxy: JsonObject | None = (
            {"kind": self.proxy, "implementation": self.implementation, "stamped": self.stamped} if self.proxy else None
        )
        return {
            "network": self.network,
            "contract": self.contract,
            "address": self.address,
            "proxy": proxy,
            "blueprint": self.blueprint,
            "chain_error": self.chain_error or None,
            "targets": {name: status.as_dict() for name, status in self.targets.items()},
        }


@dataclass
class NetworkStatus:
    """One network to read: its label, its targets (client.targets.Target), its recorded
    deployments ((contract, address)), and how to read its chain and open its targets."""

    label: str
    targets: list[Target]
    deployments: list[tuple[str, str]]
    chain: ChainReader
    open_client: Callable[[Target, TargetHealth], VerificationTarget]  # (target, its health) -> its client


def read_status(networks: Iterable[NetworkStatus], workers: int = WORKERS) -> list[Row]:
    """Every deployment of every network on each of its targets: rows in record order.

    Each target's calls run on `workers` threads of its own (its limiter spaces them), every target
    at once; the chain reads run beside them."""
    rows: list[Row] = []
    asked: list[tuple[Row, Target, Callable[[], TargetStatus]]] = []  # in the network's target order
    chain_reads: list[Future[None]] = []
    pools: list[ThreadPoolExecutor] = []
    try:
        for network in networks:
            mine = [Row(network.label, name, checksum(address)) for name, address in network.deployments]
            rows += mine
            pools.append(ThreadPoolExecutor(max_workers=max(1, min(4, len(mine))), thread_name_prefix="status-chain"))
            chain_reads += [pools[-1].submit(_read_chain, network.chain, row) for row in mine]
            for target in network.targets:
                health = TargetHealth(target.name)
                health.others = len(network.targets) > 1
                try:
                    client = network.open_client(target, health)
                except Exception as err:  # every row of this target says why; the others go on
                    error = functools.partial(TargetStatus, target.name, target.kind, ERROR, reason=str(err))
                    asked += [(row, target, error) for row in mine]
                    continue
                pool = ThreadPoolExecutor(max(1, min(workers, len(mine))), thread_name_prefix=f"status-{target.name}")
                pools.append(pool)
                asked += [(row, target, pool.submit(_ask, target, client, health, row.address).result) for row in mine]
        for read in chain_reads:
            read.result()
        for row, target, answer in asked:
            status = row.targets[target.name] = _judge(answer(), row)
            status.label = target.label
    finally:
        for pool in pools:
            pool.shutdown(wait=True, cancel_futures=True)
    return rows


def _read_chain(chain: ChainReader, row: Row) -> None:
    """`row`'s facts on chain: a data contract, an ERC-5202 blueprint, or the proxy it is; or why
    the chain could not be read (the explorers' answers still stand)."""
    from ape_contract_verify.evm.blueprint import is_blueprint
    from ape_contract_verify.evm.bytecode import is_data_contract
    from ape_contract_verify.evm.proxies import detect_proxy

    try:
        code = chain.get_code(row.address)
        row.data = is_data_contract(code)
        row.blueprint = not row.data and is_blueprint(code)
        info = None if row.data or row.blueprint else detect_proxy(chain, row.address)
    except Exception as err:
        row.chain_error = f"could not read the chain: {err}"
        return
    if info is not None:
        row.proxy, row.implementation, row.stamped = info.kind, checksum(info.implementation), info.stamped


def _ask(target: Target, client: VerificationTarget, health: TargetHealth, address: str) -> TargetStatus:
    """The one call this target gets for `address`: what it holds, its match and the proxy link it
    keeps or resolves (Sourcify's lookup of `proxyResolution`)."""
    try:
        health.check()
        record = client.contract_record(address, full=False)
    except ContractNotVerified:
        return TargetStatus(target.name, target.kind, NOT_VERIFIED)
    except ExplorerError as err:
        return TargetStatus(target.name, target.kind, ERROR, reason=err.reason or str(err))
    except Exception as err:  # reported on its row, never stops the other rows
        logger.debug("status of %s on %s failed", address, target.name, exc_info=True)
        return TargetStatus(target.name, target.kind, ERROR, reason=f"{type(err).__name__}: {err}")
    if not record.verified:
        return TargetStatus(target.name, target.kind, NOT_VERIFIED)
    held = record.implementation.strip()
    implementation = checksum(held) if held.startswith("0x") and len(held) == 42 else None
    link = target.contract_url(address) if target.browser_url else None
    return TargetStatus(target.name, target.kind, VERIFIED, MATCHES.get(record.match or ""), implementation, link=link)


def _judge(status: TargetStatus, row: Row) -> TargetStatus:
    """An Etherscan-style target's verdict on a proxy: its link against the chain's implementation;
    a data contract's "not verified" is what it is, with nothing to verify."""
    if status.state == NOT_VERIFIED:
        if row.data:
            from ape_contract_verify.evm.bytecode import DATA_CONTRACT

            status.state, status.reason = DATA, DATA_CONTRACT
        elif row.blueprint and not status.kind.verifies_blueprints:
            from ape_contract_verify.evm.blueprint import SOURCIFY_UNSUPPORTED

            status.state, status.reason = UNSUPPORTED, SOURCIFY_UNSUPPORTED
        elif row.stamped and not status.kind.links_proxies:
            status.state = NO_SOURCE
            status.reason = (
                f"{row.proxy} proxy from a factory's template: Sourcify resolves {row.implementation} itself"
            )
        elif row.stamped:
            status.reason = f"a factory's template has no source: `ape verify proxy {row.address}` links it"
        return status
    if not status.kind.links_proxies or status.state != VERIFIED or row.implementation is None:
        return status  # Sourcify resolves proxies itself: there is no link to keep up
    if status.implementation is None:
        status.state = UNLINKED
        status.reason = f"the explorer has no link to {row.implementation}; `ape verify proxy {row.address}` links it"
    elif status.implementation.lower() == row.implementation.lower():
        status.state = LINKED
    else:
        status.state = STALE
        status.reason = (
            f"the explorer links {status.implementation}, the chain's implementation is {row.implementation}; "
            f"`ape verify proxy {row.address}` links it again"
        )
    return status


def short(address: str | None) -> str:
    return f"{address[:6]}…{address[-4:]}" if address else "?"


@dataclass
class StatusView:
    """What `status()` read: one row per recorded deployment, and which targets count."""

    rows: list[Row]
    required_targets: list[str] | None = None  # contract_verify.required_targets; None: every target counts

    @property
    def ok(self) -> bool:
        """Everything verified (and linked as on chain) on every target that counts."""
        return not self.failing()

    def failing(self, required_only: bool = True) -> list[tuple[Row, TargetStatus]]:
        """What makes `ape verify status` exit 1: (row, target) pairs not verified (or a stale or
        missing proxy link, or no answer) on a target that counts (`required_targets`, else every
        one), or on every target when not `required_only`."""
        names = set(self.required_targets or ()) if required_only else set()
        return [(r, s) for r in self.rows for s in r.targets.values() if not s.ok and (not names or s.target in names)]

    def table(self, styled: bool = False) -> str:
        """One row per deployment, one column per target; a network column once there are several.
        `styled` (a terminal): bold heads, each target's state coloured."""
        from ape_contract_verify.workflow.report import render_table

        rows = self.rows
        networks = len({r.network for r in rows}) > 1
        names = list(dict.fromkeys(name for r in rows for name in r.targets))
        labels = {name: s.label or name for r in rows for name, s in r.targets.items()}
        head = (
            ("contract", "address") + (("network",) if networks else ()) + ("proxy",) + tuple(labels[n] for n in names)
        )
        body = []
        for r in rows:
            contract = f"{r.contract} (blueprint)" if r.blueprint else r.contract
            proxy = f"{r.proxy} -> {short(r.implementation)}" if r.proxy else ("?" if r.chain_error else "-")
            cells = (contract, r.address, *((r.network,) if networks else ()), proxy)
            body.append((*cells, *(r.targets[n].cell() if n in r.targets else "-" for n in names)))
        done = {s.cell(): s.ok for r in rows for s in r.targets.values()}  # a cell's text says its state

        def state_style(cell: str) -> str | None:
            return None if cell not in done else "green" if done[cell] else "red"

        first = len(head) - len(names)  # the targets' columns
        return render_table(head, body, styled, {first + i: state_style for i in range(len(names))})

    def as_dict(self) -> JsonObject:
        required: list[JsonValue] | None = None if self.required_targets is None else [*self.required_targets]
        return {"ok": self.ok, "required_targets": required, "rows": [r.as_dict() for r in self.rows]}


def network_status(
    choice: NetworkChoice,
    provider: ProviderAPI,
    deployments: list[tuple[str, str]],
    warn: Callable[[str], None],
    **client_options: Unpack[ClientOptions],
) -> NetworkStatus:
    """The NetworkStatus of a connected network: its readable targets (raises when none is), each
    opened with its own client and limiter. A local network's embedded explorer keeps what it
    verified for as long as its chain lives (`local_explorers`): it is read from its store; a chain
    that ends with each `ape` command (Ape's test provider) has nothing kept to read, and says so."""
    from ape_contract_verify.evm.chain import ApeProviderChain

    label = choice.label()
    targets: list[Target] = []
    for target in choice.targets(chain_id_of(provider)):
        if target.is_local and local_explorers.kept(provider) is None:
            why = local_explorers.ends_with_run(provider) or "its chain could not be read"
            warn(
                f"target {target.label} of {target.ecosystem}:{target.network} (the embedded local explorer) keeps "
                f"nothing for this chain: {why}. Deploy on a node that outlives the command (e.g. start `anvil`, then "
                "`--network ethereum:local:foundry`) and its local explorer keeps what it verified for as long as that node runs"
            )
        else:
            targets.append(target)
    if not targets:
        raise ContractVerifyError(f"no target of {label} can be read (see the warnings)")

    def open_client(target: Target, health: TargetHealth) -> VerificationTarget:
        from ape_contract_verify.workflow.verification import explorer_for

        # Not started here: only local targets whose store is kept are read.
        return explorer_for(target, provider, health=health, start=False, **client_options)

    return NetworkStatus(label, targets, deployments, ApeProviderChain(provider), open_client)
