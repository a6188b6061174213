"""`ape verify status` without a GUID: every recorded deployment on every target, as the explorers
answer now (workflow/status.py). Exit codes: 0 all verified (on `required_targets`), 1 something
there is not (or its proxy link is stale or missing), 2 bad input."""

import contextlib
import json
import sys
from typing import Any

import click


def overview(explorer: Any, as_json: bool, all_networks: bool, workers: int) -> None:
    from ape import config

    from ape_contract_verify.cli.verify import _connected, _quiet_stdout, _records, network_choices
    from ape_contract_verify.evm.chain import ApeProviderChain
    from ape_contract_verify.exceptions import ContractVerifyError
    from ape_contract_verify.workflow import status

    cfg = config.get_config("contract_verify")
    choices = network_choices(explorer, all_networks)
    networks: list = []
    with _quiet_stdout(as_json), contextlib.ExitStack() as stack:
        for choice in choices:
            ecosystem, network, _ = choice.names()
            label = f"{ecosystem}:{network}"
            provider_ctx = stack.enter_context(_connected(choice))
            provider = getattr(provider_ctx, "provider", None) or provider_ctx
            records = _records()
            if not records.deployments:
                click.echo(f"WARNING: no recorded deployments on {label}", err=True)
                continue
            try:
                chain_id = int(provider.chain_id)
            except Exception:
                chain_id = None
            targets, warnings = status.readable_targets(choice.targets(chain_id), provider)
            for warning in warnings:
                click.echo(f"WARNING: {warning}", err=True)
            if not targets:
                raise click.UsageError(f"no target of {label} can be read (see the warnings above)")
            opener = status.client_opener(provider, max_retries=cfg.max_retries)
            networks.append(status.NetworkStatus(label, targets, records.deployments, ApeProviderChain(provider), opener))
        if not networks:
            raise click.UsageError("no recorded deployments on the networks given; deploy with `ape run`, or give --network")
        try:
            rows = status.read_status(networks, workers=workers or status.WORKERS)
        except ContractVerifyError as err:
            raise click.UsageError(str(err)) from None
    bad = status.failing(rows, cfg.required_targets)
    if as_json:
        document = {"ok": not bad, "required_targets": cfg.required_targets, "rows": [r.as_dict() for r in rows]}
        click.echo(json.dumps(document, indent=2))
    else:
        click.echo(status.status_table(rows))
    counted = {(id(row), target.target) for row, target in bad}
    for row, target in status.failing(rows):  # on stderr with --json too: a CI log says why
        level = "ERROR" if (id(row), target.target) in counted else "WARNING"  # not a required target
        reason = f": {target.reason}" if target.reason else ""
        click.echo(f"{level}: {row.contract} {row.address} on {target.target} ({row.network}): {target.state}{reason}", err=True)
    sys.exit(1 if bad else 0)
