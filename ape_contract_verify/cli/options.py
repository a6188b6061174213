"""The options every `ape verify` command shares: --network, --target, --explorer-url, --api-key, -v.

`@explorer_options` adds them and hands the command one `explorer: ExplorerChoice` argument
(plus Ape's `cli_ctx`). Picking the explorer never connects to a node: ecosystem, network and
chain id come from Ape's network manager without a provider.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TypedDict, TypeVar

import click
from ape.cli import ape_cli_context

from ape_contract_verify.exceptions import ContractVerifyError, InvalidRequest
from ape_contract_verify.workflow.choice import NetworkChoice

T = TypeVar("T")
# A command's function as the options decorators take it and give it back: the options it gains
# are click's to pass, so its parameters are not the wrapped function's.
Command = Callable[..., T]

# The API's parameter names, as the options that set them.
OPTION_OF = {"network": "--network", "targets": "--target", "explorer_url": "--explorer-url", "api_key": "--api-key"}


def usage_error(err: ContractVerifyError) -> click.ClickException:
    """A ContractVerifyError from the API as click's usage error (exit 2), on its option when it names one."""
    if isinstance(err, InvalidRequest) and err.param in OPTION_OF:
        return click.BadParameter(f"{err.problem}. {err.fix}", param_hint=OPTION_OF[err.param])
    return click.UsageError(str(err))


class Where(TypedDict):
    """The API's keywords for the explorer options."""

    targets: tuple[str, ...]
    explorer_url: str | None
    api_key: str | None


class ExplorerChoice(NetworkChoice):
    """The options as a NetworkChoice; its errors are usage errors (exit 2, no traceback)."""

    def where(self) -> Where:
        return {"targets": self.target_names, "explorer_url": self.explorer_url, "api_key": self.api_key}

    def one_network(self) -> ExplorerChoice:
        if len(self.networks) > 1:
            raise click.BadParameter("give one network here; `ape verify all` takes several", param_hint="--network")
        return self


_OPTIONS = (
    click.option(
        "--network",
        multiple=True,
        metavar="ECOSYSTEM:NETWORK",
        help="Network whose explorers to use (default: Ape's default network).",
    ),
    click.option(
        "--target",
        "target_names",
        multiple=True,
        metavar="NAME",
        help="Verify on this target only (repeatable): etherscan, blockscout, sourcify, routescan, or a name "
        "configured under contract_verify.explorers [default: contract_verify.targets, else every one that applies].",
    ),
    click.option(
        "--explorer-url",
        metavar="URL",
        help="Contract API base URL for this command, e.g. https://api.etherscan.io/v2/api or https://<blockscout>/api.",
    ),
    click.option(
        "--api-key",
        metavar="KEY",
        help="Explorer API key (default: the explorer's api_key_env, then $ETHERSCAN_API_KEY, then config).",
    ),
)


def explorer_options(f: Command[T]) -> Command[T]:
    """Add --network, --explorer-url, --api-key and -v/--verbosity; pass `explorer` and `cli_ctx`."""

    @functools.wraps(f)
    def wrapper(
        *args: object,
        network: tuple[str, ...] = (),
        target_names: tuple[str, ...] = (),
        explorer_url: str | None = None,
        api_key: str | None = None,
        **kwargs: object,
    ) -> T:
        kwargs["explorer"] = ExplorerChoice(
            network[0] if network else None, explorer_url, api_key, target_names, network
        )
        return f(*args, **kwargs)

    for option in reversed(_OPTIONS):
        wrapper = option(wrapper)
    # Ape types its decorator factory as a bare Callable: this is what it is.
    context: Callable[[Command[T]], Command[T]] = ape_cli_context()
    return context(wrapper)


json_option = click.option("--json", "as_json", is_flag=True, help="Print a machine-readable JSON result.")
