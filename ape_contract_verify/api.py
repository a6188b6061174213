"""The plugin's Python API: what `ape verify …` does, for scripts, tests and other plugins.

    import ape_contract_verify as cv

    reports = cv.verify("Token", "0x5FbDB2315678afecb367f032d93F642f64180aa3", network="ethereum:sepolia")
    reports = cv.verify_all()            # every recorded deployment, upgrades followed
    view = cv.status()                   # what each explorer holds now
    plan = cv.dry_run("Token", out="bodies/")   # the exact request bodies, nothing sent

A contract is an address (its type found by its bytecode), a name (its recorded deployments), a
pair `"Name@0x…"` or `(name, address)`, or an Ape contract instance. `network=None` is the connected network inside
Ape's context (`with networks.parse_network_choice(...)`), else Ape's default; a network named
(`"ethereum:local:foundry"`) that is not the connected one is opened for the call and closed after.
Targets, formats and options default to the `contract_verify:` config, as on the command line.

Every function returns typed results (`Report`, `StatusView`, `DryRunPlan`) and raises only
`ContractVerifyError`s: bad input is an `InvalidRequest` naming the parameter and the fix.
A verification that failed is not an exception: it is a report whose `ok` is False.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, Union, runtime_checkable

from ape import config, networks

# The package's public names (its `__all__`) are this module's: those only re-exported are `as` themselves.
from ape_contract_verify.config import ContractVerifyConfig as ContractVerifyConfig
from ape_contract_verify.exceptions import ContractVerifyError, InvalidRequest
from ape_contract_verify.logs import get_logger
from ape_contract_verify.protocol.answers import ExplorerAnswer
from ape_contract_verify.protocol.answers import Outcome as Outcome
from ape_contract_verify.protocol.values import is_address
from ape_contract_verify.request import CodeFormat, Receipt
from ape_contract_verify.request import VerificationRequest as VerificationRequest
from ape_contract_verify.workflow.choice import NetworkChoice, chain_id_of, connected_label
from ape_contract_verify.workflow.ledger import deployed_as
from ape_contract_verify.workflow.plan import DryRunPlan, Item, plan_dry_run
from ape_contract_verify.workflow.recorded import NoRecords, network_choices, open_network, records_on, verify_recorded
from ape_contract_verify.workflow.report import Report
from ape_contract_verify.workflow.report import summary_table as report_table
from ape_contract_verify.workflow.status import WORKERS, Row, StatusView, network_status, read_status
from ape_contract_verify.workflow.status import TargetStatus as TargetStatus
from ape_contract_verify.workflow.verification import VerificationRun
from ape_contract_verify.workflow.verification import failed as failed_reports

if TYPE_CHECKING:
    from ape.api import ProviderAPI

    from ape_contract_verify.client.provider import ExplorerRecord, VerificationTarget
    from ape_contract_verify.json_types import JsonValue


@runtime_checkable
class Deployed(Protocol):
    """A deployed contract as Ape gives it (`ContractInstance`): its address (and type, when it has one)."""

    @property
    def address(self) -> str: ...


Contract = Union[str, tuple[str | None, str], Deployed]  # noqa: UP007 (a runtime alias, kept as Union); an address, a name, "Name@0x…", (name, address), or an Ape ContractInstance
Format = Union[CodeFormat, str, None]  # noqa: UP007 (a runtime alias); a CodeFormat, "standard-json" or "flatten"
Progress = Callable[[str, str], None]  # (address, what is happening)
Warn = Callable[[str], None]
Wanted = list[tuple[str | None, str | None]]  # (name, address) per contract given: either may be None, not both
StatusRow = Row  # the public name of a status view's row


def verify(
    *contracts: Contract,
    network: str | None = None,
    targets: Sequence[str] | None = None,
    explorer_url: str | None = None,
    api_key: str | None = None,
    code_format: Format = None,
    check: bool | None = None,
    force: bool = False,
    constructor_args: str | None = None,
    workers: int | None = None,
    on_progress: Progress | None = None,
    on_warning: Warn | None = None,
) -> list[Report]:
    """Verify `contracts` on every target of `network` (or the `targets` named), side by side.
    Proxies are verified with their implementation, then linked. One `Report` per submission.

    `code_format`: `CodeFormat.STANDARD_JSON` or `CodeFormat.SINGLE_FILE` (also spelt
    "standard-json" and "flatten"; given: no other format is sent in its place); `check`: run the
    local pre-check (default: the config's); `force`: submit even where the explorer already has
    the source; `constructor_args`: ABI-typed values or raw hex, checked against the chain."""
    wanted = _contracts(contracts)
    run = _run(code_format, check, force, workers, on_progress)
    warn = on_warning or get_logger().warning
    with _connected(network, targets, explorer_url, api_key) as [(choice, provider)]:
        items = _resolve(wanted, choice, provider, warn, constructor_args)
        open_network(run, choice, provider)
        return run.verify(items)


def verify_proxy(
    address: str,
    *,
    expected_implementation: str | None = None,
    network: str | None = None,
    targets: Sequence[str] | None = None,
    explorer_url: str | None = None,
    api_key: str | None = None,
    on_progress: Progress | None = None,
) -> list[Report]:
    """Link the proxy at `address` to its implementation on every Etherscan-style target
    (`verifyproxycontract`; Sourcify resolves proxies itself). Raises when no target takes links."""
    _address(address, "address")
    _address(expected_implementation, "expected_implementation")
    run = _run(None, None, False, None, on_progress)
    with _connected(network, targets, explorer_url, api_key) as [(choice, provider)]:
        label, _ = open_network(run, choice, provider)
        reports = run.proxy(label, address, expected_implementation)
    if not reports:
        raise InvalidRequest(
            "targets", f"no Etherscan-style target for {label}", "proxy links are theirs: name one in targets"
        )
    return reports


def verify_all(
    network: str | Sequence[str] | None = None,
    *,
    all_networks: bool = False,
    targets: Sequence[str] | None = None,
    explorer_url: str | None = None,
    api_key: str | None = None,
    code_format: Format = None,
    check: bool | None = None,
    workers: int | None = None,
    on_progress: Progress | None = None,
    on_warning: Warn | None = None,
) -> list[Report]:
    """Verify every recorded deployment (the plugin's ledger of `ape run`, and Ape's own records) on
    every target of each network, skipping what each explorer already has and relinking proxies
    that were upgraded. The ledger notes each ending, so a second call does only what is left.
    `network`: one or several; `all_networks`: every network with recorded deployments."""
    from ape import project

    run = _run(code_format, check, False, workers, on_progress)
    warn = on_warning or get_logger().warning
    with _connected(network, targets, explorer_url, api_key, all_networks, warn) as chosen:
        return verify_recorded(run, project, chosen, warn)


def status(
    network: str | Sequence[str] | None = None,
    *,
    all_networks: bool = False,
    targets: Sequence[str] | None = None,
    explorer_url: str | None = None,
    api_key: str | None = None,
    workers: int | None = None,
    on_warning: Warn | None = None,
) -> StatusView:
    """What every recorded deployment is on each target now: verified (Sourcify: full or partial),
    not verified, a proxy linked to the chain's implementation, or a stale or missing link. One
    read per address and target; nothing is sent. `view.ok` is what `ape verify status` exits on."""
    from ape import project

    _options(None, workers, max_workers=10)  # a client keeps 10 pooled connections
    warn = on_warning or get_logger().warning
    cfg = config.get_config("contract_verify")
    found = []
    with _connected(network, targets, explorer_url, api_key, all_networks, warn) as chosen:
        for choice, provider in chosen:
            records = records_on(project, chain_id_of(provider), warn)
            if not records.deployments:
                warn(f"no recorded deployments on {choice.label()}")
                continue
            found.append(network_status(choice, provider, records.deployments, warn, max_retries=cfg.max_retries))
        if not found:
            raise NoRecords("no recorded deployments on the networks given; deploy with `ape run`, or give a network")
        rows = read_status(found, workers=workers or WORKERS)
    return StatusView(rows, list(cfg.required_targets) if cfg.required_targets else None)


def dry_run(
    *contracts: Contract,
    network: str | None = None,
    targets: Sequence[str] | None = None,
    explorer_url: str | None = None,
    api_key: str | None = None,
    out: str | Path | None = None,
    code_format: Format = None,
    check: bool | None = None,
    constructor_args: str | None = None,
    on_warning: Warn | None = None,
) -> DryRunPlan:
    """What `verify` would send to each target, derived and pre-checked, with nothing sent. With
    `out`, the exact request bodies are written there (`plan.files`); `plan.lines()` says it for a
    person; `plan.ok` is False when something would not be sent."""

    wanted = _contracts(contracts)
    fmt = _options(code_format, None, check=check)
    with _connected(network, targets, explorer_url, api_key) as [(choice, provider)]:
        items = _resolve(wanted, choice, provider, on_warning or get_logger().warning, constructor_args)
        plan = plan_dry_run(choice, provider, items, fmt, check)
    if out is not None:
        plan.write(str(out))
    return plan


def failed(reports: Sequence[Report], required_only: bool = True) -> list[Report]:
    """The reports that count as failures: not ok, on a target of `contract_verify.required_targets`
    (every target when it names none, or with `required_only=False`). Empty: the run succeeded."""
    required = config.get_config("contract_verify").required_targets if required_only else None
    return failed_reports(reports, required)


def summary_table(reports: Sequence[Report]) -> str:
    """The table the commands print: one row per contract and target (a network column once there are several)."""
    return report_table(list(reports))


_NETWORK_FIX = "give ecosystem:network[:provider], e.g. ethereum:local:foundry"


@contextlib.contextmanager
def connected(network: str | None = None) -> Iterator[ProviderAPI]:
    """The provider to verify on: the connected one when `network` is None (or names it), else
    `network` (default: Ape's default) opened for the block and closed after."""
    if network is not None and not isinstance(network, str):
        raise InvalidRequest("network", f"{network!r} is not a network choice", _NETWORK_FIX)
    active = networks.active_provider
    if active is not None and active.is_connected and (network is None or _names_active(network, active)):
        yield active
        return
    if network is not None:
        NetworkChoice(network).names()  # an unknown name is said plainly, before any connection
    choice = network or networks.default_ecosystem.name
    with contextlib.ExitStack() as stack:
        try:
            provider_ctx = stack.enter_context(networks.parse_network_choice(choice))
        except ContractVerifyError:
            raise
        except Exception as err:  # Ape's own errors for unknown names and unreachable nodes
            raise InvalidRequest("network", f"{choice!r} could not be connected: {err}", _NETWORK_FIX) from None
        yield provider_ctx


# -- helpers ----------------------------------------------------------------------------------


@contextlib.contextmanager
def _connected(
    network: object,
    targets: Sequence[str] | None,
    explorer_url: str | None,
    api_key: str | None,
    all_networks: bool | None = None,
    warn: Warn | None = None,
) -> Iterator[Iterator[tuple[NetworkChoice, ProviderAPI]]]:
    """Each network the call asks for (one, unless `all_networks` is given: `verify_all` and `status`
    take several), connected as the iteration reaches it (so Ape's records read are that network's)
    until the block ends, its choice bound to the network connected (None meant 'the connected
    one'). Every name is checked before any connection."""
    if isinstance(targets, str):
        targets = (targets,)
    if targets is not None and not all(isinstance(t, str) and t for t in targets):
        raise InvalidRequest(
            "targets", f"{targets!r} is not a list of target names", "give names such as ['etherscan', 'sourcify']"
        )
    if network is None or isinstance(network, str):
        given = (network,) if network else ()
    elif isinstance(network, Sequence) and all(isinstance(n, str) and n for n in network):
        given = tuple(network)
    else:
        raise InvalidRequest(
            "network", f"{network!r} is not a network choice", "give 'ecosystem:network', or a list of them"
        )
    for name in given:  # an unknown name is said plainly, before any connection
        NetworkChoice(name).names()
    choice = NetworkChoice(given[0] if given else None, explorer_url, api_key, tuple(targets or ()), given)
    if all_networks is None:
        choices = [choice.one_network()]
    else:
        from ape import project

        choices = network_choices(project, choice, all_networks, warn or get_logger().warning)
    with contextlib.ExitStack() as stack:

        def each() -> Iterator[tuple[NetworkChoice, ProviderAPI]]:  # connected in turn: Ape reads the last one
            for one in choices:
                provider = stack.enter_context(connected(one.network))
                yield (one if one.network else one.for_network(connected_label(provider)), provider)

        yield each()


def _names_active(network: str, provider: ProviderAPI) -> bool:
    parts = network.split(":")
    label = [provider.network.ecosystem.name, provider.network.name, provider.name]
    return len(parts) <= 3 and bool(parts[0]) and all(not given or given == have for given, have in zip(parts, label))


def _contracts(contracts: Sequence[Contract]) -> Wanted:
    """(name, address) per contract given; either may be None, not both."""
    fix = "give an address, a contract name, 'Name@0x…' or ('Name', '0x…')"
    if not contracts:
        raise InvalidRequest("contracts", "none given", fix)
    wanted: Wanted = []
    for contract in contracts:
        name: str | None = None
        if isinstance(contract, Deployed) and contract.address is not None:
            # A ContractInstance knows its type; another object with an address need not.
            name, address = getattr(getattr(contract, "contract_type", None), "name", None), str(contract.address)
        elif isinstance(contract, tuple) and len(contract) == 2 and isinstance(contract[0], (str, type(None))):
            name, address = contract
        elif not isinstance(contract, str):
            raise InvalidRequest("contracts", f"{contract!r} is not a contract", fix)
        elif "@0x" in contract:  # a name may hold "@" (a dependency's path): the address is last
            name, _, address = contract.rpartition("@")
            if not name:
                raise InvalidRequest("contracts", f"{contract!r} has no name before '@'", fix)
        elif contract.startswith("0x") or not contract.strip():
            address = contract
        else:
            wanted.append((contract, None))
            continue
        wanted.append((name, _address(address, "contracts")))
    return wanted


def _resolve(
    wanted: Wanted, choice: NetworkChoice, provider: ProviderAPI, warn: Warn, constructor_args: str | None
) -> list[Item]:
    """The items to verify: names without an address become their recorded deployments on the
    connected network; an unnamed address is what the ledger recorded at its deploy (the type, the
    input it was built from)."""
    from ape import project

    pairs: list[tuple[str | None, str]] = []
    for name, address in wanted:
        if address is not None:
            pairs.append((name, address))
            continue
        recorded = [(name, a) for _, a in records_on(project, chain_id_of(provider), warn, name).deployments]
        if not recorded:
            raise NoRecords(f"No recorded deployment of {name} on {choice.label()}. Give its address: '{name}@0x…'")
        pairs += recorded
    known = deployed_as(project, chain_id_of(provider), pairs)
    return [
        Item(choice.label(), address, name, constructor_args, deployed_type, kept_input=kept_input)
        for (name, address), (deployed_type, kept_input) in zip(pairs, known)
    ]


def _address(value: str | None, param: str) -> str | None:
    if value is not None and not is_address(value):
        raise InvalidRequest(param, f"{value!r} is not an address", "give 0x followed by 40 hex digits")
    return value


def _options(
    code_format: object, workers: object, check: object = None, force: object = False, max_workers: int = 64
) -> CodeFormat | None:
    """The call's options checked, before any connection; the code format parsed."""
    if workers is not None and (
        isinstance(workers, bool) or not isinstance(workers, int) or not 1 <= workers <= max_workers
    ):
        raise InvalidRequest(
            "workers", f"{workers!r} is not a number of workers", f"give a whole number from 1 to {max_workers}"
        )
    for name, value in (("check", check), ("force", force)):
        if value is not None and not isinstance(value, bool):
            raise InvalidRequest(name, f"{value!r} is not True, False or None", f"give {name}=True or {name}=False")
    try:
        return None if code_format is None else CodeFormat.for_solidity(code_format)
    except ValueError:
        raise InvalidRequest(
            "code_format",
            f"{code_format!r} is not a Solidity code format",
            "give CodeFormat.STANDARD_JSON or CodeFormat.SINGLE_FILE ('standard-json' or 'flatten')",
        ) from None


def _run(
    code_format: object, check: bool | None, force: bool, workers: int | None, on_progress: Progress | None
) -> VerificationRun:
    """A VerificationRun with the config's options and the call's overrides (checked first, by
    `_options`), on the process's embedded local explorer (so `Contract(address)`, links and
    `status()` later in the process see what it verified, as after the deploy hook)."""
    from ape import project

    from ape_contract_verify.workflow.plan import Options

    fmt = _options(code_format, workers, check=check, force=force)
    cfg = config.get_config("contract_verify")
    return VerificationRun(
        project,
        Options.from_config(cfg, fmt, check, force=bool(force)),
        workers=workers or cfg.workers,
        on_progress=on_progress,
        client_options={"max_retries": cfg.max_retries},
    )


# -- reads of one target (`ape verify abi`, `source`, `status GUID`): nothing is connected --------


def abi(
    address: str,
    *,
    network: str | None = None,
    target: str | None = None,
    explorer_url: str | None = None,
    api_key: str | None = None,
) -> list[JsonValue]:
    """The ABI of the verified contract at `address` on one target of `network`: `target` (a name),
    else the network's `etherscan` one. Raises ContractNotVerified when it holds none."""
    return _read_target(network, target, explorer_url, api_key).get_abi(address)


def source(
    address: str,
    *,
    network: str | None = None,
    target: str | None = None,
    explorer_url: str | None = None,
    api_key: str | None = None,
) -> ExplorerRecord:
    """What one target holds for `address` (chosen as `abi`'s): name, compiler, settings, files,
    licence, proxy link; `record.verified` is False when it holds nothing."""
    return _read_target(network, target, explorer_url, api_key).contract_record(address)


def job_status(
    guid: str,
    *,
    proxy: bool = False,
    wait: bool = False,
    interval: float | None = None,
    timeout: float | None = None,
    on_progress: Callable[[ExplorerAnswer], None] | None = None,
    network: str | None = None,
    target: str | None = None,
    explorer_url: str | None = None,
    api_key: str | None = None,
) -> ExplorerAnswer:
    """The outcome of the submission with receipt `guid` on one target (chosen as `abi`'s); `proxy`:
    a proxy link's. `wait`: polled until final, every `interval` seconds for at most `timeout`
    (default: the config's `poll_interval` and `timeout`), `on_progress` hearing each answer."""
    from ape_contract_verify.protocol.forms import validate_guid

    guid = validate_guid(guid)
    client = _read_target(network, target, explorer_url, api_key)
    if not wait:
        return client.job_status(guid, proxy)
    cfg = config.get_config("contract_verify")
    return client.wait(
        Receipt(guid=guid, address="", proxy=proxy),
        interval=interval or cfg.poll_interval,
        timeout=timeout or cfg.timeout,
        on_progress=on_progress,
        fresh=False,
    )


def _read_target(
    network: str | None, target: str | None, explorer_url: str | None, api_key: str | None
) -> VerificationTarget:
    """The client of the one target a read asks, resolved without connecting."""
    return NetworkChoice(network, explorer_url, api_key, (target,) if target else ()).read_target().client()
