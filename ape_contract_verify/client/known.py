"""The targets the plugin knows without configuration, and whose server each one is.

Etherscan API V2 and the chains it serves, Sourcify's public server, Routescan, and the Blockscout
instances and explorer pages Ape's `evmchains` package lists per chain (offline data, imported only
when a network's targets are resolved)."""

import functools
import json
from importlib import resources
from typing import TypedDict, cast
from urllib.parse import urlsplit

from ape_contract_verify.client.provider import Flavour, Kind

SOURCIFY_URL = "https://sourcify.dev/server/"
# Sourcify's pages for a contract are `<repo>/<chainId>/<address>`, as hardhat-verify 3 links them
# (its SOURCIFY_REPO_URL; `getContractUrl` there is `${url}/${chainId}/${address}`).
SOURCIFY_REPO_URL = "https://repo.sourcify.dev"
BLOCKSCOUT_PRO_URL = "https://api.blockscout.com/v2/api"
ETHERSCAN_V2_URL = "https://api.etherscan.io/v2/api"
ROUTESCAN_URL = "https://api.routescan.io/v2/network/{network}/evm/{chain_id}/etherscan/api"


# The tables (`known.json`): the chains Etherscan API V2 serves (a subset of
# https://api.etherscan.io/v2/chainlist), by chain id, as `ecosystem:network`; calls per second
# when neither the target nor the top level sets one (Blockscout's free tier allows 5/s per IP:
# docs.blockscout.com, "PRO API", runtime.exs API_RATE_LIMIT_BY_IP 300/min; Routescan's 2/s
# without a key); Etherscan's pages for chains Etherscan V2 serves that evmchains lists without
# them; explorer hosts that are not an Etherscan (their names end in "scan" too).
_TABLES = json.loads(resources.files("ape_contract_verify.client").joinpath("known.json").read_text())
ETHERSCAN_V2_CHAINS: dict[int, str] = {int(chain_id): name for chain_id, name in _TABLES["etherscan_v2_chains"].items()}
KNOWN_CHAIN_IDS: dict[str, int] = {name: chain_id for chain_id, name in ETHERSCAN_V2_CHAINS.items()}
DEFAULT_RATES: dict[str, float] = _TABLES["default_rates"]
_ETHERSCAN_PAGES = {int(chain_id): url for chain_id, url in _TABLES["etherscan_pages"].items()}
_NOT_ETHERSCAN = set(_TABLES["not_etherscan"])

# Environment variables read for a known target's key when its config names none.
BLOCKSCOUT_KEY_ENV = "BLOCKSCOUT_API_KEY"
ROUTESCAN_KEY_ENV = "ROUTESCAN_API_KEY"


class ListedExplorer(TypedDict, total=False):
    """One of evmchains' `explorers` entries for a chain."""

    name: str
    url: str
    icon: str
    standard: str


class ChainMeta(TypedDict, total=False):
    """evmchains' record of a public chain (the keys read here; it has more)."""

    chainId: int
    name: str
    explorers: list[ListedExplorer]


@functools.lru_cache(maxsize=1)
def _by_chain_id() -> dict[int, ChainMeta]:
    from evmchains import PUBLIC_CHAIN_META

    # evmchains' records are plain dicts of ChainMeta's shape (its package declares no types).
    return {
        meta["chainId"]: cast(ChainMeta, meta)
        for networks in PUBLIC_CHAIN_META.values()
        for meta in networks.values()
        if isinstance(meta, dict) and isinstance(meta.get("chainId"), int)
    }


def chain_meta(ecosystem: str, network: str, chain_id: int | None = None) -> ChainMeta | None:
    """evmchains' record of a public chain (by chain id when known), else None."""
    if chain_id is not None:
        return _by_chain_id().get(chain_id)
    from evmchains import PUBLIC_CHAIN_META

    meta = PUBLIC_CHAIN_META.get(ecosystem, {}).get(network)
    return cast(ChainMeta, meta) if isinstance(meta, dict) else None


def _explorers(meta: ChainMeta | None) -> list[ListedExplorer]:
    listed = meta.get("explorers") if meta is not None else None
    return [e for e in listed or () if isinstance(e, dict) and e.get("url")]


def _host(url: str) -> str:
    return (urlsplit(url).hostname or "").lower()


def on_domain(url: str | None, *domains: str) -> bool:
    """Whether the URL's host is one of `domains` or under one."""
    host = _host(url or "")
    return any(host == domain or host.endswith("." + domain) for domain in domains)


def _label(url: str) -> str:
    """The registered name: `basescan` for sepolia.basescan.org."""
    parts = _host(url).split(".")
    return parts[-2] if len(parts) >= 2 else parts[0]


def blockscout_instance(meta: ChainMeta | None) -> str | None:
    """The pages URL of a Blockscout serving the chain (`https://eth.blockscout.com`), if listed."""
    candidates: list[str] = []
    for entry in _explorers(meta):
        url = entry.get("url", "").rstrip("/")
        said = "blockscout" in f"{entry.get('name', '')} {entry.get('icon', '')}".lower()
        host = _host(url)
        if "blockscout" in host:
            candidates.insert(0, url)  # a blockscout.com host is surely one
        elif said and not _label(url).endswith("scan") and not urlsplit(url).path.strip("/"):
            candidates.append(url)  # named Blockscout, on the chain's own host (not polygonscan's)
    return candidates[0] if candidates else None


def etherscan_pages(meta: ChainMeta | None, chain_id: int | None) -> str | None:
    """The Etherscan family's pages for the chain (`https://sepolia.basescan.org`), if known."""
    for entry in _explorers(meta):
        url = entry.get("url", "")
        label = _label(url)
        if label.endswith("scan") and label not in _NOT_ETHERSCAN:
            return url.rstrip("/")
    return _ETHERSCAN_PAGES.get(chain_id) if chain_id is not None else None


def routescan_pages(meta: ChainMeta | None) -> str | None:
    for entry in _explorers(meta):
        url = entry.get("url", "")
        if entry.get("name", "").lower() == "routescan" or "routescan" in _host(url):
            return url.rstrip("/")
    return None


def routescan_url(network: str, chain_id: int, meta: ChainMeta | None = None) -> str:
    """Routescan's Etherscan-style API for a chain: its `mainnet` or `testnet` tree."""
    pages = routescan_pages(meta)
    test = "testnet" in pages if pages else "mainnet" not in network
    return ROUTESCAN_URL.format(network="testnet" if test else "mainnet", chain_id=int(chain_id))


def is_etherscan_v2(url: str) -> bool:
    return on_domain(url, "etherscan.io") and "/v2/" in urlsplit(url).path + "/"


def is_blockscout_pro(url: str) -> bool:
    """Blockscout's Pro API (`https://api.blockscout.com/v2/api` or `/<chainId>/api`): needs a key."""
    return _host(url).startswith("api.") and on_domain(url, "blockscout.com")


def pro_chain_param(url: str) -> str | None:
    """`chain_id` for the Pro API's `/v2/api` form; its `/<chainId>/api` form has it in the path."""
    return "chain_id" if urlsplit(url).path.rstrip("/").endswith("/v2/api") else None


def flavour_of(name: str, kind: str, url: str | None, blockscout_pages: str | None = None) -> Flavour:
    """Whose server a target is (`client/provider.py`'s `Flavour`), from its configuration: the
    name it is configured under (`blockscout`, `routescan`), Blockscout's and Routescan's hosts,
    the Blockscout instance the chain lists (`blockscout_pages`); `local` for the embedded explorer
    (no URL) or one on loopback."""
    if kind == Kind.SOURCIFY:
        return Flavour.SOURCIFY
    if url is None:
        return Flavour.LOCAL
    host = _host(url)
    listed = blockscout_pages is not None and _host(blockscout_pages) == host
    if name == "blockscout" or listed or on_domain(url, "blockscout.com"):
        return Flavour.BLOCKSCOUT
    if name == "routescan" or on_domain(url, "routescan.io"):
        return Flavour.ROUTESCAN
    if host in ("127.0.0.1", "localhost", "::1"):
        return Flavour.LOCAL
    return Flavour.ETHERSCAN
