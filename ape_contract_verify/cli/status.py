"""`ape verify status` without a GUID: the status table of every recorded deployment, and its exit code.

Every deployment on every target, as the explorers answer now (`api.status`). Exit codes: 0 all verified (on `required_targets`), 1 something there is
not (or its proxy link is stale or missing), 2 bad input."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

import click

from ape_contract_verify.cli.common import api_call, quiet_stdout, warn

if TYPE_CHECKING:
    from ape_contract_verify.cli.options import ExplorerChoice


def overview(explorer: ExplorerChoice, as_json: bool, all_networks: bool, workers: int | None) -> None:
    from ape_contract_verify import api

    if all_networks and explorer.networks:
        raise click.UsageError("give --network or --all-networks, not both")
    with quiet_stdout(as_json):
        view = api_call(
            lambda: api.status(
                explorer.networks or None,
                all_networks=all_networks,
                targets=explorer.target_names,
                explorer_url=explorer.explorer_url,
                api_key=explorer.api_key,
                workers=workers,
                on_warning=warn,
            )
        )
    if as_json:
        click.echo(json.dumps(view.as_dict(), indent=2))
    else:
        click.echo(view.table(styled=sys.stdout.isatty()))
    counted = {(id(row), target.target) for row, target in view.failing()}
    for row, target in view.failing(required_only=False):  # on stderr with --json too: a CI log says why
        level = "ERROR" if (id(row), target.target) in counted else "WARNING"  # not a required target
        reason = f": {target.reason}" if target.reason else ""
        click.echo(
            f"{level}: {row.contract} {row.address} on {target.label or target.target} ({row.network}): {target.state}{reason}",
            err=True,
        )
    sys.exit(0 if view.ok else 1)
