"""Options shared by every `ape verify` command: --network, --explorer-url, --api-key, -v.

`@explorer_options` adds them and hands the command one `explorer: ExplorerChoice` argument
(plus Ape's `cli_ctx`). Picking the explorer never connects to a node: ecosystem, network and
chain id come from Ape's network manager without a provider.
"""

import functools
from dataclasses import dataclass
from typing import Any, Optional

import click
from ape.cli import ape_cli_context


@dataclass
class ExplorerChoice:
    """What the user asked for; `target()` resolves it (lazily: it loads Ape's networks and config)."""

    network: Optional[str] = None
    explorer_url: Optional[str] = None
    api_key: Optional[str] = None

    def __repr__(self) -> str:  # never show the key
        return f"ExplorerChoice(network={self.network!r}, explorer_url={self.explorer_url!r}, api_key=***)"

    def names(self) -> tuple[str, str, Optional[int]]:
        """(ecosystem, network, chain id) without connecting. Raises click.BadParameter."""
        from ape import networks

        choice = (self.network or "").strip()
        parts = choice.split(":") if choice else []
        try:
            if parts and parts[0] and parts[0] not in networks.ecosystem_names and len(parts) == 1:
                # a bare network name of the default ecosystem, e.g. `--network sepolia`
                ecosystem = networks.default_ecosystem
                parts = [ecosystem.name, parts[0]]
            else:
                ecosystem = networks.get_ecosystem(parts[0]) if parts and parts[0] else networks.default_ecosystem
            network_name = parts[1] if len(parts) > 1 and parts[1] else ecosystem.default_network_name
            network = ecosystem.get_network(network_name)
        except Exception as err:  # Ape raises several types for unknown names
            raise click.BadParameter(
                f"{choice!r}: {err}. Give ecosystem:network, e.g. ethereum:sepolia", param_hint="--network"
            ) from None
        chain_id = None
        if not network.is_local:
            try:
                chain_id = int(network.chain_id)
            except Exception:
                chain_id = None  # custom networks may only know it once connected
        return ecosystem.name, network.name, chain_id

    def target(self):
        """The ExplorerTarget (url None = the local network's embedded explorer)."""
        from ape import config

        from ape_contract_verify.exceptions import ContractVerifyError
        from ape_contract_verify.client.targets import resolve_target

        ecosystem, network, chain_id = self.names()
        try:
            return resolve_target(
                ecosystem,
                network,
                chain_id,
                explorer_url=self.explorer_url,
                api_key=self.api_key,
                config=config.get_config("contract_verify"),
            )
        except ContractVerifyError as err:
            raise click.UsageError(str(err)) from None

    def client(self, **kwargs: Any):
        """An ExplorerClient for the chosen network; bad choices become usage errors (exit 2)."""
        from ape_contract_verify.exceptions import ExplorerNotConfigured

        target = self.target()
        try:
            return target.client(**kwargs)
        except ExplorerNotConfigured as err:
            raise click.UsageError(str(err)) from None


def explorer_options(f):
    """Add --network, --explorer-url, --api-key and -v/--verbosity; pass `explorer` and `cli_ctx`."""

    @functools.wraps(f)
    def wrapper(*args, network=None, explorer_url=None, api_key=None, **kwargs):
        kwargs["explorer"] = ExplorerChoice(network=network, explorer_url=explorer_url, api_key=api_key)
        return f(*args, **kwargs)

    wrapper = click.option(
        "--api-key",
        "api_key",
        default=None,
        metavar="KEY",
        help="Explorer API key (default: the explorer's api_key_env, then $ETHERSCAN_API_KEY, then config).",
    )(wrapper)
    wrapper = click.option(
        "--explorer-url",
        "explorer_url",
        default=None,
        metavar="URL",
        help="Contract API base URL for this command, e.g. https://api.etherscan.io/v2/api or https://<blockscout>/api.",
    )(wrapper)
    wrapper = click.option(
        "--network",
        "network",
        default=None,
        metavar="ECOSYSTEM:NETWORK",
        help="Network whose explorer to use (default: Ape's default network). No node connection is made.",
    )(wrapper)
    return ape_cli_context()(wrapper)


def json_option(f):
    return click.option("--json", "as_json", is_flag=True, help="Print a machine-readable JSON result.")(f)
