"""The `contract_verify:` section of a project's ape-config.yaml."""

from enum import Enum
from typing import Literal, Optional, Union

from ape.api.config import PluginConfig
from pydantic import BaseModel, Field, field_validator
from pydantic_settings import SettingsConfigDict


class SourceFormat(str, Enum):
    STANDARD_JSON = "standard-json"
    FLATTEN = "flatten"


class ExplorerConfig(BaseModel):
    """Where one network's explorer lives, and how to find its key."""

    url: Optional[str] = None
    """Base URL of the contract API, ending in `/api`. Etherscan API V2 when unset."""

    api_key_env: Optional[str] = None
    """Name of the environment variable holding the key (never the key itself)."""

    browser_url: Optional[str] = None
    """Base URL of the explorer's web pages, for links in reports."""

    calls_per_second: Optional[float] = Field(default=None, gt=0)
    """Overrides the top-level rate for this explorer."""


class ContractVerifyConfig(PluginConfig):
    model_config = SettingsConfigDict(extra="allow", env_prefix="APE_CONTRACT_VERIFY_")

    auto: Union[bool, Literal["always"]] = False
    """Verify every contract that an `ape run` script deploys; `always` also in `ape test` and the console."""

    explorer: bool = True
    """Register this plugin as Ape's explorer (`Contract(address)`, links, `publish=True`). False
    leaves that to another explorer plugin (ape-etherscan, ape-sourcify); `ape verify` still works."""

    targets: Optional[list[str]] = None
    """Which targets run (names configured under `explorers` or known ones); unset: every one that applies."""

    required_targets: Optional[list[str]] = None
    """Targets whose failure sets exit code 1; unset: all of them."""

    codeformat: SourceFormat = SourceFormat.STANDARD_JSON
    """How Solidity sources are sent: standard-json input, or one flattened file."""

    license: Optional[str] = None
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

    fail_on_error: bool = False
    """Let a failed verification after deploy change `ape run`'s exit code."""

    explorers: dict[str, dict[str, ExplorerConfig]] = {}
    """Per ecosystem, then per network: `explorers.ethereum.sepolia.url`."""

    @field_validator("license")
    @classmethod
    def _known_license(cls, value: Optional[str]) -> Optional[str]:
        if value is None:
            return value
        from ape_contract_verify.protocol.licenses import license_code

        license_code(value)  # raises with the list of accepted ids
        return value

    def explorer_for(self, ecosystem: str, network: str) -> ExplorerConfig:
        return self.explorers.get(ecosystem, {}).get(network) or ExplorerConfig()
