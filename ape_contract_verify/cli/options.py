"""Options shared by every `ape verify` command: --network, --target, --explorer-url, --api-key, -v.

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
    target_names: tuple[str, ...] = ()
    networks: tuple[str, ...] = ()  # every --network given (only `ape verify all` takes several)

    def __repr__(self) -> str:  # never show the key
        return (
            f"ExplorerChoice(network={self.network!r}, targets={list(self.target_names)!r}, "
            f"explorer_url={self.explorer_url!r}, api_key=***)"
        )

    def one_network(self) -> "ExplorerChoice":
        if len(self.networks) > 1:
            raise click.BadParameter(
                "give one network here; `ape verify all` takes several", param_hint="--network"
            )
        return self

    def for_network(self, network: Optional[str]) -> "ExplorerChoice":
        return ExplorerChoice(network, self.explorer_url, self.api_key, self.target_names, (network,) if network else ())

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

    def targets(self, chain_id: Optional[int] = None) -> list:
        """Every Target that runs for the chosen network: --target, else contract_verify.targets,
        else every configured and known one. `chain_id` once connected (custom networks)."""
        from ape import config

        from ape_contract_verify.client.targets import resolve_targets
        from ape_contract_verify.exceptions import ContractVerifyError

        ecosystem, network, known_id = self.names()
        try:
            return resolve_targets(
                ecosystem,
                network,
                known_id if known_id is not None else chain_id,
                config=config.get_config("contract_verify"),
                names=self.target_names,
                explorer_url=self.explorer_url,
                api_key=self.api_key,
            )
        except ContractVerifyError as err:
            raise click.UsageError(str(err)) from None

    def read_target(self):
        """The one target a read (abi, source, status) asks: the --target given, else the `etherscan` one."""
        if len(self.target_names) > 1:
            raise click.BadParameter("give one target to read from", param_hint="--target")
        return self.targets()[0] if self.target_names else self.target()

    def client(self, **kwargs: Any):
        """A client for the chosen network and target; bad choices become usage errors (exit 2)."""
        from ape_contract_verify.exceptions import ExplorerNotConfigured

        self.one_network()
        target = self.read_target()
        try:
            return target.client(**kwargs)
        except ExplorerNotConfigured as err:
            raise click.UsageError(str(err)) from None


def explorer_options(f):
    """Add --network, --explorer-url, --api-key and -v/--verbosity; pass `explorer` and `cli_ctx`."""

    @functools.wraps(f)
    def wrapper(*args, network=(), target_names=(), explorer_url=None, api_key=None, **kwargs):
        kwargs["explorer"] = ExplorerChoice(
            network=network[0] if network else None,
            explorer_url=explorer_url,
            api_key=api_key,
            target_names=tuple(target_names),
            networks=tuple(network),
        )
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
        "--target",
        "target_names",
        multiple=True,
        metavar="NAME",
        help="Verify on this target only (repeatable): etherscan, blockscout, sourcify, routescan, or a name "
        "configured under contract_verify.explorers [default: contract_verify.targets, else every one that applies].",
    )(wrapper)
    wrapper = click.option(
        "--network",
        "network",
        multiple=True,
        metavar="ECOSYSTEM:NETWORK",
        help="Network whose explorers to use (default: Ape's default network).",
    )(wrapper)
    return ape_cli_context()(wrapper)


def json_option(f):
    return click.option("--json", "as_json", is_flag=True, help="Print a machine-readable JSON result.")(f)
