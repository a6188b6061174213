"""`ape verify …`: thin commands that parse the options, call `ape_contract_verify.api` and print.

`abi`, `source` and `status` read from an explorer; `contract`, `proxy` and `all` verify; `serve`
runs the local explorer. Exit codes: 0 success (verified, or already verified), 1 the explorer
said no or a verification failed (its reason on stderr), 2 bad input (no traceback).

`@explorer_options` adds what every command shares (--network, --target, --explorer-url,
--api-key, --json and -v), and hands the command one `explorer: ExplorerChoice` argument (plus
`as_json` and Ape's `cli_ctx`). Picking the explorer never connects to a node: ecosystem, network
and chain id come from Ape's network manager without a provider. Stdout carries only the JSON
document with --json; the progress is a live line on a terminal; the summary's exit code follows
`required_targets`.
"""

from __future__ import annotations

import contextlib
import functools
import json
import re
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, NoReturn, TypedDict, TypeVar

import click
from ape.cli import ape_cli_context

from ape_contract_verify.exceptions import ContractVerifyError, ExplorerError, ExplorerNotConfigured, InvalidRequest
from ape_contract_verify.json_types import JsonObject
from ape_contract_verify.protocol.answers import ExplorerAnswer, Texts
from ape_contract_verify.request import CodeFormat
from ape_contract_verify.workflow.choice import NetworkChoice

if TYPE_CHECKING:
    from ape.cli import ApeCliContextObject

    from ape_contract_verify.api import Contract, Progress
    from ape_contract_verify.client.provider import ExplorerRecord
    from ape_contract_verify.workflow.report import Report

T = TypeVar("T")
# A command's function as the options decorators take it and give it back: the options it gains
# are click's to pass, so its parameters are not the wrapped function's.
Command = Callable[..., T]

# The API's parameter names, as the options and arguments that set them: the API checks the input,
# the CLI says its errors on these.
OPTION_OF = {
    "network": "--network",
    "targets": "--target",
    "explorer_url": "--explorer-url",
    "api_key": "--api-key",
    "contracts": "NAME_OR_ADDRESS / ADDRESS",
    "address": "ADDRESS",
    "expected_implementation": "--expected-implementation",
    "all_networks": "--all-networks",
}


class Where(TypedDict):
    """The API's keywords for the explorer options."""

    targets: tuple[str, ...]
    explorer_url: str | None
    api_key: str | None


class ReadFrom(TypedDict):
    """The one target a read asks, as the API's keywords."""

    network: str | None
    target: str | None
    explorer_url: str | None
    api_key: str | None


class ExplorerChoice(NetworkChoice):
    """The options as a NetworkChoice; its errors are usage errors (exit 2, no traceback), on their option."""

    def where(self) -> Where:
        return {"targets": self.target_names, "explorer_url": self.explorer_url, "api_key": self.api_key}

    def read_from(self) -> ReadFrom:
        """The one network and target a read (abi, source, a GUID's status) asks."""
        self.one_network()
        if len(self.target_names) > 1:
            raise click.BadParameter("give one target to read from", param_hint="--target")
        target = self.target_names[0] if self.target_names else None
        return {"network": self.network, "target": target, "explorer_url": self.explorer_url, "api_key": self.api_key}


_OPTIONS = (
    click.option(
        "--network",
        multiple=True,
        metavar="ECOSYSTEM:NETWORK",
        help="Network whose explorers to use (default: Ape's default network).",
    ),
    click.option(
        "--target",
        "target_names",
        multiple=True,
        metavar="NAME",
        help="Verify on this target only (repeatable): etherscan, blockscout, sourcify, routescan, or a name "
        "configured under contract_verify.explorers [default: contract_verify.targets, else every one that applies].",
    ),
    click.option(
        "--explorer-url",
        metavar="URL",
        help="Contract API base URL for this command, e.g. https://api.etherscan.io/v2/api or https://<blockscout>/api.",
    ),
    click.option(
        "--api-key",
        metavar="KEY",
        help="Explorer API key (default: the explorer's api_key_env, then $ETHERSCAN_API_KEY, then config).",
    ),
    click.option("--json", "as_json", is_flag=True, help="Print a machine-readable JSON result."),
)


def explorer_options(reads: bool = False) -> Callable[[Command[T]], Command[T]]:
    """Add --network, --target, --explorer-url, --api-key, --json and -v/--verbosity; pass `explorer`,
    `as_json` and `cli_ctx`. The API's errors become exit codes (`api_error`; `reads`: the command
    reads from an explorer), and the command's embedded explorer ends with it."""

    def decorate(f: Command[T]) -> Command[T]:
        @functools.wraps(f)
        def wrapper(
            *args: object,
            network: tuple[str, ...] = (),
            target_names: tuple[str, ...] = (),
            explorer_url: str | None = None,
            api_key: str | None = None,
            **kwargs: object,
        ) -> T:
            kwargs["explorer"] = ExplorerChoice(
                network[0] if network else None, explorer_url, api_key, target_names, network
            )
            try:
                return f(*args, **kwargs)
            except ContractVerifyError as err:
                api_error(err, bool(kwargs["as_json"]) if reads else None)
            finally:  # a command's embedded explorer ends with the command, as it always has
                from ape_contract_verify.workflow import local_explorers

                local_explorers.stop_all()

        for option in reversed(_OPTIONS):
            wrapper = option(wrapper)
        # Ape types its decorator factory as a bare Callable: this is what it is.
        context: Callable[[Command[T]], Command[T]] = ape_cli_context()
        return context(wrapper)

    return decorate


def warn(text: str) -> None:
    click.echo(f"WARNING: {text}", err=True)


def fail(reason: str, as_json: bool, **extra: str) -> NoReturn:
    """Exit 1 with the explorer's reason on stderr (and a JSON result on stdout with --json)."""
    if as_json:
        click.echo(json.dumps({"ok": False, "reason": reason, **extra}))
    click.echo(f"ERROR: {reason}", err=True)
    sys.exit(1)


def api_error(err: ContractVerifyError, read_json: bool | None = None) -> NoReturn:
    """The API's error as an exit code (never a traceback): bad input and nothing recorded are usage
    errors (exit 2), on the option they name; so is every error of a command that verifies. A
    read's (`read_json`: whether it prints JSON) other errors are the explorer saying no: exit 1 (`fail`)."""
    from ape_contract_verify.workflow.recorded import NoRecords

    if isinstance(err, InvalidRequest) and err.param in OPTION_OF:
        # The API's keywords in its text (`all_networks`) said as the command's options.
        text = re.sub(r"\b[a-z]+(?:_[a-z]+)+\b", lambda m: OPTION_OF.get(m[0], m[0]), f"{err.problem}. {err.fix}")
        raise click.BadParameter(text, param_hint=OPTION_OF[err.param]) from None
    if read_json is None or isinstance(err, (InvalidRequest, ExplorerNotConfigured, NoRecords)):
        raise click.UsageError(str(err)) from None
    answer = err.answer if isinstance(err, ExplorerError) else None
    extra = {"outcome": answer.outcome.value} if isinstance(answer, ExplorerAnswer) else {"error": type(err).__name__}
    fail(str(err), read_json, **extra)


def quiet_stdout(as_json: bool) -> contextlib.AbstractContextManager[object]:
    """With --json, stdout carries only the JSON document: whatever Ape prints on the way
    (e.g. "INFO: Installing openzeppelin") goes to stderr."""
    return contextlib.redirect_stdout(sys.stderr) if as_json else contextlib.nullcontext()


@contextlib.contextmanager
def progress(as_json: bool) -> Iterator[Progress]:
    """What is happening to each contract, as `on_progress`: on a terminal one live line (rich's
    `Live`, gone once the block ends, before the summary); a plain line each otherwise (a CI
    log); nothing with --json."""
    if as_json:
        yield lambda address, text: None
        return
    start: dict[str, float] = {}

    def line(address: str, text: str) -> str:
        start.setdefault(address, time.monotonic())
        return f"{address[:10]}… {text} ({time.monotonic() - start[address]:.0f}s)"

    if not sys.stderr.isatty():
        yield lambda address, text: click.echo(line(address, text), err=True)
        return
    from rich.text import Text

    from ape_contract_verify.workflow.report import live_line

    with live_line(sys.stderr, transient=True) as live:
        yield lambda address, text: live.update(Text(line(address, text)), refresh=True)


def verify_and_finish(as_json: bool, call: Callable[[Progress], list[Report]], report_path: str | None = None) -> None:
    """Call a verifying API function with the progress (stdout kept for --json), then `finish`."""
    with quiet_stdout(as_json), progress(as_json) as show:
        reports = call(show)
    finish(reports, as_json, report_path)


def finish(reports: list[Report], as_json: bool, report_path: str | None = None) -> NoReturn:
    """Print the summary (or the JSON document), also written to `report_path` (for CI), and exit:
    1 if a target that counts failed (`contract_verify.required_targets`, default all), 0 otherwise."""
    from ape_contract_verify import api
    from ape_contract_verify.workflow.report import rows_line, summary_table

    ok = bool(reports) and not api.failed(reports)
    rows = [r.as_dict() for r in reports]
    if report_path:
        with open(report_path, "w") as handle:
            json.dump({"ok": not api.failed(reports, required_only=False), "reports": rows}, handle, indent=2)
    if as_json:
        click.echo(json.dumps({"ok": ok, "reports": rows}, indent=2))
    else:
        click.echo(summary_table(reports, styled=sys.stdout.isatty()))
        if reports:  # counted: how many rows ended verified and how many did not
            click.echo(rows_line(reports), err=True)
        for report in reports:
            for warning in report.warnings:
                click.echo(f"WARNING: {report.contract}: {warning}", err=True)
            if not report.ok:
                where = f" on {report.target_label or report.target}" if report.target else ""
                click.echo(
                    f"ERROR: {report.contract} {report.address}{where}: {report.outcome}: {report.reason}", err=True
                )
    sys.exit(0 if ok else 1)


@click.group(short_help="Verify deployed contracts on Etherscan-style explorers")
def cli() -> None:
    """Verify deployed contracts on Etherscan-style explorers (Etherscan V2, Blockscout,
    Routescan, or the plugin's own local explorer)."""


# Explorer reads (issue 3).
@cli.command(short_help="Print a verified contract's ABI as JSON")
@explorer_options(reads=True)
@click.argument("address")
def abi(cli_ctx: ApeCliContextObject, address: str, explorer: ExplorerChoice, as_json: bool) -> None:
    """Print the ABI of the verified contract at ADDRESS."""
    from ape_contract_verify import api

    result = api.abi(address, **explorer.read_from())
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
@explorer_options(reads=True)
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

    record = api.source(address, **explorer.read_from())
    if not record.verified:
        fail(f"{address}: {Texts.NOT_VERIFIED}", as_json, outcome="not verified")

    written: list[str] = []
    if out is not None:
        if out.exists() and any(out.iterdir()):
            raise click.BadParameter(f"{out} is not empty; give a new or empty directory", param_hint="--out")
        files = {out / _safe_relative(path): content for path, content in record.files.items()}
        files[out / "settings.json"] = json.dumps(_settings_document(record), indent=2) + "\n"
        for target, content in files.items():
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content, encoding="utf-8")
            written.append(str(target))

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
@explorer_options(reads=True)
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

    answer = api.job_status(
        guid, proxy=proxy, wait=wait_, interval=interval, timeout=timeout, on_progress=progress, **explorer.read_from()
    )
    ok = answer.outcome.is_success or not answer.outcome.is_final
    outcome, reason = answer.outcome.value, answer.reason
    document = {"ok": ok, "guid": guid.strip(), "outcome": outcome, "status": answer.status, "reason": reason}
    click.echo(json.dumps(document) if as_json else f"{outcome}: {reason}")
    if not ok:
        click.echo(f"ERROR: {reason or outcome}", err=True)
        sys.exit(1)


def overview(explorer: ExplorerChoice, as_json: bool, all_networks: bool, workers: int | None) -> None:
    """`ape verify status` without a GUID: the status table of every recorded deployment (`api.status`),
    why each row fails on stderr, and the exit code: 0 all verified on `required_targets`, 1 not."""
    from ape_contract_verify import api

    with quiet_stdout(as_json):
        view = api.status(
            explorer.networks or None, all_networks=all_networks, **explorer.where(), workers=workers, on_warning=warn
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
@cli.command(short_help="Verify a deployed contract (by name, address, or both)")
@explorer_options()
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

    explorer.one_network()  # the API takes one network here: the others are not passed
    contracts: list[Contract] = [(name_or_address, address) if address is not None else name_or_address]

    def asked(call: Callable[..., T], **more: object) -> T:  # what a dry run and a run are both given
        return call(
            *contracts,
            network=explorer.network,
            **explorer.where(),
            code_format=CodeFormat.SINGLE_FILE if flatten else None,
            check=False if no_check else None,  # None: the config's
            constructor_args=constructor_args,
            on_warning=warn,
            **more,
        )

    if dry_run:
        with quiet_stdout(as_json):
            plan = asked(api.dry_run)
            for line in plan.lines(out):
                click.echo(line)
        sys.exit(0 if plan.ok else 1)
    verify_and_finish(as_json, lambda show: asked(api.verify, force=force, on_progress=show))


@cli.command(short_help="Link a proxy to its implementation on the explorer")
@explorer_options()
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
@explorer_options()
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

    verify_and_finish(
        as_json,
        lambda show: api.verify_all(
            explorer.networks or None,
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
