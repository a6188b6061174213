"""What the `ape verify` commands share: JSON-clean stdout, progress, warnings, the summary, exit codes.

Stdout carries only the JSON document with --json; the progress is a live line on a terminal;
the summary's exit code follows `required_targets`."""

from __future__ import annotations

import contextlib
import json
import sys
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, TypeVar

import click

if TYPE_CHECKING:
    from ape_contract_verify.workflow.report import Report

T = TypeVar("T")


def warn(text: str) -> None:
    click.echo(f"WARNING: {text}", err=True)


def quiet_stdout(as_json: bool) -> contextlib.AbstractContextManager[object]:
    """With --json, stdout carries only the JSON document: whatever Ape prints on the way
    (e.g. "INFO: Installing openzeppelin") goes to stderr."""
    return contextlib.redirect_stdout(sys.stderr) if as_json else contextlib.nullcontext()


@contextlib.contextmanager
def progress(as_json: bool) -> Iterator[Callable[[str, str], None]]:
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


def finish(reports: list[Report], as_json: bool) -> None:
    """Print the summary (or the JSON document) and exit: 1 if a target that counts failed
    (`contract_verify.required_targets`, default all), 0 otherwise."""
    from ape_contract_verify import api
    from ape_contract_verify.workflow.report import rows_line, summary_table

    ok = bool(reports) and not api.failed(reports)
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
