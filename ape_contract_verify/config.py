"""The `contract_verify:` section of a project's ape-config.yaml."""

import re
from collections.abc import Mapping
from typing import Annotated, Literal

from ape.api.config import PluginConfig
from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, model_validator
from pydantic_settings import SettingsConfigDict

from ape_contract_verify.exceptions import InvalidRequest
from ape_contract_verify.request import CodeFormat

# Target names whose kind is fixed; any other name says `kind:`.
KNOWN_TARGET_KINDS: dict[str, str] = {
    "etherscan": "etherscan",
    "blockscout": "etherscan",
    "routescan": "etherscan",
    "sourcify": "sourcify",
}
# A bad `kind:` or `flavour:` (pydantic's Literal refuses it), said with its fix.
_CHOICE_FIXES = {
    "kind": "use `kind: etherscan` or `kind: sourcify`",
    "flavour": "use one of `flavour: etherscan`, `flavour: blockscout`, `flavour: routescan`, or drop it",
}
_TARGET_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,39}$")


class _TargetKeys(BaseModel):
    """Where a target lives and how it is called: a named target's keys, and a network's own (its
    `etherscan` target's)."""

    url: str | None = None
    """Base URL: an Etherscan-style `.../api` (at a network's level: Etherscan API V2 when unset), or
    a Sourcify server's base. Known targets have one."""

    api_key_env: str | None = None
    """Name of the environment variable holding the target's key (never the key itself)."""

    browser_url: str | None = None
    """Base URL of the target's web pages, for links in reports."""

    calls_per_second: float | None = Field(default=None, gt=0)
    """The target's own rate limit, over the top-level one."""


_NETWORK_KEYS = tuple(_TargetKeys.model_fields)


class TargetConfig(_TargetKeys):
    """One named target of a network (`explorers.<eco>.<net>.<name>`): where it lives, its key."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["etherscan", "sourcify"] | None = None
    """`etherscan` (an Etherscan-style contract API) or `sourcify` (Sourcify API v2)."""

    # Whose server an Etherscan-style target is, when neither its name nor its host says so (a
    # self-hosted Blockscout under another name); client/provider.py's FLAVOURS less the derived ones.
    flavour: Literal["etherscan", "blockscout", "routescan"] | None = None
    """Whose server an Etherscan-style target is: `etherscan`, `blockscout` or `routescan`; unset:
    known from its name and host."""


class ExplorerConfig(_TargetKeys):
    """One network's targets: today's keys are the target named `etherscan`; further targets are
    named entries (`blockscout: {url: ...}`, `sourcify: {...}`, or any name with `kind:`)."""

    model_config = ConfigDict(extra="allow")

    def _own_keys(self) -> dict[str, object]:
        """The network's own keys that are set: its `etherscan` target's settings."""
        return {key: value for key in _NETWORK_KEYS if (value := getattr(self, key)) is not None}

    @property
    def configures_etherscan(self) -> bool:
        """Whether the network's own keys (the `etherscan` target) are set."""
        return bool(self._own_keys()) or "etherscan" in (self.model_extra or {})

    def named_targets(self, path: str = "") -> dict[str, TargetConfig]:
        """The named entries, checked; `path` (`contract_verify.explorers.<eco>.<net>.`) prefixes errors."""
        targets: dict[str, TargetConfig] = {}
        for name, value in (self.model_extra or {}).items():
            if name == "api_key":  # a key written in config (discouraged, still read)
                continue
            where = f"{path}{name}"
            if not isinstance(value, (Mapping, TargetConfig)):
                raise InvalidRequest(
                    where,
                    f"is not a key of a network's entry (got {value!r})",
                    f"the network's own keys ({', '.join(_NETWORK_KEYS)}) are its `etherscan` target; a further "
                    "target is a named mapping, e.g. `mytarget: {url: https://…, kind: etherscan|sourcify}`",
                )
            if not _TARGET_NAME.match(name):
                raise InvalidRequest(
                    where, "is not a usable target name", "use lower-case letters, digits, `-` and `_`"
                )
            try:
                target = value if isinstance(value, TargetConfig) else TargetConfig.model_validate(dict(value))
            except ValidationError as err:
                first = err.errors()[0]
                key = ".".join(str(part) for part in first["loc"])
                problem, fix = first["msg"].lower(), "fix the value"
                if first["type"] == "extra_forbidden":
                    fix = f"the keys are {', '.join(TargetConfig.model_fields)}"
                elif key in _CHOICE_FIXES:
                    problem, fix = f"unknown {key} {first['input']!r}", _CHOICE_FIXES[key]
                raise InvalidRequest(f"{where}.{key}", problem, fix) from None
            fixed = KNOWN_TARGET_KINDS.get(name)
            if target.flavour is not None and (target.kind or fixed) == "sourcify":
                raise InvalidRequest(
                    f"{where}.flavour", "a Sourcify target has no flavour", "drop `flavour` (it is for kind etherscan)"
                )
            if fixed and target.kind and target.kind != fixed:
                raise InvalidRequest(
                    f"{where}.kind", f"the target named {name!r} is {fixed}-style", "drop `kind`, or name it otherwise"
                )
            if not fixed and not target.kind:
                raise InvalidRequest(
                    where,
                    f"the target named {name!r} has no kind",
                    "add `kind: etherscan` (an Etherscan-style API) or `kind: sourcify` (Sourcify API v2); the names "
                    f"{', '.join(KNOWN_TARGET_KINDS)} need none",
                )
            if not fixed and not target.url:
                raise InvalidRequest(f"{where}.url", f"the target named {name!r} has no url", "add its base URL")
            if name == "etherscan" and self._own_keys():
                raise InvalidRequest(
                    where,
                    "the `etherscan` target is also given by the network's own keys",
                    f"write {', '.join(_NETWORK_KEYS)} either at the network's level or under `etherscan:`, not both",
                )
            targets[name] = target.model_copy(update={"kind": target.kind or fixed})
        return targets

    def etherscan_target(self) -> TargetConfig:
        """The `etherscan` target's settings, from the network's keys or its `etherscan:` entry."""
        entry = self.named_targets().get("etherscan")
        return entry if entry is not None else TargetConfig.model_validate({**self._own_keys(), "kind": "etherscan"})


_SolidityFormat = Annotated[CodeFormat, BeforeValidator(CodeFormat.for_solidity)]


def _known_license(value: str) -> str:
    from ape_contract_verify.protocol.licenses import license_code

    license_code(value)  # raises with the list of accepted ids
    return value


class ContractVerifyConfig(PluginConfig):
    """The `contract_verify:` section of ape-config.yaml (each field's text below is its documentation)."""

    model_config = SettingsConfigDict(extra="allow", env_prefix="APE_CONTRACT_VERIFY_")

    auto: bool | Literal["always"] = False
    """Verify every contract that an `ape run` script deploys; `always` also in `ape test` and the console."""

    explorer: bool = True
    """Register this plugin as Ape's explorer (`Contract(address)`, links, `publish=True`). False
    leaves that to another explorer plugin (ape-etherscan, ape-sourcify); `ape verify` still works."""

    targets: list[str] | None = None
    """Which targets run (names configured under `explorers` or known ones); unset: every one that applies."""

    required_targets: list[str] | None = None
    """Targets whose failure sets exit code 1; unset: all of them."""

    codeformat: _SolidityFormat = Field(default="standard-json", validate_default=True)  # the default as users spell it
    """How Solidity sources are sent: `standard-json` input, or one file (`flatten`)."""

    license: Annotated[str, AfterValidator(_known_license)] | None = None
    """SPDX id that overrides the licence read from the source's SPDX line."""

    poll_interval: float = Field(default=5.0, gt=0)
    """Seconds between status checks."""

    timeout: float = Field(default=300.0, gt=0)
    """Seconds to wait for a final answer before giving up on one submission."""

    calls_per_second: float = Field(default=3.0, gt=0)
    """Client-side rate limit, shared by every thread talking to one explorer."""

    max_retries: int = Field(default=5, ge=0, le=20)
    """Retries of one explorer call on connection errors, timeouts, 429/5xx and rate-limit answers."""

    workers: int = Field(default=16, ge=1, le=64)
    """Verifications run at once after deploy and by `ape verify all` (all share the rate limit)."""

    check: bool = True
    """Recompile locally and compare with the chain before submitting."""

    minimal_input: bool = False
    """Send a contract's own sources and their imports (compiled again to pre-check them), not the
    whole input Ape compiled it from, whose build proves it with no compile."""

    fail_on_error: bool = False
    """Let a failed verification after deploy change `ape run`'s exit code."""

    explorers: dict[str, dict[str, ExplorerConfig]] = {}
    """Per ecosystem, then per network: `explorers.ethereum.sepolia.url`."""

    @model_validator(mode="after")
    def _check_targets(self) -> "ContractVerifyConfig":
        configured = set(KNOWN_TARGET_KINDS)
        for ecosystem, networks in self.explorers.items():
            for network, explorer in networks.items():
                configured |= set(explorer.named_targets(f"contract_verify.explorers.{ecosystem}.{network}."))
        for key, names in (("targets", self.targets), ("required_targets", self.required_targets)):
            for name in names or ():
                if not _TARGET_NAME.match(name):
                    examples = ", ".join(KNOWN_TARGET_KINDS)
                    raise InvalidRequest(
                        f"contract_verify.{key}", f"{name!r} is not a target name", f"use names such as {examples}"
                    )
                if name not in configured:
                    raise InvalidRequest(
                        f"contract_verify.{key}",
                        f"{name!r} is neither a known target nor configured under explorers",
                        f"use one of {', '.join(sorted(configured))}, or add `{name}: {{url: …, kind: etherscan|sourcify}}` "
                        "to a network under contract_verify.explorers",
                    )
        return self

    def explorer_for(self, ecosystem: str, network: str) -> ExplorerConfig:
        return self.explorers.get(ecosystem, {}).get(network) or ExplorerConfig()
