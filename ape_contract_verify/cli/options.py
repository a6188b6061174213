"""The options every `ape verify` command shares: --network, --target, --explorer-url, --api-key, -v.

`@explorer_options` adds them and hands the command one `explorer: ExplorerChoice` argument
(plus Ape's `cli_ctx`). Picking the explorer never connects to a node: ecosystem, network and
chain id come from Ape's network manager without a provider.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, ParamSpec, TypeVar

import click
from ape.cli import ape_cli_context

from ape_contract_verify.exceptions import ContractVerifyError, InvalidRequest
from ape_contract_verify.workflow.choice import NetworkChoice

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from ape_contract_verify.client.provider import VerificationTarget
    from ape_contract_verify.client.targets import ClientOptions, Target

T = TypeVar("T")
P = ParamSpec("P")
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


def as_usage_error(call: Callable[[], T]) -> T:
    """`call()`; a ContractVerifyError it raises is click's usage error (exit 2, no traceback)."""
    try:
        return call()
    except ContractVerifyError as err:
        raise usage_error(err) from None


class ExplorerChoice(NetworkChoice):
    """The options as a NetworkChoice; its errors are usage errors (exit 2, no traceback)."""

    def one_network(self) -> ExplorerChoice:
        if len(self.networks) > 1:
            raise click.BadParameter("give one network here; `ape verify all` takes several", param_hint="--network")
        return self

    def read_target(self) -> Target:
        if len(self.target_names) > 1:
            raise click.BadParameter("give one target to read from", param_hint="--target")
        return as_usage_error(super().read_target)

    def client(self, **kwargs: Unpack[ClientOptions]) -> VerificationTarget:
        """A client for the chosen network and target."""
        self.one_network()
        target = self.read_target()
        return as_usage_error(lambda: target.client(**kwargs))


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
    # Ape types its decorator factory as a bare Callable: this is what it is.
    context: Callable[[Command[T]], Command[T]] = ape_cli_context()
    return context(wrapper)


def json_option(f: Callable[P, T]) -> Callable[P, T]:
    return click.option("--json", "as_json", is_flag=True, help="Print a machine-readable JSON result.")(f)
