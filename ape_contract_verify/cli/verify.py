"""`ape verify contract | proxy | all`: parse the options, call `ape_contract_verify.api`, print.

Exit codes: 0 verified (or already verified), 1 verification failed, 2 bad input.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from ape_contract_verify.cli.common import (
    ExplorerChoice,
    api_call,
    explorer_options,
    quiet_stdout,
    verify_and_finish,
    warn,
)
from ape_contract_verify.protocol.values import is_address
from ape_contract_verify.request import CodeFormat

if TYPE_CHECKING:
    from ape.cli import ApeCliContextObject

    from ape_contract_verify.api import Contract


def _check_address(value: str | None, param: str) -> str | None:
    if value is not None and not is_address(value):
        raise click.BadParameter(f"{value!r} is not an address: give 0x followed by 40 hex digits", param_hint=param)
    return value


@click.command(short_help="Verify a deployed contract (by name, address, or both)")
@explorer_options
@click.argument("name_or_address")
@click.argument("address", required=False)
@click.option(
    "--constructor-args",
    default=None,
    help='ABI-typed values (e.g. \'"Tok", 5, ["0x…"]\') or raw hex; checked against the chain.',
)
@click.option("--flatten", is_flag=True, help="Submit one flattened file instead of standard-json input.")
@click.option("--no-check", is_flag=True, help="Skip the local pre-check (recompile and compare with the chain).")
@click.option("--force", is_flag=True, help="Submit even if the explorer already has the source.")
@click.option("--dry-run", is_flag=True, help="Derive and pre-check, print what each target would get, send nothing.")
@click.option(
    "--out",
    default=None,
    type=click.Path(file_okay=False, writable=True),
    help="With --dry-run: write the exact request bodies here.",
)
def contract(
    cli_ctx: ApeCliContextObject,
    explorer: ExplorerChoice,
    as_json: bool,
    name_or_address: str,
    address: str | None,
    constructor_args: str | None,
    flatten: bool,
    no_check: bool,
    force: bool,
    dry_run: bool,
    out: str | None,
) -> None:
    """Verify NAME at ADDRESS, NAME's recorded deployments, or the contract at ADDRESS (its type
    found by matching bytecode against the project's and its dependencies' artifacts). Proxies
    are verified with their implementation, then linked."""
    from ape_contract_verify import api

    explorer.one_network()
    if address is not None:
        _check_address(address, "ADDRESS")
        contracts: list[Contract] = [(name_or_address, address)]
    else:
        contracts = [name_or_address]
    code_format = CodeFormat.SINGLE_FILE if flatten else None
    check = False if no_check else None  # None: the config's
    network = explorer.network
    if dry_run:
        with quiet_stdout(as_json):
            plan = api_call(
                lambda: api.dry_run(
                    *contracts,
                    network=network,
                    **explorer.where(),
                    code_format=code_format,
                    check=check,
                    constructor_args=constructor_args,
                    on_warning=warn,
                )
            )
            for line in plan.lines(out):
                click.echo(line)
        sys.exit(0 if plan.ok else 1)
    verify_and_finish(
        as_json,
        lambda show: api.verify(
            *contracts,
            network=network,
            **explorer.where(),
            code_format=code_format,
            check=check,
            force=force,
            constructor_args=constructor_args,
            on_progress=show,
            on_warning=warn,
        ),
    )


@click.command(short_help="Link a proxy to its implementation on the explorer")
@explorer_options
@click.argument("address")
@click.option("--expected-implementation", default=None, help="Fail unless the explorer finds this implementation.")
def proxy(
    cli_ctx: ApeCliContextObject,
    explorer: ExplorerChoice,
    as_json: bool,
    address: str,
    expected_implementation: str | None,
) -> None:
    """Submit verifyproxycontract for ADDRESS on every Etherscan-style target and follow it to the end
    (Sourcify needs no link: it resolves proxies itself)."""
    from ape_contract_verify import api

    explorer.one_network()
    _check_address(address, "ADDRESS")
    _check_address(expected_implementation, "--expected-implementation")
    verify_and_finish(
        as_json,
        lambda show: api.verify_proxy(
            address,
            expected_implementation=expected_implementation,
            network=explorer.network,
            **explorer.where(),
            on_progress=show,
        ),
    )


@click.command("all", short_help="Verify every recorded deployment of the project on a network")
@explorer_options
@click.option(
    "--workers",
    default=None,
    type=click.IntRange(1, 64),
    help="Contracts verified at once, all under the explorer's rate limit [default: contract_verify.workers, 16].",
)
@click.option("--flatten", is_flag=True, help="Submit flattened single files instead of standard-json input.")
@click.option("--no-check", is_flag=True, help="Skip the local pre-check.")
@click.option(
    "--report",
    "report_path",
    default=None,
    type=click.Path(dir_okay=False, writable=True),
    help="Also write the JSON report to this file (for CI).",
)
@click.option(
    "--all-networks",
    is_flag=True,
    help="Every network with recorded deployments (the plugin's records and ape-config.yaml's deployments:).",
)
def all_deployments(
    cli_ctx: ApeCliContextObject,
    explorer: ExplorerChoice,
    as_json: bool,
    workers: int | None,
    flatten: bool,
    no_check: bool,
    report_path: str | None,
    all_networks: bool,
) -> None:
    """Verify what the plugin recorded when `ape run` deployed (and Ape's own deployment records),
    on every target of every network given (--network, repeatable), side by side, skipping what
    each explorer already has. Resumable: a second run does only what is left."""
    from ape_contract_verify import api

    networks = explorer.networks_or_all(all_networks)
    verify_and_finish(
        as_json,
        lambda show: api.verify_all(
            networks,
            all_networks=all_networks,
            **explorer.where(),
            workers=workers,
            code_format=CodeFormat.SINGLE_FILE if flatten else None,
            check=False if no_check else None,
            on_progress=show,
            on_warning=warn,
        ),
        report_path,
    )
