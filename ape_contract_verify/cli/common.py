"""What the `ape verify` commands share: the explorer options, JSON-clean stdout, progress,
warnings, the API's errors as exit codes, the summary.

`@explorer_options` adds --network, --target, --explorer-url, --api-key, --json and -v, and hands
the command one `explorer: ExplorerChoice` argument (plus `as_json` and Ape's `cli_ctx`). Picking the explorer never
connects to a node: ecosystem, network and chain id come from Ape's network manager without a
provider. Stdout carries only the JSON document with --json; the progress is a live line on a
terminal; the summary's exit code follows `required_targets`."""

from __future__ import annotations

import contextlib
import functools
import json
import sys
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, NoReturn, TypedDict, TypeVar

import click
from ape.cli import ape_cli_context

from ape_contract_verify.exceptions import ContractVerifyError, ExplorerError, ExplorerNotConfigured, InvalidRequest
from ape_contract_verify.workflow.choice import NetworkChoice

if TYPE_CHECKING:
    from ape_contract_verify.workflow.report import Report

T = TypeVar("T")
# A command's function as the options decorators take it and give it back: the options it gains
# are click's to pass, so its parameters are not the wrapped function's.
Command = Callable[..., T]
Progress = Callable[[str, str], None]

# The API's parameter names, as the options that set them.
OPTION_OF = {"network": "--network", "targets": "--target", "explorer_url": "--explorer-url", "api_key": "--api-key"}


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
    """The options as a NetworkChoice; its errors are usage errors (exit 2, no traceback)."""

    def where(self) -> Where:
        return {"targets": self.target_names, "explorer_url": self.explorer_url, "api_key": self.api_key}

    def read_from(self) -> ReadFrom:
        """The one network and target a read (abi, source, a GUID's status) asks."""
        self.one_network()
        if len(self.target_names) > 1:
            raise click.BadParameter("give one target to read from", param_hint="--target")
        target = self.target_names[0] if self.target_names else None
        return {"network": self.network, "target": target, "explorer_url": self.explorer_url, "api_key": self.api_key}

    def one_network(self) -> ExplorerChoice:
        if len(self.networks) > 1:
            raise click.BadParameter("give one network here; `ape verify all` takes several", param_hint="--network")
        return self

    def networks_or_all(self, all_networks: bool) -> tuple[str, ...] | None:
        """The networks given (None: the API's default), refused alongside --all-networks."""
        if all_networks and self.networks:
            raise click.UsageError("give --network or --all-networks, not both")
        return self.networks or None


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


def explorer_options(f: Command[T]) -> Command[T]:
    """Add --network, --target, --explorer-url, --api-key, --json and -v/--verbosity; pass `explorer`,
    `as_json` and `cli_ctx`."""

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
        return f(*args, **kwargs)

    for option in reversed(_OPTIONS):
        wrapper = option(wrapper)
    # Ape types its decorator factory as a bare Callable: this is what it is.
    context: Callable[[Command[T]], Command[T]] = ape_cli_context()
    return context(wrapper)


def warn(text: str) -> None:
    click.echo(f"WARNING: {text}", err=True)


def fail(reason: str, as_json: bool, **extra: str) -> NoReturn:
    """Exit 1 with the explorer's reason on stderr (and a JSON result on stdout with --json)."""
    if as_json:
        click.echo(json.dumps({"ok": False, "reason": reason, **extra}))
    click.echo(f"ERROR: {reason}", err=True)
    sys.exit(1)


def usage_error(err: ContractVerifyError) -> click.ClickException:
    """A ContractVerifyError from the API as click's usage error (exit 2), on its option when it names one."""
    if isinstance(err, InvalidRequest) and err.param in OPTION_OF:
        return click.BadParameter(f"{err.problem}. {err.fix}", param_hint=OPTION_OF[err.param])
    return click.UsageError(str(err))


def api_call(call: Callable[[], T], read_json: bool | None = None) -> T:
    """Call the API, mapping its errors to exit codes (never a traceback): bad input and nothing
    recorded are usage errors (exit 2). A read's (`read_json`: whether it prints JSON) target
    that cannot be read is one too; the explorer's refusals exit 1 (`fail`)."""
    from ape_contract_verify.protocol.answers import ExplorerAnswer
    from ape_contract_verify.workflow import local_explorers

    try:
        return call()
    except ContractVerifyError as err:
        if read_json is None or isinstance(err, (InvalidRequest, ExplorerNotConfigured)):
            raise usage_error(err) from None
        answer = err.answer if isinstance(err, ExplorerError) else None
        extra = (
            {"outcome": answer.outcome.value} if isinstance(answer, ExplorerAnswer) else {"error": type(err).__name__}
        )
        fail(str(err), read_json, **extra)
    finally:  # a command's embedded explorer ends with the command, as it always has
        local_explorers.stop_all()


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
        reports = api_call(lambda: call(show))
    finish(reports, as_json, report_path)


def finish(reports: list[Report], as_json: bool, report_path: str | None = None) -> NoReturn:
    """Print the summary (or the JSON document), also written to `report_path` (for CI), and exit:
    1 if a target that counts failed (`contract_verify.required_targets`, default all), 0 otherwise."""
    from ape_contract_verify import api
    from ape_contract_verify.workflow.report import rows_line, summary_table

    ok = bool(reports) and not api.failed(reports)
    if report_path:
        with open(report_path, "w") as handle:
            document = {"ok": not api.failed(reports, required_only=False), "reports": [r.as_dict() for r in reports]}
            json.dump(document, handle, indent=2)
    if as_json:
        click.echo(json.dumps({"ok": ok, "reports": [r.as_dict() for r in reports]}, indent=2))
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
