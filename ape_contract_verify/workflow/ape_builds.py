"""Ape's own Solidity builds, kept as the compiles they are, so verification compiles only what Ape did not.

ape-solidity compiles each group of sources in one solc run (`solcx.compile_standard`) and keeps only
the bytecode. Its call is wrapped (when Ape imports `ape_solidity.compiler`): the run also selects
what verification reads (metadata, link and immutable references), and its output goes to the
process's compile cache (`engine.compilers.keep_build`, on disk), under its sources and settings.
A pre-check or a local explorer compiling that input, for any of its contracts, then reads Ape's
output: the real compiler's answer to exactly that input. ape-solidity's own results are unchanged
(it reads only the keys it asked for), and a build that cannot be kept is only not kept.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from ape_contract_verify.logs import get_logger
from ape_contract_verify.workflow.ape_patches import Patch

logger = get_logger()
MODULE = "ape_solidity.compiler"


def _wrap(module: ModuleType) -> None:
    original = vars(module).get("compile_standard")
    if not callable(original) or getattr(original, "keeps_builds", False):
        logger.debug("contract_verify: %s has no compile_standard to keep builds from", MODULE)
        return
    setattr(module, "compile_standard", keeping(original))  # noqa: B010  # a module ape-solidity owns


# Put in when Ape imports ape-solidity's compiler (`after_deploy.install`); relies on nothing checked:
# an ape-solidity without the function is left alone, and the deploy hook is not told.
PATCH = Patch(MODULE, (), _wrap)


def keeping(original: Callable[..., Any]) -> Callable[..., Any]:
    """`solcx.compile_standard`'s stand-in: the same compile, which also selects and keeps what
    verification reads."""

    def compile_standard(input_data: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        widened = _widened(input_data)
        output = original(widened if widened is not None else input_data, *args, **kwargs)
        if widened is not None:
            try:
                keep(widened, output, kwargs.get("base_path"))
            except Exception as err:  # the build stands; it is only not kept
                logger.debug("contract_verify: Ape's build was not kept: %s", err)
        return output

    compile_standard.keeps_builds = True  # type: ignore[attr-defined]
    return compile_standard


def _widened(input_data: dict[str, Any]) -> dict[str, Any] | None:
    """A copy of ape-solidity's input also selecting, for every contract it selects, what
    verification reads; None for an input of another shape (then it runs as given)."""
    from ape_contract_verify.engine.compilers import SOLIDITY_OUTPUTS

    try:  # the selection alone is copied: the sources, which can be megabytes, are shared
        selection = {
            file: {**by, "*": list(dict.fromkeys([*by["*"], *SOLIDITY_OUTPUTS]))} if "*" in by else dict(by)
            for file, by in input_data["settings"]["outputSelection"].items()
        }
    except (TypeError, KeyError, AttributeError, ValueError):
        return None
    return {**input_data, "settings": {**input_data["settings"], "outputSelection": selection}}


def keep(input_data: dict[str, Any], output: dict[str, Any], base_path: str | Path | None) -> None:
    """Keep `output` as the build of `input_data` and of any file solc read beside it (an import
    ape-solidity left out, read from `base_path`): the input that was really compiled."""
    from ape_contract_verify.engine.compilers import process_cache

    version = next(
        (
            json.loads(contract["metadata"])["compiler"]["version"]
            for by_name in output.get("contracts", {}).values()
            for contract in by_name.values()
            if contract.get("metadata")
        ),
        None,
    )
    if version is None:
        return  # nothing compiled, or no metadata to name the compiler by
    sources = dict(input_data["sources"])
    for name in output.get("sources", {}):
        if name not in sources:
            sources[name] = {"content": (Path(base_path or ".") / name).read_text(encoding="utf8")}
    compiled = {**input_data, "sources": sources}
    process_cache().keep_build(f"v{version}", compiled, output)  # type: ignore[arg-type]
