"""Where a network's requests go, and with which key: its targets.

The `etherscan` target (what `resolve_target` gives, as before targets had names):
- URL: `--explorer-url`, then `contract_verify.explorers.<ecosystem>.<network>.url`, then
  Etherscan API V2 (`https://api.etherscan.io/v2/api` + `chainid`) for chains it serves.
  A local network with nothing configured gets `url=None`: use the embedded local explorer.
- API key: `--api-key`, then the explorer's `api_key_env` variable, then `ETHERSCAN_API_KEY`,
  then an `api_key` entry in the explorer's config.

Every target of a network (`resolve_targets`, rules in its docstring) keeps its own URL, key,
rate and pages; a non-Etherscan target never receives `--api-key` or `ETHERSCAN_API_KEY`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypedDict
from urllib.parse import urlsplit, urlunsplit

from ape_contract_verify.client.known import (
    BLOCKSCOUT_KEY_ENV,
    DEFAULT_RATES,
    ETHERSCAN_V2_CHAINS,
    ETHERSCAN_V2_URL,
    KNOWN_CHAIN_IDS,
    ROUTESCAN_KEY_ENV,
    SOURCIFY_REPO_URL,
    SOURCIFY_URL,
    blockscout_instance,
    chain_id_of,
    chain_meta,
    etherscan_pages,
    flavour_of,
    is_blockscout_pro,
    is_etherscan_v2,
    pro_chain_param,
    routescan_pages,
    routescan_url,
)
from ape_contract_verify.client.provider import VerificationTarget
from ape_contract_verify.exceptions import ExplorerNotConfigured, InvalidRequest
from ape_contract_verify.protocol.secrets import ApiKey

if TYPE_CHECKING:
    from ape_contract_verify.client.health import TargetHealth
    from ape_contract_verify.config import ContractVerifyConfig, ExplorerConfig, TargetConfig

DEFAULT_KEY_ENV = "ETHERSCAN_API_KEY"
LOCAL_NETWORKS = ("local",)


class ClientOptions(TypedDict, total=False):
    """The transport options a caller sets on a target's client (`Target.client`'s keywords, the
    local explorer's client's too); the clients' defaults for the ones left out."""

    timeout: float | tuple[float, float]
    max_retries: int
    backoff: float
    max_backoff: float
    sleep: Callable[[float], None]


@dataclass(frozen=True)
class Target:
    """One place that verifies, for one network. `url=None` means: use the embedded local explorer.

    `kind` is `etherscan` (an Etherscan-style contract API: Etherscan V2, Blockscout, Routescan, the
    local explorer) or `sourcify` (Sourcify API v2). `chain_id_param` names the query parameter that
    carries the chain id (`chainid` for Etherscan V2, `chain_id` for Blockscout's Pro API), if any."""

    ecosystem: str
    network: str
    url: str | None
    chain_id: int | None
    api_key: ApiKey | None
    calls_per_second: float = 3.0
    browser_url: str | None = None
    name: str = "etherscan"
    kind: str = "etherscan"
    chain_id_param: str | None = None
    # Whose server (etherscan, blockscout, routescan, local, sourcify): known from the configuration
    # (`known.flavour_of`), never guessed from a URL's words later.
    flavour: str = ""

    def __post_init__(self) -> None:
        if not self.flavour:
            object.__setattr__(self, "flavour", flavour_of(self.name, self.kind, self.url))

    @property
    def is_local(self) -> bool:
        return self.url is None

    @property
    def label(self) -> str:
        """What a person reads for it: the embedded local explorer is no Etherscan, though it
        answers as the `etherscan` target (its name for --target and required_targets)."""
        return "local explorer" if self.is_local else self.name

    @property
    def chain_param(self) -> str | None:
        """The query parameter carrying the chain id, if this target sends one."""
        if self.kind != "etherscan" or not self.url:
            return None
        return self.chain_id_param or ("chainid" if is_etherscan_v2(self.url) else None)

    @property
    def sends_chain_id(self) -> bool:
        return self.chain_param is not None

    def contract_url(self, address: str) -> str | None:
        """The page of a contract: `<pages>/address/<address>`, Sourcify's repo `<repo>/<chainId>/<address>`."""
        if not self.browser_url:
            return None
        base = self.browser_url.rstrip("/")
        if self.kind == "sourcify" and not loopback_pages(f"{base}/api"):
            return f"{base}/{self.chain_id}/{address}"
        return f"{base}/address/{address}"

    def client(
        self,
        *,
        timeout: float | tuple[float, float] = (10.0, 30.0),
        max_retries: int = 5,
        backoff: float = 1.0,
        max_backoff: float = 16.0,
        sleep: Callable[[float], None] = time.sleep,
        health: TargetHealth | None = None,
        not_indexed_timeout: float = 90.0,
    ) -> VerificationTarget:
        """The client for this target: an ExplorerClient, or a SourcifyClient for kind `sourcify`
        (the caller handles `url=None`, the embedded local explorer, first). The keywords are the
        transport options callers set, with the clients' defaults; `not_indexed_timeout` only the
        Etherscan-style client's (Sourcify has no "not indexed yet" answer to wait out)."""
        if self.url is None:
            raise ExplorerNotConfigured(
                f"{self.ecosystem}:{self.network} is local and has no explorer URL; start "
                "`ape verify serve` and pass --explorer-url http://127.0.0.1:<port>/api"
            )
        if self.kind == "sourcify":
            from ape_contract_verify.client.sourcify import SourcifyClient

            if self.chain_id is None:
                raise ExplorerNotConfigured(
                    f"target {self.name!r} of {self.ecosystem}:{self.network}: Sourcify needs the chain id; "
                    "resolve the targets with the network's chain id"
                )
            return SourcifyClient(
                self.url,
                self.chain_id,
                api_key=self.api_key,
                calls_per_second=self.calls_per_second,
                timeout=timeout,
                max_retries=max_retries,
                backoff=backoff,
                max_backoff=max_backoff,
                sleep=sleep,
                health=health,
            )
        from ape_contract_verify.client.etherscan import ExplorerClient

        if is_blockscout_pro(self.url) and not self.api_key:
            raise ExplorerNotConfigured(
                f"target {self.name!r} of {self.ecosystem}:{self.network}: Blockscout's Pro API needs a key; set "
                f"{BLOCKSCOUT_KEY_ENV} (or the target's api_key_env)"
            )
        param = self.chain_param
        return ExplorerClient(
            self.url,
            api_key=self.api_key,
            chain_id=self.chain_id if param else None,
            calls_per_second=self.calls_per_second,
            chain_id_param=param or "chainid",
            flavour=self.flavour,
            not_indexed_timeout=not_indexed_timeout,
            timeout=timeout,
            max_retries=max_retries,
            backoff=backoff,
            max_backoff=max_backoff,
            sleep=sleep,
            health=health,
        )


ExplorerTarget = Target  # the name before targets had names


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


def loopback_pages(url: str | None) -> str | None:
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
    chain_id: int | None = None,
    explorer_url: str | None = None,
    configured_url: str | None = None,
) -> str | None:
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
    api_key: str | None = None,
    api_key_env: str | None = None,
    configured_key: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> ApiKey | None:
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
    chain_id: int | None = None,
    explorer_url: str | None = None,
    api_key: str | None = None,
    config: ContractVerifyConfig | None = None,
    environ: Mapping[str, str] | None = None,
) -> ExplorerTarget:
    """Everything needed to talk to one network's explorer. `config` is a ContractVerifyConfig."""
    explorer = config.explorer_for(ecosystem, network) if config is not None else None
    url = resolve_url(ecosystem, network, chain_id, explorer_url, explorer.url if explorer else None)
    if chain_id is None:
        chain_id = KNOWN_CHAIN_IDS.get(f"{ecosystem}:{network}")
    if url and is_etherscan_v2(url) and chain_id is None:
        raise ExplorerNotConfigured(
            f"Etherscan API V2 needs a chain id and none is known for {ecosystem}:{network}; "
            "pick a network with --network, or pass a non-Etherscan --explorer-url"
        )
    key = resolve_api_key(
        api_key, explorer.api_key_env if explorer else None, _configured_key(config, explorer), environ
    )
    rate = (explorer.calls_per_second if explorer else None) or (config.calls_per_second if config else None) or 3.0
    return ExplorerTarget(
        ecosystem=ecosystem,
        network=network,
        url=url,
        chain_id=chain_id,
        api_key=key,
        calls_per_second=float(rate),
        browser_url=(explorer.browser_url if explorer else None) or loopback_pages(url),
    )


def _configured_key(config: ContractVerifyConfig | None, explorer: ExplorerConfig | None) -> str | None:
    """A key written in config: per explorer (`api_key`), else top-level `contract_verify.api_key`
    (both extra keys of their models, so read from `model_extra`)."""
    for model in (explorer, config):
        value = (model.model_extra or {}).get("api_key") if model is not None else None
        if value:
            return str(value)
    return None


def normalize_base_url(url: str, param: str) -> str:
    """Check a Sourcify server's base URL (`https://sourcify.dev/server/`): kept as given, one `/` at the end."""
    text = str(url or "").strip()
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise InvalidRequest(param, f"{text!r} is not an http(s) URL", f"give the server's base, e.g. {SOURCIFY_URL}")
    if parts.query or parts.fragment:
        raise InvalidRequest(param, "has a query or fragment", "give the base URL only")
    return urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/") + "/", "", ""))


def _key_from(env: str | None, configured: str | None, environ: Mapping[str, str]) -> ApiKey | None:
    for value in (environ.get(env) if env else None, configured):
        if value and str(value).strip():
            return ApiKey(str(value))
    return None


def _foreign_host(url: str | None) -> bool:
    """A host that is surely not Etherscan's: it must not receive ETHERSCAN_API_KEY."""
    host = (urlsplit(url or "").hostname or "").lower()
    return any(host == d or host.endswith("." + d) for d in ("blockscout.com", "routescan.io", "sourcify.dev"))


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
        self.ecosystem, self.network, self.config = ecosystem, network, config
        self.explorer_url, self.api_key = explorer_url, api_key
        self.environ = os.environ if environ is None else environ
        self.path = f"contract_verify.explorers.{ecosystem}.{network}"
        self.explorer = config.explorer_for(ecosystem, network) if config is not None else None
        self.named: dict[str, TargetConfig] = (
            self.explorer.named_targets(self.path + ".") if self.explorer is not None else {}
        )
        self.local = is_local_network(network)
        self.meta = None if self.local else chain_meta(ecosystem, network, chain_id)
        if chain_id is None:
            chain_id = KNOWN_CHAIN_IDS.get(f"{ecosystem}:{network}") or chain_id_of(self.meta)
        self.chain_id = chain_id
        rate_set = config is not None and "calls_per_second" in config.model_fields_set
        self.top_rate = float(config.calls_per_second) if config is not None and rate_set else None

    def rate(self, own: float | None, kind_name: str) -> float:
        return float(own or self.top_rate or DEFAULT_RATES.get(kind_name, 3.0))

    def available(self) -> list[str]:
        """Every name that can run here, configured or known, in the order they run."""
        names: list[str] = []
        if self.explorer_url or (self.explorer is not None and self.explorer.configures_etherscan) or self.local:
            names.append("etherscan")
        elif self.chain_id in ETHERSCAN_V2_CHAINS:
            names.append("etherscan")
        names += [n for n in self.named if n not in names and n != "sourcify"]
        if not self.local and self.chain_id is not None:
            if "blockscout" not in names and blockscout_instance(self.meta):
                names.append("blockscout")
            if "routescan" not in names:
                names.append("routescan")
        if "sourcify" in self.named or (not self.local and self.chain_id is not None):
            names.append("sourcify")
        return names

    def defaults(self) -> list[str]:
        """Every configured target, plus the known ones that apply (see resolve_targets)."""
        if self.explorer_url:
            return ["etherscan"]
        configured = self.explorer is not None and self.explorer.configures_etherscan
        names = ["etherscan"] if configured else []
        if not configured and not self.local and self.chain_id in ETHERSCAN_V2_CHAINS:
            explorer = self.explorer.etherscan_target() if self.explorer is not None else None
            key = resolve_api_key(
                self.api_key,
                explorer.api_key_env if explorer else None,
                _configured_key(self.config, self.explorer),
                self.environ,
            )
            if key is not None:
                names.append("etherscan")
        names += [n for n in self.named if n not in names and n != "sourcify"]
        public = (
            not self.local
            and self.chain_id is not None
            and (self.meta is not None or self.chain_id in ETHERSCAN_V2_CHAINS)
        )
        if "blockscout" not in names and not self.local and blockscout_instance(self.meta):
            names.append("blockscout")
        if "sourcify" in self.named or public:
            names.append("sourcify")
        if not names and self.local:
            names.append("etherscan")  # the embedded local explorer
        return names

    def build(self, name: str) -> Target:
        entry = self.named.get(name)
        if name == "etherscan":
            return self._etherscan()
        if name == "sourcify" or (entry is not None and entry.kind == "sourcify"):
            return self._sourcify(name, entry)
        return self._etherscan_style(name, entry)

    def _etherscan(self) -> Target:
        explorer = self.explorer.etherscan_target() if self.explorer is not None else None
        where = f"{self.path}.{'etherscan.' if 'etherscan' in self.named else ''}url"
        url: str | None
        if self.explorer_url:
            url = normalize_url(self.explorer_url, "--explorer-url")
        elif explorer is not None and explorer.url:
            url = normalize_url(explorer.url, where)
        else:
            url = resolve_url(self.ecosystem, self.network, self.chain_id)
        if url and is_etherscan_v2(url) and self.chain_id is None:
            raise ExplorerNotConfigured(
                f"Etherscan API V2 needs a chain id and none is known for {self.ecosystem}:{self.network}; "
                "pick a network with --network, or pass a non-Etherscan --explorer-url"
            )
        env = explorer.api_key_env if explorer else None
        if _foreign_host(url):  # the network's own keys pointing at Blockscout or Routescan
            key = (
                ApiKey(self.api_key)
                if self.api_key
                else _key_from(env, _configured_key(self.config, self.explorer), self.environ)
            )
        else:
            key = resolve_api_key(self.api_key, env, _configured_key(self.config, self.explorer), self.environ)
        own_rate = explorer.calls_per_second if explorer else None
        rate = float(own_rate or (self.config.calls_per_second if self.config else None) or 3.0)
        browser = (explorer.browser_url if explorer else None) or loopback_pages(url)
        if not browser and url == ETHERSCAN_V2_URL:
            browser = etherscan_pages(self.meta, self.chain_id)
        flavour = explorer.flavour if explorer else None
        return self._target("etherscan", "etherscan", url, key, rate, browser, "api_key_env", env, flavour)

    def _etherscan_style(self, name: str, entry: TargetConfig | None) -> Target:
        url: str | None = None
        pages: str | None = None
        if entry is not None and entry.url:
            url = normalize_url(entry.url, f"{self.path}.{name}.url")
        elif name == "blockscout":
            pages = blockscout_instance(self.meta)
            url = f"{pages}/api" if pages else None
        elif name == "routescan" and self.chain_id is not None and not self.local:
            url = routescan_url(self.network, self.chain_id, self.meta)
            pages = routescan_pages(self.meta)
        if url is None:
            raise ExplorerNotConfigured(
                f"No {name} target is known for {self.ecosystem}:{self.network} (chain id {self.chain_id}); "
                f"set {self.path}.{name}.url in ape-config.yaml"
            )
        default_env = {"blockscout": BLOCKSCOUT_KEY_ENV, "routescan": ROUTESCAN_KEY_ENV}.get(name)
        env = (entry.api_key_env if entry else None) or default_env
        key = _key_from(env, None, self.environ)
        if key is None and is_etherscan_v2(url):  # a custom name for Etherscan V2 still takes its key
            key = resolve_api_key(None, None, _configured_key(self.config, self.explorer), self.environ)
        if pages is None and name == "blockscout":
            instance = blockscout_instance(self.meta)
            pages = instance if instance and urlsplit(instance).hostname == urlsplit(url).hostname else None
        browser = (entry.browser_url if entry else None) or loopback_pages(url) or pages
        rate = self.rate(entry.calls_per_second if entry else None, name if name in DEFAULT_RATES else "etherscan")
        flavour = entry.flavour if entry else None
        return self._target(name, "etherscan", url, key, rate, browser, f"{name}.api_key_env", env, flavour)

    def _sourcify(self, name: str, entry: TargetConfig | None) -> Target:
        if entry is not None and entry.url:
            url = normalize_base_url(entry.url, f"{self.path}.{name}.url")
        elif name == "sourcify" and not self.local:
            url = SOURCIFY_URL
        else:
            raise ExplorerNotConfigured(
                f"No Sourcify server is known for {self.ecosystem}:{self.network}; set {self.path}.{name}.url "
                "(e.g. the `Sourcify API:` URL `ape verify serve` prints)"
            )
        key = _key_from(entry.api_key_env if entry else None, None, self.environ)
        parts = urlsplit(url)
        loopback = loopback_pages(urlunsplit((parts.scheme, parts.netloc, "/api", "", "")))
        browser = (entry.browser_url if entry else None) or (SOURCIFY_REPO_URL if url == SOURCIFY_URL else loopback)
        rate = self.rate(entry.calls_per_second if entry else None, "sourcify")
        return self._target(name, "sourcify", url, key, rate, browser, f"{name}.api_key_env")

    def _target(
        self,
        name: str,
        kind: str,
        url: str | None,
        key: ApiKey | None,
        rate: float,
        browser: str | None,
        key_setting: str,
        env: str | None = None,
        flavour: str | None = None,
    ) -> Target:
        """The target, its flavour as configured (`flavour:`), else known from its name and host."""
        param = None
        if kind == "etherscan" and url:
            if is_etherscan_v2(url):
                param = "chainid"
            elif is_blockscout_pro(url):
                if key is None:
                    setting = f"{self.path}.{key_setting}"
                    how = f"set the variable {env} ({setting})" if env else f"add {setting} and set that variable"
                    raise ExplorerNotConfigured(
                        f"target {name!r} of {self.ecosystem}:{self.network}: Blockscout's Pro API ({url}) needs a key; "
                        f"{how}, or use the chain's own Blockscout `https://<explorer>/api`, which needs none"
                    )
                param = pro_chain_param(url)
                if param and self.chain_id is None:
                    raise ExplorerNotConfigured(
                        f"Blockscout's Pro API needs a chain id and none is known for {self.ecosystem}:{self.network}"
                    )
        return Target(
            ecosystem=self.ecosystem,
            network=self.network,
            url=url,
            chain_id=self.chain_id,
            api_key=key,
            calls_per_second=rate,
            browser_url=browser,
            name=name,
            kind=kind,
            chain_id_param=param,
            flavour=flavour or flavour_of(name, kind, url, blockscout_instance(self.meta)),
        )


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
        defaults = net.defaults()
        if not defaults:
            raise ExplorerNotConfigured(
                f"No explorer known for {ecosystem}:{network} (chain id {net.chain_id}). Set "
                f"{net.path}.url in ape-config.yaml (e.g. a Blockscout `https://<explorer>/api` or a Routescan URL), "
                f"add a named target under it (`sourcify: {{url: …}}`), or pass --explorer-url."
            )
        return [net.build(name) for name in defaults]

    available = net.available()
    chosen: list[str] = []
    for name in dict.fromkeys(wanted):
        if name in available:
            chosen.append(name)
        elif param == "--target":
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
