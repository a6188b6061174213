"""`ape verify abi | source | status`: read from an explorer and print.

Exit codes: 0 success, 1 the explorer said no (its reason on stderr), 2 bad input (no traceback).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

import click

from ape_contract_verify.cli.common import api_call, explorer_options, fail, quiet_stdout, warn
from ape_contract_verify.json_types import JsonObject
from ape_contract_verify.protocol.answers import ExplorerAnswer, Texts

if TYPE_CHECKING:
    from ape.cli import ApeCliContextObject

    from ape_contract_verify.cli.common import ExplorerChoice
    from ape_contract_verify.client.provider import ExplorerRecord


@click.command(short_help="Print a verified contract's ABI as JSON")
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


@click.command(short_help="Print a verified contract's settings; write its sources with --out")
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


@click.command(short_help="What is verified where (every recorded deployment), or one submission's outcome (GUID)")
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
