"""What the `ape verify` commands share: stdout kept for the JSON document, progress lines,
warnings, and the verification summary with its exit code."""

import contextlib
import json
import sys
import time
from collections.abc import Callable, Iterator
from typing import TypeVar

import click

T = TypeVar("T")


def warn(text: str) -> None:
    click.echo(f"WARNING: {text}", err=True)


@contextlib.contextmanager
def quiet_stdout(as_json: bool) -> Iterator[None]:
    """With --json, stdout carries only the JSON document: whatever Ape prints on the way
    (e.g. "INFO: Installing openzeppelin") goes to stderr."""
    if not as_json:
        yield
        return
    with contextlib.redirect_stdout(sys.stderr):
        yield


def progress(as_json: bool) -> Callable[[str, str], None]:
    """A live line on a terminal; plain lines otherwise; nothing with --json."""
    if as_json:
        return lambda address, text: None
    tty = sys.stderr.isatty()
    start: dict[str, float] = {}

    def show(address: str, text: str) -> None:
        start.setdefault(address, time.monotonic())
        line = f"{address[:10]}… {text} ({time.monotonic() - start[address]:.0f}s)"
        if tty:
            click.echo(f"\r\033[K{line}", err=True, nl=False)
        else:
            click.echo(line, err=True)

    return show


def finish(reports: list, as_json: bool) -> None:
    """Print the summary (or the JSON document) and exit: 1 if a target that counts failed
    (`contract_verify.required_targets`, default all), 0 otherwise."""
    from ape_contract_verify import api

    ok = bool(reports) and not api.failed(reports)
    if sys.stderr.isatty() and not as_json:
        click.echo("\r\033[K", err=True, nl=False)
    if as_json:
        click.echo(json.dumps({"ok": ok, "reports": [r.as_dict() for r in reports]}, indent=2))
    else:
        click.echo(api.summary_table(reports))
        if reports:  # counted: how many rows ended verified and how many did not
            from ape_contract_verify.workflow.report import tally

            click.echo(
                f"contract_verify: {len(reports)} row{'s' if len(reports) != 1 else ''}, {tally(reports)}", err=True
            )
        for report in reports:
            for warning in report.warnings:
                click.echo(f"WARNING: {report.contract}: {warning}", err=True)
            if not report.ok:
                where = f" on {report.target_label or report.target}" if report.target else ""
                click.echo(
                    f"ERROR: {report.contract} {report.address}{where}: {report.outcome}: {report.reason}", err=True
                )
    sys.exit(0 if ok else 1)


def api_call(call: Callable[[], T]) -> T:
    """Call the API; its errors (bad input, nothing recorded) are usage errors: exit 2, no traceback."""
    from ape_contract_verify.cli.options import usage_error
    from ape_contract_verify.exceptions import ContractVerifyError
    from ape_contract_verify.workflow import local_explorers

    try:
        return call()
    except ContractVerifyError as err:
        raise usage_error(err) from None
    finally:  # a command's embedded explorer ends with the command, as it always has
        local_explorers.stop_all()
