"""`ape verify contract | proxy`: derive from artifacts and the chain, submit, follow, report.

Exit codes: 0 verified (or already verified), 1 verification failed, 2 bad input.
"""

import contextlib
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
    from ape_contract_verify.workflow.verification import summary_table

    if sys.stderr.isatty() and not as_json:
        click.echo("\r\033[K", err=True, nl=False)
    if as_json:
        click.echo(json.dumps({"ok": all(r.ok for r in reports), "reports": [r.as_dict() for r in reports]}, indent=2))
    else:
        click.echo(summary_table(reports))
        for report in reports:
            for warning in report.warnings:
                click.echo(f"WARNING: {report.contract}: {warning}", err=True)
            if not report.ok:
                click.echo(f"ERROR: {report.contract} {report.address}: {report.outcome}: {report.reason}", err=True)
    sys.exit(0 if reports and all(r.ok for r in reports) else 1)


def _connected(explorer: Any):
    """Connect to the chosen network (verification reads the chain)."""
    from ape import networks

    choice = explorer.network or networks.default_ecosystem.name
    try:
        return networks.parse_network_choice(choice)
    except Exception as err:
        raise click.BadParameter(f"{choice!r}: {err}", param_hint="--network") from None


def _verification(explorer: Any, target: Any, client: Any, browser: Optional[str], as_json: bool, **options: Any):
    from ape import chain, config, project

    from ape_contract_verify.evm.chain import ApeProviderChain
    from ape_contract_verify.workflow.verification import Options, Verification

    cfg = config.get_config("contract_verify")
    opts = Options(
        code_format=options.get("code_format") or cfg.codeformat.value,
        check=cfg.check if options.get("check") is None else options["check"],
        force=bool(options.get("force")),
        license=cfg.license,
        poll_interval=cfg.poll_interval if not target.is_local else min(cfg.poll_interval, 0.5),
        timeout=cfg.timeout,
    )
    return Verification(
        client, project, ApeProviderChain(chain.provider), opts, browser_url=browser, on_progress=_progress(as_json)
    )


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
    from ape_contract_verify.workflow.verification import explorer_for

    if address is not None:
        name = name_or_address
        _check_address(address, "ADDRESS")
        targets = [(name, address)]
    elif is_address(name_or_address):
        targets = [(None, name_or_address)]
    else:
        name, targets = name_or_address, None
    target = explorer.target()
    with _quiet_stdout(as_json), _connected(explorer) as provider_ctx:
        provider = getattr(provider_ctx, "provider", None) or provider_ctx
        if targets is None:
            targets = [(name, a) for _, a in _records(name).deployments]
            if not targets:
                raise click.UsageError(
                    f"No recorded deployment of {name} on {target.ecosystem}:{target.network}. "
                    f"Give its address: `ape verify contract {name} 0x…`"
                )
        if dry_run:
            from ape_contract_verify.workflow.dry_run import dry_run as run_dry

            code_format = "flatten" if flatten else None
            sys.exit(run_dry(explorer, provider, targets, constructor_args, out, code_format, not no_check, echo=click.echo))
        try:
            with explorer_for(target, provider, **_client_options()) as (client, browser):
                verification = _verification(
                    explorer, target, client, browser, as_json,
                    code_format="flatten" if flatten else None,
                    check=False if no_check else None,
                    force=force,
                )
                reports = []
                for contract_name, contract_address in targets:
                    reports += verification.contract(contract_address, contract_name, constructor_args)
        except ContractVerifyError as err:
            raise click.UsageError(str(err)) from None
    _finish(reports, as_json)


@click.command(short_help="Link a proxy to its implementation on the explorer")
@explorer_options
@json_option
@click.argument("address")
@click.option("--expected-implementation", default=None, help="Fail unless the explorer finds this implementation.")
def proxy(cli_ctx, explorer, as_json, address, expected_implementation):
    """Submit verifyproxycontract for ADDRESS and follow it to the end."""
    from ape_contract_verify.workflow.verification import explorer_for

    _check_address(address, "ADDRESS")
    _check_address(expected_implementation, "--expected-implementation")
    target = explorer.target()
    with _quiet_stdout(as_json), _connected(explorer) as provider_ctx:
        provider = getattr(provider_ctx, "provider", None) or provider_ctx
        with explorer_for(target, provider, **_client_options()) as (client, browser):
            verification = _verification(explorer, target, client, browser, as_json)
            reports = [verification.proxy(address, expected_implementation)]
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
def all_deployments(cli_ctx, explorer, as_json, workers, flatten, no_check, report_path):
    """Verify what the plugin recorded when `ape run` deployed (and Ape's own deployment records),
    skipping what the explorer already has. Resumable: a second run does only what is left."""
    from concurrent.futures import ThreadPoolExecutor

    from ape import chain, project

    from ape_contract_verify.exceptions import ContractVerifyError
    from ape_contract_verify.workflow.ledger import Ledger
    from ape_contract_verify.workflow.verification import explorer_for, outcome_for

    target = explorer.target()
    with _quiet_stdout(as_json), _connected(explorer) as provider_ctx:
        provider = getattr(provider_ctx, "provider", None) or provider_ctx
        ledger = Ledger.for_chain(project, chain.chain_id)
        todo = _records().deployments
        if not todo:
            raise click.UsageError(
                f"No recorded deployments on {target.ecosystem}:{target.network}. Deploy with `ape run` "
                "(contract_verify.auto: true records them), or verify one with `ape verify contract`."
            )
        try:
            with explorer_for(target, provider, **_client_options()) as (client, browser):
                verification = _verification(
                    explorer, target, client, browser, as_json,
                    code_format="flatten" if flatten else None,
                    check=False if no_check else None,
                )

                def one(item):
                    # The explorer, not the ledger, says what is already verified: the ledger may
                    # speak of another explorer.
                    name, address = item
                    reports = verification.contract(address, None)
                    if (report := outcome_for(address, reports)) is not None:
                        try:
                            ledger.record(name, address, status=report.outcome, reason=report.reason)
                        except ContractVerifyError as err:  # already warned about; the verification stands
                            click.echo(f"WARNING: {err}", err=True)
                    return reports

                if workers is None:
                    from ape import config

                    workers = config.get_config("contract_verify").workers
                with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="verify-all") as pool:
                    reports = [r for batch in pool.map(one, todo) for r in batch]
        except ContractVerifyError as err:
            raise click.UsageError(str(err)) from None
    if report_path:
        with open(report_path, "w") as handle:
            json.dump({"ok": all(r.ok for r in reports), "reports": [r.as_dict() for r in reports]}, handle, indent=2)
    _finish(reports, as_json)
