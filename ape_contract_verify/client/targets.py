"""Where a network's requests go, and with which key: its targets, from configuration and network.

One resolver (`_Network`) builds every target: `resolve_targets` (rules in its docstring), and
`resolve_target`, the network's own `etherscan` target (as before targets had names):
- URL: `--explorer-url`, then `contract_verify.explorers.<ecosystem>.<network>.url`, then
  Etherscan API V2 (`https://api.etherscan.io/v2/api` + `chainid`) for chains it serves.
  A local network with nothing configured gets `url=None`: use the embedded local explorer.
- API key: `--api-key`, then the explorer's `api_key_env` variable, then `ETHERSCAN_API_KEY`,
  then an `api_key` entry in the explorer's config.

Every target keeps its own URL, key, rate and pages; a non-Etherscan target never receives
`--api-key` or `ETHERSCAN_API_KEY`. One URL normaliser (`normalize_url`), one key reader
(`resolve_api_key`).

The targets the plugin knows without configuration, and whose server each one is: Etherscan API V2
and the chains it serves, Sourcify's public server, Routescan, and the Blockscout instances and
explorer pages Ape's `evmchains` package lists per chain (offline data, imported only when a
network's targets are resolved).
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING, cast
from urllib.parse import urlsplit, urlunsplit

from ape_contract_verify.client.provider import Flavour, Kind, VerificationTarget
from ape_contract_verify.exceptions import ExplorerNotConfigured, InvalidRequest
from ape_contract_verify.json_types import JsonObject
from ape_contract_verify.protocol.secrets import ApiKey

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from ape_contract_verify.client.http import ClientOptions as ClientOptions
    from ape_contract_verify.client.http import Transport
    from ape_contract_verify.config import ContractVerifyConfig, TargetConfig
    from ape_contract_verify.retry import TargetHealth

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


@functools.lru_cache(maxsize=1)
def _by_chain_id() -> dict[int, JsonObject]:
    """evmchains' records of public chains (plain dicts: `chainId`, `name`, `explorers`, …), by chain id."""
    from evmchains import PUBLIC_CHAIN_META

    return {
        meta["chainId"]: meta
        for networks in PUBLIC_CHAIN_META.values()
        for meta in networks.values()
        if isinstance(meta, dict) and isinstance(meta.get("chainId"), int)
    }


def chain_meta(ecosystem: str, network: str, chain_id: int | None = None) -> JsonObject | None:
    """evmchains' record of a public chain (by chain id when known), else None."""
    if chain_id is not None:
        return _by_chain_id().get(chain_id)
    from evmchains import PUBLIC_CHAIN_META

    meta = PUBLIC_CHAIN_META.get(ecosystem, {}).get(network)
    return meta if isinstance(meta, dict) else None


def _explorers(meta: JsonObject | None) -> list[tuple[str, JsonObject]]:
    """The explorers evmchains lists for the chain (`name`, `url`, `icon`, `standard`): (its URL
    without a trailing `/`, its entry)."""
    listed = meta.get("explorers") if meta is not None else None
    entries = listed if isinstance(listed, list) else []
    return [(str(e["url"]).rstrip("/"), e) for e in entries if isinstance(e, dict) and e.get("url")]


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


def blockscout_instance(meta: JsonObject | None) -> str | None:
    """The pages URL of a Blockscout serving the chain (`https://eth.blockscout.com`), if listed."""
    candidates: list[str] = []
    for url, entry in _explorers(meta):
        said = "blockscout" in f"{entry.get('name', '')} {entry.get('icon', '')}".lower()
        if "blockscout" in _host(url):
            candidates.insert(0, url)  # a blockscout.com host is surely one
        elif said and not _label(url).endswith("scan") and not urlsplit(url).path.strip("/"):
            candidates.append(url)  # named Blockscout, on the chain's own host (not polygonscan's)
    return candidates[0] if candidates else None


def etherscan_pages(meta: JsonObject | None, chain_id: int | None) -> str | None:
    """The Etherscan family's pages for the chain (`https://sepolia.basescan.org`), if known."""
    listed = (url for url, _ in _explorers(meta) if _label(url).endswith("scan") and _label(url) not in _NOT_ETHERSCAN)
    return next(listed, None) or _ETHERSCAN_PAGES.get(chain_id or 0)


def is_etherscan_v2(url: str) -> bool:
    return on_domain(url, "etherscan.io") and "/v2/" in urlsplit(url).path + "/"


def is_blockscout_pro(url: str) -> bool:
    """Blockscout's Pro API (`https://api.blockscout.com/v2/api` or `/<chainId>/api`): needs a key."""
    return _host(url).startswith("api.") and on_domain(url, "blockscout.com")


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


DEFAULT_KEY_ENV = "ETHERSCAN_API_KEY"
KEY_ENVS = {"blockscout": BLOCKSCOUT_KEY_ENV, "routescan": ROUTESCAN_KEY_ENV}  # a known target's own


@dataclass(frozen=True)
class Target:
    """One place that verifies, for one network. `url=None` means: use the embedded local explorer.

    `kind`: the API it speaks (`Kind`: the Etherscan-style contract API, or Sourcify API v2);
    `flavour`: whose server (`Flavour`), as configured, else known from its name and host
    (`flavour_of`), never guessed from a URL's words later. `chain_id_param` names the query
    parameter that carries the chain id (`chainid` for Etherscan V2, `chain_id` for Blockscout's
    Pro API; `chainid` at Etherscan V2 when none is given), None for a target that sends none."""

    ecosystem: str
    network: str
    url: str | None
    chain_id: int | None
    api_key: ApiKey | None
    calls_per_second: float = 3.0
    browser_url: str | None = None
    name: str = "etherscan"
    kind: Kind = Kind.ETHERSCAN
    chain_id_param: str | None = None
    flavour: Flavour | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", Kind(self.kind))
        flavour = self.flavour or flavour_of(self.name, self.kind, self.url)
        object.__setattr__(self, "flavour", Flavour(flavour))
        if self.kind is not Kind.ETHERSCAN or not self.url:
            object.__setattr__(self, "chain_id_param", None)
        elif self.chain_id_param is None:
            # Blockscout's Pro API: `chain_id` for its `/v2/api` form; its `/<chainId>/api` has it in the path
            pro = is_blockscout_pro(self.url) and urlsplit(self.url).path.rstrip("/").endswith("/v2/api")
            object.__setattr__(
                self, "chain_id_param", "chainid" if is_etherscan_v2(self.url) else "chain_id" if pro else None
            )

    @property
    def is_local(self) -> bool:
        return self.url is None

    @property
    def label(self) -> str:
        """What a person reads for it: the embedded local explorer is no Etherscan, though it
        answers as the `etherscan` target (its name for --target and required_targets)."""
        return "local explorer" if self.is_local else self.name

    @property
    def sends_chain_id(self) -> bool:
        return self.chain_id_param is not None

    def contract_url(self, address: str) -> str | None:
        """The page of a contract: `<pages>/address/<address>`, Sourcify's repo `<repo>/<chainId>/<address>`."""
        if not self.browser_url:
            return None
        base = self.browser_url.rstrip("/")
        if self.kind is Kind.SOURCIFY and not loopback_pages(f"{base}/api"):
            return f"{base}/{self.chain_id}/{address}"
        return f"{base}/address/{address}"

    def client(self, health: TargetHealth | None = None, **options: Unpack[ClientOptions]) -> VerificationTarget:
        """The client for this target: an ExplorerClient, or a SourcifyClient for kind sourcify
        (the caller handles `url=None`, the embedded local explorer, first). `options` are the
        transport options callers set; the target's key, rate and name come with it."""
        where = f"target {self.name!r} of {self.ecosystem}:{self.network}"
        rate, key = self.calls_per_second, self.api_key
        transport = cast(
            "Transport", {**options, "api_key": key, "calls_per_second": rate, "name": self.name, "health": health}
        )
        if self.url is None:
            raise ExplorerNotConfigured(
                f"{self.ecosystem}:{self.network} is local and has no explorer URL; start "
                "`ape verify serve` and pass --explorer-url http://127.0.0.1:<port>/api"
            )
        if self.kind is Kind.SOURCIFY:
            from ape_contract_verify.client.sourcify import SourcifyClient

            if self.chain_id is None:
                raise ExplorerNotConfigured(
                    f"{where}: Sourcify needs the chain id; resolve the targets with the network's chain id"
                )
            return SourcifyClient(self.url, self.chain_id, **transport)
        from ape_contract_verify.client.etherscan import ExplorerClient

        if is_blockscout_pro(self.url) and not self.api_key:
            raise ExplorerNotConfigured(
                f"{where}: Blockscout's Pro API needs a key; set {BLOCKSCOUT_KEY_ENV} (or the target's api_key_env)"
            )
        param, flavour = self.chain_id_param, self.flavour or Flavour.ETHERSCAN
        chain_id = self.chain_id if param else None
        return ExplorerClient(
            self.url, chain_id=chain_id, chain_id_param=param or "chainid", flavour=flavour, **transport
        )


def normalize_url(url: str, param: str = "--explorer-url", sourcify: bool = False) -> str:
    """Check a base URL. An Etherscan-style one without a path gets the spec's `/api`; a Sourcify
    server's (`https://sourcify.dev/server/`) is kept as given, with one `/` at the end."""
    text = str(url or "").strip()
    parts = urlsplit(text)
    example = SOURCIFY_URL if sourcify else "https://api.etherscan.io/v2/api"
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise InvalidRequest(param, f"{text!r} is not an http(s) URL", f"give the API's base URL, e.g. {example}")
    if parts.query or parts.fragment:
        raise InvalidRequest(param, "has a query or fragment", "give the base URL only (keys go in --api-key)")
    path = parts.path.rstrip("/") + "/" if sourcify else parts.path.rstrip("/") or "/api"
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def loopback_pages(url: str | None) -> str | None:
    """The pages of an explorer on this machine (`ape verify serve`): its API's `/api` is beside
    them, so links need no `browser_url`. Public explorers' pages live on other hosts: no guess."""
    if not url:
        return None
    parts = urlsplit(url)
    if parts.hostname not in ("127.0.0.1", "localhost", "::1") or not parts.path.rstrip("/").endswith("/api"):
        return None
    return urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/")[: -len("/api")], "", "")).rstrip("/")


def resolve_api_key(
    api_key: str | None = None,
    api_key_env: str | None = None,
    configured_key: str | None = None,
    environ: Mapping[str, str] | None = None,
    default_env: str | None = DEFAULT_KEY_ENV,
) -> ApiKey | None:
    """`--api-key`, then the target's env var, then `default_env` (ETHERSCAN_API_KEY: only for a
    target that may be Etherscan's), then config."""
    environ = os.environ if environ is None else environ
    candidates = [api_key, environ.get(api_key_env) if api_key_env else None]
    candidates += [environ.get(default_env) if default_env else None, configured_key]
    return next((ApiKey(str(value)) for value in candidates if value and str(value).strip()), None)


def resolve_target(
    ecosystem: str,
    network: str,
    chain_id: int | None = None,
    explorer_url: str | None = None,
    api_key: str | None = None,
    config: ContractVerifyConfig | None = None,
    environ: Mapping[str, str] | None = None,
) -> Target:
    """The network's own (`etherscan`) target, as `resolve_targets` builds it: URL (`--explorer-url`,
    the network's config, else Etherscan API V2 for chains it serves; a local network with nothing
    configured: `url=None`, the embedded local explorer) and key (`--api-key`, the explorer's
    `api_key_env`, ETHERSCAN_API_KEY, then an `api_key` in config)."""
    return _Network(ecosystem, network, chain_id, config, explorer_url, api_key, environ).build("etherscan")


class _Network:
    """What resolving one network's targets needs, computed once."""

    def __init__(
        self,
        ecosystem: str,
        network: str,
        chain_id: int | None,
        config: ContractVerifyConfig | None,
        explorer_url: str | None,
        api_key: str | None,
        environ: Mapping[str, str] | None,
    ) -> None:
        self.ecosystem, self.network = ecosystem, network
        self.explorer_url, self.api_key = explorer_url, api_key
        self.environ = os.environ if environ is None else environ
        self.path = f"contract_verify.explorers.{ecosystem}.{network}"
        self.explorer = config.explorer_for(ecosystem, network) if config is not None else None
        self.named = self.explorer.named_targets(self.path + ".") if self.explorer is not None else {}
        # A key written in config (discouraged, still read): the explorer's `api_key`, else the
        # top-level one (extra keys of their models).
        written = [(model.model_extra or {}).get("api_key") for model in (self.explorer, config) if model is not None]
        self.written_key = next((str(value) for value in written if value), None)
        self.local = network == "local" or network.endswith("-fork")
        self.meta = None if self.local else chain_meta(ecosystem, network, chain_id)
        if chain_id is None:
            listed_id = (self.meta or {}).get("chainId")
            chain_id = KNOWN_CHAIN_IDS.get(f"{ecosystem}:{network}") or (
                listed_id if isinstance(listed_id, int) else None
            )
        self.chain_id = chain_id
        rate_set = config is not None and "calls_per_second" in config.model_fields_set
        self.top_rate = float(config.calls_per_second) if config is not None and rate_set else None

    def unknown(self, named: str = "") -> ExplorerNotConfigured:
        """No explorer is known for the network (`named`: a way more to configure one)."""
        return ExplorerNotConfigured(
            f"No explorer known for {self.ecosystem}:{self.network} (chain id {self.chain_id}). Set {self.path}.url "
            f"in ape-config.yaml (e.g. a Blockscout `https://<explorer>/api` or a Routescan URL), {named}or pass --explorer-url."
        )

    def names(self, defaults: bool) -> list[str]:
        """Every name that can run here, configured or known, in the order they run; `defaults`:
        those that run when none are chosen (see resolve_targets)."""
        if defaults and self.explorer_url:
            return ["etherscan"]
        configured = self.explorer_url or (self.explorer is not None and self.explorer.configures_etherscan)
        v2 = not self.local and self.chain_id in ETHERSCAN_V2_CHAINS
        if defaults and v2 and not configured:  # Etherscan V2 runs by default where a key is there
            v2 = resolve_api_key(self.api_key, None, self.written_key, self.environ) is not None
        names = ["etherscan"] if configured or v2 or (self.local and not defaults) else []
        names += [n for n in self.named if n not in names and n != "sourcify"]
        known = not self.local and self.chain_id is not None
        if "blockscout" not in names and not self.local and blockscout_instance(self.meta):
            names.append("blockscout")
        if known and not defaults and "routescan" not in names:
            names.append("routescan")
        if "sourcify" in self.named or (known and (not defaults or self.meta or self.chain_id in ETHERSCAN_V2_CHAINS)):
            names.append("sourcify")
        return names or (["etherscan"] if self.local else [])  # the embedded local explorer

    def build(self, name: str) -> Target:
        """The target `name`: its configuration (the network's own keys are `etherscan`'s), else
        what is known of it for this chain."""
        own = name == "etherscan"
        entry = (self.explorer.etherscan_target() if self.explorer else None) if own else self.named.get(name)
        sourcify = name == "sourcify" or (entry is not None and entry.kind == "sourcify")
        kind = Kind.SOURCIFY if sourcify else Kind.ETHERSCAN
        setting = self.path if own and name not in self.named else f"{self.path}.{name}"
        url, pages = self._url(name, kind, entry, setting)
        env = (entry.api_key_env if entry else None) or KEY_ENVS.get(name)
        # Etherscan's key (--api-key for the network's own target, ETHERSCAN_API_KEY, one written in config)
        # goes to the network's own target unless its URL is surely another explorer's (a key written in config
        # still does), and to a target of another name at Etherscan V2.
        v2 = bool(url and is_etherscan_v2(url))
        etherscan = v2 or (own and not on_domain(url, "blockscout.com", "routescan.io", "sourcify.dev"))
        written = self.written_key if own or v2 else None
        key = resolve_api_key(
            self.api_key if own else None, env, written, self.environ, DEFAULT_KEY_ENV if etherscan else None
        )
        if url and not sourcify and is_blockscout_pro(url) and key is None:
            how = (
                f"set the variable {env} ({setting}.api_key_env)"
                if env
                else f"add {setting}.api_key_env and set that variable"
            )
            raise ExplorerNotConfigured(
                f"target {name!r} of {self.ecosystem}:{self.network}: Blockscout's Pro API ({url}) needs a key; "
                f"{how}, or use the chain's own Blockscout `https://<explorer>/api`, which needs none"
            )
        flavour = entry.flavour if entry else None
        v2_pages = etherscan_pages(self.meta, self.chain_id) if url and is_etherscan_v2(url) else None
        target = Target(
            ecosystem=self.ecosystem,
            network=self.network,
            url=url,
            chain_id=self.chain_id,
            api_key=key,
            calls_per_second=float(
                (entry.calls_per_second if entry else None) or self.top_rate or DEFAULT_RATES.get(name, 3.0)
            ),
            browser_url=(entry.browser_url if entry else None) or loopback_pages(url) or pages or v2_pages,
            name=name,
            kind=kind,
            flavour=Flavour(flavour) if flavour else flavour_of(name, kind, url, blockscout_instance(self.meta)),
        )
        if target.sends_chain_id and self.chain_id is None:  # Etherscan V2's, Blockscout's Pro API's /v2/api
            raise ExplorerNotConfigured(
                f"{url} needs a chain id and none is known for {self.ecosystem}:{self.network}; "
                "pick a network with --network, or pass an explorer URL that needs none"
            )
        return target

    def _url(self, name: str, kind: Kind, entry: TargetConfig | None, setting: str) -> tuple[str | None, str | None]:
        """(the target's base URL, its pages when known here); None for the embedded local explorer."""
        if name == "etherscan" and self.explorer_url:
            return normalize_url(self.explorer_url, "--explorer-url"), None
        if entry is not None and entry.url:
            url = normalize_url(entry.url, f"{setting}.url", sourcify=kind is Kind.SOURCIFY)
            instance = blockscout_instance(self.meta) if name == "blockscout" else None
            same = instance and urlsplit(instance).hostname == urlsplit(url).hostname
            return url, instance if same else (_sourcify_pages(url) if kind is Kind.SOURCIFY else None)
        if name == "etherscan" and (self.local or self.chain_id in ETHERSCAN_V2_CHAINS):
            return None if self.local else ETHERSCAN_V2_URL, None
        if name == "blockscout" and (instance := blockscout_instance(self.meta)):
            return f"{instance}/api", instance
        if name == "routescan" and not self.local and self.chain_id is not None:  # its `mainnet` or `testnet` tree
            listed = (u for u, e in _explorers(self.meta) if "routescan" in f"{_host(u)} {e.get('name', '')}".lower())
            pages = next(listed, None)
            test = "testnet" in pages if pages else "mainnet" not in self.network
            return ROUTESCAN_URL.format(network="testnet" if test else "mainnet", chain_id=self.chain_id), pages
        if name == "sourcify" and not self.local:
            return SOURCIFY_URL, SOURCIFY_REPO_URL
        if name == "etherscan":
            raise self.unknown()
        if kind is Kind.SOURCIFY:
            raise ExplorerNotConfigured(
                f"No Sourcify server is known for {self.ecosystem}:{self.network}; set {setting}.url "
                "(e.g. the `Sourcify API:` URL `ape verify serve` prints)"
            )
        raise ExplorerNotConfigured(
            f"No {name} target is known for {self.ecosystem}:{self.network} (chain id {self.chain_id}); "
            f"set {setting}.url in ape-config.yaml"
        )


def _sourcify_pages(url: str) -> str | None:
    """Sourcify's repo for its public server; one on this machine (the local explorer's face) has
    the explorer's pages."""
    if url == SOURCIFY_URL:
        return SOURCIFY_REPO_URL
    parts = urlsplit(url)
    return loopback_pages(urlunsplit((parts.scheme, parts.netloc, "/api", "", "")))


def resolve_targets(
    ecosystem: str,
    network: str,
    chain_id: int | None = None,
    *,
    config: ContractVerifyConfig | None = None,
    names: Sequence[str] = (),
    explorer_url: str | None = None,
    api_key: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> list[Target]:
    """Every target that runs for a network: `names` (from --target), else `contract_verify.targets`,
    else the defaults:
    - every target configured for the network (its own keys = `etherscan`, and its named entries);
    - Etherscan V2 for a chain Etherscan serves, when a key is there (`--api-key`, api_key_env,
      ETHERSCAN_API_KEY, config);
    - the chain's Blockscout instance when evmchains lists one (`<its pages>/api`);
    - Sourcify's public server for a public chain (not local, not a fork, known to evmchains);
    - a local network with nothing configured: the embedded local explorer (`url=None`).
    `--explorer-url` alone means only the `etherscan` target, at that URL. Routescan runs when named
    or configured. A name in `contract_verify.targets` that does not apply here is left out; one
    given by --target must apply. Raises ExplorerNotConfigured when none applies, InvalidRequest
    for a name that is not a target of the network."""
    net = _Network(ecosystem, network, chain_id, config, explorer_url, api_key, environ)
    wanted = [str(n).strip() for n in names if str(n).strip()]
    param = "--target"
    if not wanted and config is not None and config.targets:
        wanted, param = list(config.targets), "contract_verify.targets"
    if not wanted:
        defaults = net.names(defaults=True)
        if not defaults:
            raise net.unknown("add a named target under it (`sourcify: {url: …}`), ")
        return [net.build(name) for name in defaults]

    available = net.names(defaults=False)
    chosen = [name for name in dict.fromkeys(wanted) if name in available]
    for name in wanted if param == "--target" else ():  # a name given by --target must apply here
        if name not in available:
            raise InvalidRequest(
                param,
                f"{name!r} is not a target of {ecosystem}:{network}",
                f"use one of {', '.join(available) or '(none)'}, or configure it as {net.path}.{name}.url",
            )
    if explorer_url and "etherscan" not in chosen:
        raise InvalidRequest(
            "--explorer-url",
            "sets the `etherscan` target's URL, and the targets chosen leave it out",
            "add --target etherscan, or drop --explorer-url",
        )
    if not chosen:
        raise ExplorerNotConfigured(
            f"None of contract_verify.targets ({', '.join(wanted)}) applies to {ecosystem}:{network}; "
            f"its targets are {', '.join(available) or '(none)'}: pick with --target, or configure {net.path}.<name>.url"
        )
    return [net.build(name) for name in chosen]
