"""`ape verify contract | proxy`: derive from artifacts and the chain, submit, follow, report.

Exit codes: 0 verified (or already verified), 1 verification failed, 2 bad input.
"""

import contextlib
import dataclasses
import json
import sys
from typing import Any, Optional

import click

from ape_contract_verify.cli.options import explorer_options, json_option
from ape_contract_verify.protocol.values import is_address

def _check_address(value: Optional[str], param: str) -> Optional[str]:
    if value is not None and not is_address(value):
        raise click.BadParameter(f"{value!r} is not an address: give 0x followed by 40 hex digits", param_hint=param)
    return value


def _progress(as_json: bool):
    """A live line on a terminal; plain lines otherwise; nothing with --json."""
    if as_json:
        return lambda address, text: None
    tty = sys.stderr.isatty()
    start = {}

    def show(address: str, text: str) -> None:
        import time

        start.setdefault(address, time.monotonic())
        line = f"{address[:10]}… {text} ({time.monotonic() - start[address]:.0f}s)"
        if tty:
            click.echo(f"\r\033[K{line}", err=True, nl=False)
        else:
            click.echo(line, err=True)

    return show


@contextlib.contextmanager
def _quiet_stdout(as_json: bool):
    """With --json, stdout carries only the JSON document: whatever Ape prints on the way
    (e.g. "INFO: Installing openzeppelin") goes to stderr."""
    if not as_json:
        yield
        return
    with contextlib.redirect_stdout(sys.stderr):
        yield


def _finish(reports: list, as_json: bool) -> None:
    """Print the summary (or the JSON document) and exit: 1 if a target that counts failed
    (`contract_verify.required_targets`, default all), 0 otherwise."""
    from ape import config

    from ape_contract_verify.workflow.run import failed
    from ape_contract_verify.workflow.verification import summary_table

    bad = failed(reports, config.get_config("contract_verify").required_targets)
    ok = bool(reports) and not bad
    if sys.stderr.isatty() and not as_json:
        click.echo("\r\033[K", err=True, nl=False)
    if as_json:
        click.echo(json.dumps({"ok": ok, "reports": [r.as_dict() for r in reports]}, indent=2))
    else:
        click.echo(summary_table(reports))
        for report in reports:
            for warning in report.warnings:
                click.echo(f"WARNING: {report.contract}: {warning}", err=True)
            if not report.ok:
                where = f" on {report.target}" if report.target else ""
                click.echo(f"ERROR: {report.contract} {report.address}{where}: {report.outcome}: {report.reason}", err=True)
    sys.exit(0 if ok else 1)


def _connected(explorer: Any):
    """Connect to the chosen network (verification reads the chain)."""
    from ape import networks

    choice = explorer.network or networks.default_ecosystem.name
    try:
        return networks.parse_network_choice(choice)
    except Exception as err:
        raise click.BadParameter(f"{choice!r}: {err}", param_hint="--network") from None


def _run(as_json: bool, **options: Any):
    """A VerificationRun with the config's options and the command's overrides."""
    from ape import config, project

    from ape_contract_verify.workflow.run import VerificationRun
    from ape_contract_verify.workflow.verification import Options

    cfg = config.get_config("contract_verify")
    opts = Options(
        code_format=options.get("code_format") or cfg.codeformat.value,
        strict_format=bool(options.get("code_format")),
        check=cfg.check if options.get("check") is None else options["check"],
        force=bool(options.get("force")),
        license=cfg.license,
        poll_interval=cfg.poll_interval,
        timeout=cfg.timeout,
    )
    workers = options.get("workers") or cfg.workers
    return VerificationRun(
        project, opts, workers=workers, on_progress=_progress(as_json), client_options=_client_options()
    )


def _add_network(run: Any, explorer: Any, provider: Any) -> str:
    """Resolve the connected network's targets and open them in `run`; returns the network's label."""
    from ape_contract_verify.evm.chain import ApeProviderChain

    ecosystem, network, _ = explorer.names()
    label = f"{ecosystem}:{network}"
    chain_id = None
    try:
        chain_id = int(provider.chain_id)
    except Exception:
        pass
    run.add_network(label, explorer.targets(chain_id), provider, ApeProviderChain(provider))
    return label


@click.command(short_help="Verify a deployed contract (by name, address, or both)")
@explorer_options
@json_option
@click.argument("name_or_address")
@click.argument("address", required=False)
@click.option("--constructor-args", default=None, help="ABI-typed values (e.g. '\"Tok\", 5, [\"0x…\"]') or raw hex; checked against the chain.")
@click.option("--flatten", is_flag=True, help="Submit one flattened file instead of standard-json input.")
@click.option("--no-check", is_flag=True, help="Skip the local pre-check (recompile and compare with the chain).")
@click.option("--force", is_flag=True, help="Submit even if the explorer already has the source.")
@click.option("--dry-run", is_flag=True, help="Derive and pre-check, print what each target would get, send nothing.")
@click.option("--out", default=None, type=click.Path(file_okay=False, writable=True), help="With --dry-run: write the exact request bodies here.")
def contract(cli_ctx, explorer, as_json, name_or_address, address, constructor_args, flatten, no_check, force, dry_run, out):
    """Verify NAME at ADDRESS, NAME's recorded deployments, or the contract at ADDRESS (its type
    found by matching bytecode against the project's and its dependencies' artifacts). Proxies
    are verified with their implementation, then linked."""
    from ape_contract_verify.exceptions import ContractVerifyError
    from ape_contract_verify.workflow.run import Item

    explorer.one_network()
    if address is not None:
        name = name_or_address
        _check_address(address, "ADDRESS")
        targets = [(name, address)]
    elif is_address(name_or_address):
        targets = [(None, name_or_address)]
    else:
        name, targets = name_or_address, None
    ecosystem, network, _ = explorer.names()
    with _quiet_stdout(as_json), _connected(explorer) as provider_ctx:
        provider = getattr(provider_ctx, "provider", None) or provider_ctx
        if targets is None:
            targets = [(name, a) for _, a in _records(name).deployments]
            if not targets:
                raise click.UsageError(
                    f"No recorded deployment of {name} on {ecosystem}:{network}. "
                    f"Give its address: `ape verify contract {name} 0x…`"
                )
        if dry_run:
            from ape_contract_verify.workflow.dry_run import dry_run as run_dry

            code_format = "flatten" if flatten else None
            check = False if no_check else None  # None: the config's, as a real run
            sys.exit(run_dry(explorer, provider, targets, constructor_args, out, code_format, check, echo=click.echo,
                             strict_format=flatten))
        try:
            with _run(
                as_json, code_format="flatten" if flatten else None, check=False if no_check else None, force=force
            ) as run:
                label = _add_network(run, explorer, provider)
                reports = run.verify([Item(label, a, n, constructor_args) for n, a in targets])
        except ContractVerifyError as err:
            raise click.UsageError(str(err)) from None
    _finish(reports, as_json)


@click.command(short_help="Link a proxy to its implementation on the explorer")
@explorer_options
@json_option
@click.argument("address")
@click.option("--expected-implementation", default=None, help="Fail unless the explorer finds this implementation.")
def proxy(cli_ctx, explorer, as_json, address, expected_implementation):
    """Submit verifyproxycontract for ADDRESS on every Etherscan-style target and follow it to the end
    (Sourcify needs no link: it resolves proxies itself)."""
    from ape_contract_verify.exceptions import ContractVerifyError

    explorer.one_network()
    _check_address(address, "ADDRESS")
    _check_address(expected_implementation, "--expected-implementation")
    with _quiet_stdout(as_json), _connected(explorer) as provider_ctx:
        provider = getattr(provider_ctx, "provider", None) or provider_ctx
        try:
            with _run(as_json) as run:
                label = _add_network(run, explorer, provider)
                reports = run.proxy(label, address, expected_implementation)
        except ContractVerifyError as err:
            raise click.UsageError(str(err)) from None
        if not reports:
            raise click.UsageError("no Etherscan-style target for this network: proxy links are theirs (choose one with --target)")
    _finish(reports, as_json)


def _client_options() -> dict:
    from ape import config

    return {"max_retries": config.get_config("contract_verify").max_retries}


def _records(name: Optional[str] = None) -> Any:
    """The recorded deployments on the connected network (see workflow/records.py); records that
    could not be read are warned about, and an unknown NAME is a usage error."""
    from ape import chain, project

    from ape_contract_verify.exceptions import ContractVerifyError
    from ape_contract_verify.workflow.records import recorded_deployments

    try:
        records = recorded_deployments(project, chain.chain_id, name)
    except ContractVerifyError as err:  # an unknown name is not "no deployments"
        raise click.UsageError(str(err)) from None
    for problem in records.problems:
        click.echo(f"WARNING: {problem}", err=True)
    if not records.deployments and records.problems:
        raise click.UsageError("no deployment could be read from the records (see the warnings above); "
                               "give an address: `ape verify contract NAME 0x…`")
    return records


@click.command("all", short_help="Verify every recorded deployment of the project on a network")
@explorer_options
@json_option
@click.option("--workers", default=None, type=click.IntRange(1, 64), help="Contracts verified at once, all under the explorer's rate limit [default: contract_verify.workers, 16].")
@click.option("--flatten", is_flag=True, help="Submit flattened single files instead of standard-json input.")
@click.option("--no-check", is_flag=True, help="Skip the local pre-check.")
@click.option("--report", "report_path", default=None, type=click.Path(dir_okay=False, writable=True), help="Also write the JSON report to this file (for CI).")
@click.option("--all-networks", is_flag=True, help="Every network with recorded deployments (the plugin's records and ape-config.yaml's deployments:).")
def all_deployments(cli_ctx, explorer, as_json, workers, flatten, no_check, report_path, all_networks):
    """Verify what the plugin recorded when `ape run` deployed (and Ape's own deployment records),
    on every target of every network given (--network, repeatable), side by side, skipping what
    each explorer already has. Resumable: a second run does only what is left."""
    from ape import chain, project

    from ape_contract_verify.exceptions import ContractVerifyError
    from ape_contract_verify.evm.chain import ApeProviderChain
    from ape_contract_verify.workflow.ledger import Ledger

    choices = network_choices(explorer, all_networks)
    items: list = []
    ledgers: dict = {}
    labels: dict = {}  # (network, address) -> the name it was recorded under
    current: list = []  # rows of proxies whose links match the chain: nothing sent
    with _quiet_stdout(as_json), contextlib.ExitStack() as stack:
        try:
            run = stack.enter_context(
                _run(as_json, code_format="flatten" if flatten else None, check=False if no_check else None, workers=workers)
            )
            for choice in choices:
                ecosystem, network, _ = choice.names()
                provider_ctx = stack.enter_context(_connected(choice))
                provider = getattr(provider_ctx, "provider", None) or provider_ctx
                ledger = Ledger.for_chain(project, chain.chain_id)
                records = _records()
                todo = records.deployments
                if not todo:
                    raise click.UsageError(
                        f"No recorded deployments on {ecosystem}:{network}. Deploy with `ape run` "
                        "(the plugin records what it deploys), or verify one with `ape verify contract`."
                    )
                label = _add_network(run, choice, provider)
                ledgers[label] = ledger
                try:
                    entries = {e["address"].lower(): e for e in ledger.entries()}
                except ContractVerifyError:  # _records warned: verify as before
                    entries = {}
                reader = ApeProviderChain(provider)
                for name, address in todo:
                    labels[(label, address.lower())] = name
                    items += _plan_items(run, entries.get(address.lower()), label, address, records.types.get(address.lower()), reader, current)
            reports = run.verify(
                items, on_done=lambda item, done: _record(
                    ledgers[item.network], labels[(item.network, item.address.lower())], item, done,
                    {d.target.name: d.target.url for d in run.targets_of(item.network)},
                )
            ) + current
        except ContractVerifyError as err:
            raise click.UsageError(str(err)) from None
    if report_path:
        from ape_contract_verify.workflow.run import failed

        with open(report_path, "w") as handle:
            json.dump({"ok": not failed(reports), "reports": [r.as_dict() for r in reports]}, handle, indent=2)
    _finish(reports, as_json)


def network_choices(explorer: Any, all_networks: bool) -> list:
    """One ExplorerChoice per network: each --network given, or with --all-networks every network
    with recorded deployments (the plugin's records and ape-config.yaml's deployments:)."""
    from ape import project

    if all_networks:
        if explorer.networks:
            raise click.UsageError("give --network or --all-networks, not both")
        from ape_contract_verify.workflow.records import recorded_networks

        found, problems = recorded_networks(project)
        for problem in problems:
            click.echo(f"WARNING: {problem}", err=True)
        if not found:
            raise click.UsageError("no network has recorded deployments; deploy with `ape run`, or give --network")
        explorer = dataclasses.replace(explorer, networks=tuple(found))
    return [explorer.for_network(n) for n in explorer.networks] or [explorer]


def _plan_items(run: Any, entry: Any, label: str, address: str, deployed_type: Any, reader: Any, current: list) -> list:
    """The items for one recorded address (workflow/upgrades.plan): as before, except a proxy the
    ledger linked, which costs calls only on targets where it moved (a relink) or did not end well."""
    from ape_contract_verify.protocol.answers import Outcome
    from ape_contract_verify.workflow.run import Item
    from ape_contract_verify.workflow.upgrades import plan
    from ape_contract_verify.workflow.verification import Report

    names = {d.target.name: d.target.url for d in run.targets_of(label)}
    todo = plan(entry, names, reader, address)
    item = Item(label, address, deployed_type=deployed_type)
    items = []
    if todo.verify:
        items.append(dataclasses.replace(item, targets=None if len(todo.verify) == len(names) else frozenset(todo.verify)))
    items += [dataclasses.replace(item, targets=frozenset({t}), relink=todo.implementation) for t in sorted(todo.relink)]
    for target in sorted(todo.current):
        # One row for the proxy: its source and its link to what the chain holds, as the ledger says.
        current.append(Report(
            item.label, address, Outcome.ALREADY_VERIFIED, "verified, and linked to the implementation on chain: nothing sent",
            target=target, network=label, implementation=todo.implementation,
        ))
    return items


def _record(ledger: Any, name: str, item: Any, reports: list, urls: dict) -> None:
    """The ledger keeps each target's ending per address (the explorer, not the ledger, says what is
    verified: the ledger may speak of another explorer), and a proxy's link."""
    from ape_contract_verify.exceptions import ContractVerifyError
    from ape_contract_verify.workflow.upgrades import record_links
    from ape_contract_verify.workflow.verification import outcome_for

    try:
        if (report := outcome_for(item.address, reports)) is not None:
            ledger.record_target(name, item.address, report.target, str(report.outcome), report.reason)
        relinked = (next(iter(item.targets)), item.relink) if item.relink else None
        record_links(ledger, name, item.address, reports, urls, relinked)
    except ContractVerifyError as err:  # already warned about; the verification stands
        click.echo(f"WARNING: {err}", err=True)
