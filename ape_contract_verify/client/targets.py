"""Where a network's requests go, and with which key.

Order of precedence:
- URL: `--explorer-url`, then `contract_verify.explorers.<ecosystem>.<network>.url`, then
  Etherscan API V2 (`https://api.etherscan.io/v2/api` + `chainid`) for chains it serves.
  A local network with nothing configured gets `url=None`: use the embedded local explorer.
- API key: `--api-key`, then the explorer's `api_key_env` variable, then `ETHERSCAN_API_KEY`,
  then an `api_key` entry in the explorer's config.
"""

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Optional
from urllib.parse import urlsplit, urlunsplit

from ape_contract_verify.exceptions import ExplorerNotConfigured, InvalidRequest
from ape_contract_verify.protocol.secrets import ApiKey

ETHERSCAN_V2_URL = "https://api.etherscan.io/v2/api"
DEFAULT_KEY_ENV = "ETHERSCAN_API_KEY"

# Chains Etherscan API V2 serves (a subset of https://api.etherscan.io/v2/chainlist), by chain id.
ETHERSCAN_V2_CHAINS: dict[int, str] = {
    1: "ethereum:mainnet",
    11155111: "ethereum:sepolia",
    17000: "ethereum:holesky",
    560048: "ethereum:hoodi",
    10: "optimism:mainnet",
    11155420: "optimism:sepolia",
    42161: "arbitrum:mainnet",
    421614: "arbitrum:sepolia",
    42170: "arbitrum:nova",
    8453: "base:mainnet",
    84532: "base:sepolia",
    137: "polygon:mainnet",
    80002: "polygon:amoy",
    56: "bsc:mainnet",
    97: "bsc:testnet",
    59144: "linea:mainnet",
    59141: "linea:sepolia",
    534352: "scroll:mainnet",
    534351: "scroll:sepolia",
    81457: "blast:mainnet",
    168587773: "blast:sepolia",
    5000: "mantle:mainnet",
    5003: "mantle:sepolia",
    100: "gnosis:mainnet",
    43114: "avalanche:mainnet",
    43113: "avalanche:fuji",
    1284: "moonbeam:mainnet",
    252: "fraxtal:mainnet",
    480: "world-chain:mainnet",
    130: "unichain:mainnet",
    146: "sonic:mainnet",
    33139: "apechain:mainnet",
    42220: "celo:mainnet",
    167000: "taiko:mainnet",
}
KNOWN_CHAIN_IDS: dict[str, int] = {name: chain_id for chain_id, name in ETHERSCAN_V2_CHAINS.items()}
LOCAL_NETWORKS = ("local",)


@dataclass(frozen=True)
class Target:
    """One place that verifies, for one network. `url=None` means: use the embedded local explorer.

    `kind` is `etherscan` (an Etherscan-style contract API: Etherscan V2, Blockscout, Routescan, the
    local explorer) or `sourcify` (Sourcify API v2). `chain_id_param` names the query parameter that
    carries the chain id (`chainid` for Etherscan V2, `chain_id` for Blockscout's Pro API), if any."""

    ecosystem: str
    network: str
    url: Optional[str]
    chain_id: Optional[int]
    api_key: Optional[ApiKey]
    calls_per_second: float = 3.0
    browser_url: Optional[str] = None
    name: str = "etherscan"
    kind: str = "etherscan"
    chain_id_param: Optional[str] = None

    @property
    def is_local(self) -> bool:
        return self.url is None

    @property
    def sends_chain_id(self) -> bool:
        return bool(self.url) and is_etherscan_v2(self.url)

    def client(self, **kwargs: Any):
        """An ExplorerClient for this target (the caller handles `url=None` first)."""
        from ape_contract_verify.client.etherscan import ExplorerClient

        if self.url is None:
            raise ExplorerNotConfigured(
                f"{self.ecosystem}:{self.network} is local and has no explorer URL; start "
                "`ape verify serve` and pass --explorer-url http://127.0.0.1:<port>/api"
            )
        return ExplorerClient(
            self.url,
            api_key=self.api_key,
            chain_id=self.chain_id if self.sends_chain_id else None,
            calls_per_second=self.calls_per_second,
            **kwargs,
        )


ExplorerTarget = Target  # the name before targets had names


def is_etherscan_v2(url: str) -> bool:
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    return (host == "etherscan.io" or host.endswith(".etherscan.io")) and "/v2/" in parts.path + "/"


def normalize_url(url: str, param: str = "--explorer-url") -> str:
    """Check a base URL; a bare host gets the spec's `/api` path."""
    text = str(url or "").strip()
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise InvalidRequest(
            param, f"{text!r} is not an http(s) URL", "give the contract API base, e.g. https://api.etherscan.io/v2/api"
        )
    if parts.query or parts.fragment:
        raise InvalidRequest(param, "has a query or fragment", "give the base URL only (keys go in --api-key)")
    path = parts.path if parts.path not in ("", "/") else "/api"
    return urlunsplit((parts.scheme, parts.netloc, path.rstrip("/") or "/api", "", ""))


def loopback_pages(url: Optional[str]) -> Optional[str]:
    """The pages of an explorer on this machine (`ape verify serve`): its API's `/api` is beside
    them, so links need no `browser_url`. Public explorers' pages live on other hosts: no guess."""
    if not url:
        return None
    parts = urlsplit(url)
    if parts.hostname not in ("127.0.0.1", "localhost", "::1") or not parts.path.rstrip("/").endswith("/api"):
        return None
    return urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/")[: -len("/api")], "", "")).rstrip("/")


def is_local_network(network: str) -> bool:
    return network in LOCAL_NETWORKS or network.endswith("-fork")


def resolve_url(
    ecosystem: str,
    network: str,
    chain_id: Optional[int] = None,
    explorer_url: Optional[str] = None,
    configured_url: Optional[str] = None,
) -> Optional[str]:
    """The base URL for a network; None for a local network with nothing configured."""
    if explorer_url:
        return normalize_url(explorer_url, "--explorer-url")
    if configured_url:
        return normalize_url(configured_url, f"contract_verify.explorers.{ecosystem}.{network}.url")
    if is_local_network(network):
        return None
    if chain_id is None:
        chain_id = KNOWN_CHAIN_IDS.get(f"{ecosystem}:{network}")
    if chain_id in ETHERSCAN_V2_CHAINS:
        return ETHERSCAN_V2_URL
    raise ExplorerNotConfigured(
        f"No explorer known for {ecosystem}:{network} (chain id {chain_id}). Set "
        f"contract_verify.explorers.{ecosystem}.{network}.url in ape-config.yaml "
        "(e.g. a Blockscout `https://<explorer>/api` or a Routescan URL), or pass --explorer-url."
    )


def resolve_api_key(
    api_key: Optional[str] = None,
    api_key_env: Optional[str] = None,
    configured_key: Optional[str] = None,
    environ: Optional[Mapping[str, str]] = None,
) -> Optional[ApiKey]:
    """`--api-key`, then the per-explorer env var, then ETHERSCAN_API_KEY, then config."""
    environ = os.environ if environ is None else environ
    candidates = [api_key]
    if api_key_env:
        candidates.append(environ.get(api_key_env))
    candidates += [environ.get(DEFAULT_KEY_ENV), configured_key]
    for value in candidates:
        if value and str(value).strip():
            return ApiKey(str(value))
    return None


def resolve_target(
    ecosystem: str,
    network: str,
    chain_id: Optional[int] = None,
    explorer_url: Optional[str] = None,
    api_key: Optional[str] = None,
    config: Optional[Any] = None,
    environ: Optional[Mapping[str, str]] = None,
) -> ExplorerTarget:
    """Everything needed to talk to one network's explorer. `config` is a ContractVerifyConfig."""
    explorer = config.explorer_for(ecosystem, network) if config is not None else None
    url = resolve_url(ecosystem, network, chain_id, explorer_url, getattr(explorer, "url", None))
    if chain_id is None:
        chain_id = KNOWN_CHAIN_IDS.get(f"{ecosystem}:{network}")
    if url and is_etherscan_v2(url) and chain_id is None:
        raise ExplorerNotConfigured(
            f"Etherscan API V2 needs a chain id and none is known for {ecosystem}:{network}; "
            "pick a network with --network, or pass a non-Etherscan --explorer-url"
        )
    key = resolve_api_key(api_key, getattr(explorer, "api_key_env", None), _configured_key(config, explorer), environ)
    rate = getattr(explorer, "calls_per_second", None) or getattr(config, "calls_per_second", None) or 3.0
    return ExplorerTarget(
        ecosystem=ecosystem,
        network=network,
        url=url,
        chain_id=chain_id,
        api_key=key,
        calls_per_second=float(rate),
        browser_url=getattr(explorer, "browser_url", None) or loopback_pages(url),
    )


def _configured_key(config: Any, explorer: Any) -> Optional[str]:
    """A key written in config: per explorer (`api_key`), else top-level `contract_verify.api_key`."""
    for model in (explorer, config):
        if model is None:
            continue
        value = getattr(model, "api_key", None) or (getattr(model, "model_extra", None) or {}).get("api_key")
        if value:
            return str(value)
    return None


def resolve_targets(
    ecosystem: str,
    network: str,
    chain_id: Optional[int] = None,
    *,
    config: Optional[Any] = None,
    names: Sequence[str] = (),
    explorer_url: Optional[str] = None,
    api_key: Optional[str] = None,
    environ: Optional[Mapping[str, str]] = None,
) -> list[Target]:
    """Every target that runs for a network: `names` (from --target), else `contract_verify.targets`,
    else every configured and known one. Raises ExplorerNotConfigured when none applies."""
    return [resolve_target(ecosystem, network, chain_id, explorer_url, api_key, config, environ)]
