"""`ape verify …`: thin commands that parse the options, call `ape_contract_verify.api` and print.

`abi`, `source` and `status` read from an explorer; `contract`, `proxy` and `all` verify; `serve`
runs the local explorer. Exit codes: 0 success (verified, or already verified), 1 the explorer
said no or a verification failed (its reason on stderr), 2 bad input (no traceback).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

import click

from ape_contract_verify.cli.common import api_call, explorer_options, fail, quiet_stdout, verify_and_finish, warn
from ape_contract_verify.json_types import JsonObject
from ape_contract_verify.protocol.answers import ExplorerAnswer, Texts
from ape_contract_verify.protocol.values import is_address
from ape_contract_verify.request import CodeFormat

if TYPE_CHECKING:
    from ape.cli import ApeCliContextObject

    from ape_contract_verify.api import Contract
    from ape_contract_verify.cli.common import ExplorerChoice
    from ape_contract_verify.client.provider import ExplorerRecord


@click.group(short_help="Verify deployed contracts on Etherscan-style explorers")
def cli() -> None:
    """Verify deployed contracts on Etherscan-style explorers (Etherscan V2, Blockscout,
    Routescan, or the plugin's own local explorer)."""


# Explorer reads (issue 3).
@cli.command(short_help="Print a verified contract's ABI as JSON")
@explorer_options
@click.argument("address")
def abi(cli_ctx: ApeCliContextObject, address: str, explorer: ExplorerChoice, as_json: bool) -> None:
    """Print the ABI of the verified contract at ADDRESS."""
    from ape_contract_verify import api

    where = explorer.read_from()
    result = api_call(lambda: api.abi(address, **where), as_json)
    click.echo(json.dumps(result) if as_json else json.dumps(result, indent=2))


def _safe_relative(path: str) -> Path:
    """A source path from the explorer, confined under the output directory."""
    parts = [p.replace(":", "_") for p in PurePosixPath(path.replace("\\", "/")).parts if p not in ("", "/", ".", "..")]
    return Path(*parts) if parts else Path("source.sol")


def _settings_document(record: ExplorerRecord) -> JsonObject:
    return {
        "contractName": record.name,
        "compilerVersion": record.compiler,
        "language": record.language,
        "sourceFormat": record.source_format,
        "constructorArguments": record.constructor_arguments,
        "licenseType": record.license,
        "proxy": record.proxy,
        "implementation": record.implementation,
        "settings": record.settings,
    }


@cli.command(short_help="Print a verified contract's settings; write its sources with --out")
@explorer_options
@click.option(
    "--out",
    "out",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Directory to write the source files and settings.json into.",
)
@click.argument("address")
def source(
    cli_ctx: ApeCliContextObject, address: str, explorer: ExplorerChoice, as_json: bool, out: Path | None
) -> None:
    """Show the verified source of the contract at ADDRESS: name, compiler, optimizer, EVM version,
    licence and proxy/implementation."""
    from ape_contract_verify import api

    where = explorer.read_from()
    record = api_call(lambda: api.source(address, **where), as_json)
    if not record.verified:
        fail(f"{address}: {Texts.NOT_VERIFIED}", as_json, outcome="not verified")

    written: list[str] = []
    if out is not None:
        if out.exists() and any(out.iterdir()):
            raise click.BadParameter(f"{out} is not empty; give a new or empty directory", param_hint="--out")
        for path, content in record.files.items():
            target = out / _safe_relative(path)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content, encoding="utf-8")
            written.append(str(target))
        settings_path = out / "settings.json"
        settings_path.write_text(json.dumps(_settings_document(record), indent=2) + "\n", encoding="utf-8")
        written.append(str(settings_path))

    if as_json:
        document = {"ok": True, "address": address, **_settings_document(record), "files": sorted(record.files)}
        click.echo(json.dumps({**document, "written": written}))
        return
    fields = {
        "Contract": record.name,
        "Compiler": record.compiler,
        "Optimizer": f"enabled, {record.runs} runs" if record.optimization_used else "disabled",
        "EVM version": record.settings.get("evmVersion") or record.evm_version or "Default",
        "Licence": record.license or "Unknown",
        "Proxy": f"yes, implementation {record.implementation or 'unknown'}" if record.proxy else "no",
        "Source files": f"{len(record.files)} ({record.source_format})",
    }
    if written:
        fields["Written to"] = str(out)
    for label, value in fields.items():
        click.echo(f"{label + ':':<16}{value}")


@cli.command(short_help="What is verified where (every recorded deployment), or one submission's outcome (GUID)")
@explorer_options
@click.option("--proxy", is_flag=True, help="With GUID: it is from a proxy submission (checkproxyverification).")
@click.option("--wait", "wait_", is_flag=True, help="With GUID: poll until the answer is final.")
@click.option(
    "--interval",
    type=click.FloatRange(min=0.1),
    default=None,
    help="With GUID: seconds between polls (config poll_interval).",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0.1),
    default=None,
    help="With GUID: give up after this many seconds (config timeout).",
)
@click.option("--all-networks", is_flag=True, help="Without GUID: every network with recorded deployments.")
@click.option(
    "--workers",
    default=None,
    type=click.IntRange(1, 10),
    help="Without GUID: calls in flight per target, under its rate limit [default: 8; a client keeps 10 connections].",
)
@click.argument("guid", required=False)
def status(
    cli_ctx: ApeCliContextObject,
    guid: str | None,
    explorer: ExplorerChoice,
    as_json: bool,
    proxy: bool,
    wait_: bool,
    interval: float | None,
    timeout: float | None,
    all_networks: bool,
    workers: int | None,
) -> None:
    """Without GUID: every recorded deployment of the project (--network, repeatable, or
    --all-networks) on each target: verified (Sourcify: full or partial match), not verified, a
    proxy linked to its implementation, or a stale link (the explorer links another implementation
    than the chain's). Exit code 1 when something on a required target (contract_verify.required_targets,
    default all) is not verified or not linked as on chain.

    With GUID: print the outcome of the submission with that receipt."""
    if guid is None:
        flags = {"--proxy": proxy, "--wait": wait_, "--interval": interval, "--timeout": timeout}
        if given := [name for name, on in flags.items() if on]:
            raise click.UsageError(f"{', '.join(given)} go with a GUID: `ape verify status GUID {given[0]}`")
        overview(explorer, as_json, all_networks, workers)
        return
    if all_networks or workers:
        raise click.UsageError("--all-networks and --workers go without a GUID: `ape verify status --all-networks`")
    from ape_contract_verify import api

    def progress(answer: ExplorerAnswer) -> None:
        if not answer.outcome.is_final and not as_json:
            click.echo(f"{answer.outcome.value}: {answer.reason}", err=True)

    raw, where = guid, explorer.read_from()  # raw: a str here, where the lambda would read str | None
    answer = api_call(
        lambda: api.job_status(
            raw, proxy=proxy, wait=wait_, interval=interval, timeout=timeout, on_progress=progress, **where
        ),
        as_json,
    )
    ok = answer.outcome.is_success or not answer.outcome.is_final
    outcome, reason = answer.outcome.value, answer.reason
    document = {"ok": ok, "guid": raw.strip(), "outcome": outcome, "status": answer.status, "reason": reason}
    click.echo(json.dumps(document) if as_json else f"{outcome}: {reason}")
    if not ok:
        click.echo(f"ERROR: {reason or outcome}", err=True)
        sys.exit(1)


def overview(explorer: ExplorerChoice, as_json: bool, all_networks: bool, workers: int | None) -> None:
    """`ape verify status` without a GUID: the status table of every recorded deployment (`api.status`),
    why each row fails on stderr, and the exit code: 0 all verified on `required_targets`, 1 not."""
    from ape_contract_verify import api

    networks = explorer.networks_or_all(all_networks)
    with quiet_stdout(as_json):
        view = api_call(
            lambda: api.status(
                networks,
                all_networks=all_networks,
                **explorer.where(),
                workers=workers,
                on_warning=warn,
            )
        )
    click.echo(json.dumps(view.as_dict(), indent=2) if as_json else view.table(styled=sys.stdout.isatty()))
    counted = {(id(row), target.target) for row, target in view.failing()}
    for row, target in view.failing(required_only=False):  # on stderr with --json too: a CI log says why
        level = "ERROR" if (id(row), target.target) in counted else "WARNING"  # not a required target
        reason = f": {target.reason}" if target.reason else ""
        click.echo(
            f"{level}: {row.contract} {row.address} on {target.label or target.target} ({row.network}): {target.state}{reason}",
            err=True,
        )
    sys.exit(0 if view.ok else 1)


# Derive, submit, follow (issues 5 and 6).
def _check_address(value: str | None, param: str) -> str | None:
    if value is not None and not is_address(value):
        raise click.BadParameter(f"{value!r} is not an address: give 0x followed by 40 hex digits", param_hint=param)
    return value


@cli.command(short_help="Verify a deployed contract (by name, address, or both)")
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


@cli.command(short_help="Link a proxy to its implementation on the explorer")
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


@cli.command("all", short_help="Verify every recorded deployment of the project on a network")
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


# What only server/ imports: the `explorer` extra (pyproject.toml).
WEB_STACK = ("starlette", "uvicorn", "h11", "jinja2", "markupsafe", "pygments", "yarl")


# The local explorer, standalone: `ape verify serve` (issue 4).
@cli.command(short_help="Run the local Etherscan-compatible explorer against a JSON-RPC node")
@click.option("--rpc", required=True, help="JSON-RPC URL of the node to verify against, e.g. http://127.0.0.1:8545")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on")
@click.option("--port", type=int, default=0, help="Port to listen on (default: a free port)")
@click.option(
    "--db",
    "db_path",
    default=None,
    help="SQLite file (default: ~/.ape/contract_verify/explorer-<chainid>-<genesis>.sqlite)",
)
@click.option("--api-key", "api_keys", multiple=True, help="A key that submissions must carry (repeatable)")
@click.option("--workers", type=int, default=1, show_default=True, help="Verification worker threads")
@click.option("--compile-timeout", type=float, default=None, help="Seconds a compile may take (default 120)")
def serve(
    rpc: str,
    host: str,
    port: int,
    db_path: str | None,
    api_keys: tuple[str, ...],
    workers: int,
    compile_timeout: float | None,
) -> None:
    """Serve Etherscan's contract API at <base>/api, verifying against the node at --rpc,
    until interrupted. Without --api-key, submissions need no key (as on Blockscout)."""
    import importlib
    import logging

    for name in WEB_STACK:  # an extra: told before anything starts, never a traceback
        try:
            importlib.import_module(name)
        except ImportError as err:
            raise _StartError(
                f"`ape verify serve` needs the explorer's web stack ({err.name or name} is not installed): "
                "pip install 'ape-contract-verify[explorer]'"
            ) from None
    from ape_contract_verify.logs import SERVER
    from ape_contract_verify.server.runner import ExplorerStartError
    from ape_contract_verify.server.runner import serve as run_explorer

    logging.getLogger(SERVER).setLevel(logging.INFO)
    try:
        run_explorer(rpc, host, port, db_path, api_keys, workers, echo=click.echo, compile_timeout=compile_timeout)
    except ExplorerStartError as err:
        raise _StartError(str(err))


class _StartError(click.ClickException):
    exit_code = 2  # as `python -m ape_contract_verify.server.runner`: the explorer could not start
