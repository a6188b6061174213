"""Which network and which targets a command or an API call asks for, resolved without connecting.

What --network/--target/--explorer-url/--api-key or the Python API's keywords say; ecosystem,
network and chain id come from Ape's network manager, not from a node. Bad choices raise `InvalidRequest`, naming the API's
parameter; the CLI turns that into a usage error on its option.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ape_contract_verify.exceptions import InvalidRequest

if TYPE_CHECKING:
    from ape.api import ProviderAPI

    from ape_contract_verify.client.targets import Target


@dataclass
class NetworkChoice:
    """What the caller asked for; `targets()` resolves it (lazily: it loads Ape's networks and config)."""

    network: str | None = None
    explorer_url: str | None = None
    api_key: str | None = None
    target_names: tuple[str, ...] = ()
    networks: tuple[str, ...] = ()  # every network given (only `verify_all` and `status` take several)

    def __repr__(self) -> str:  # never show the key
        return (
            f"{type(self).__name__}(network={self.network!r}, targets={list(self.target_names)!r}, "
            f"explorer_url={self.explorer_url!r}, api_key=***)"
        )

    def one_network(self) -> NetworkChoice:
        if len(self.networks) > 1:
            raise InvalidRequest(
                "network",
                "several networks given",
                "give one network here; verify_all and status (`ape verify all`, `ape verify status`) take several",
            )
        return self

    def for_network(self, network: str | None) -> NetworkChoice:
        return type(self)(network, self.explorer_url, self.api_key, self.target_names, (network,) if network else ())

    def names(self) -> tuple[str, str, int | None]:
        """(ecosystem, network, chain id) without connecting."""
        from ape import networks

        choice = (self.network or "").strip()
        parts = [*choice.split(":"), ""]  # "": the default ecosystem or network
        try:
            if len(parts) == 2 and parts[0] not in networks.ecosystem_names:
                parts = ["", parts[0]]  # a bare network name of the default ecosystem, e.g. `sepolia`
            ecosystem = networks.get_ecosystem(parts[0]) if parts[0] else networks.default_ecosystem
            network = ecosystem.get_network(parts[1] or ecosystem.default_network_name)
        except Exception as err:  # Ape raises several types for unknown names
            raise InvalidRequest(
                "network", f"{choice!r}: {err}", "give ecosystem:network, e.g. ethereum:sepolia"
            ) from None
        try:  # a local chain's id is its node's; custom networks may only know it once connected
            chain_id = None if network.is_local else int(network.chain_id)
        except Exception:
            chain_id = None
        return ecosystem.name, network.name, chain_id

    def label(self) -> str:
        return ":".join(self.names()[:2])  # ecosystem:network

    def targets(self, chain_id: int | None = None) -> list[Target]:
        """Every Target that runs for the chosen network: the names given, else contract_verify.targets,
        else every configured and known one. `chain_id` once connected (custom networks)."""
        from ape import config

        from ape_contract_verify.client.targets import resolve_targets

        ecosystem, network, known_id = self.names()
        return resolve_targets(
            ecosystem,
            network,
            known_id if known_id is not None else chain_id,
            config=config.get_config("contract_verify"),
            names=self.target_names,
            explorer_url=self.explorer_url,
            api_key=self.api_key,
        )

    def read_target(self) -> Target:
        """The one target a read (abi, source, a GUID's status) asks: the one named (the API's `target`),
        else the network's own `etherscan` one (url None = the local network's embedded explorer)."""
        from ape import config

        from ape_contract_verify.client.targets import resolve_target

        if self.target_names:
            return self.targets()[0]
        ecosystem, network, chain_id = self.names()
        cfg = config.get_config("contract_verify")
        return resolve_target(ecosystem, network, chain_id, self.explorer_url, self.api_key, cfg)


def connected_label(provider: ProviderAPI) -> str:
    """`ecosystem:network` of a connected provider."""
    return f"{provider.network.ecosystem.name}:{provider.network.name}"


def chain_id_of(provider: ProviderAPI) -> int | None:
    try:
        return int(provider.chain_id)
    except Exception:  # a node that cannot say: the targets known by name still resolve
        return None
