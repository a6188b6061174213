"""Run by a Vyper 0.3.4-0.3.7's own Python, never imported: vyper-json with each function's callees in a chosen order.

vyper-json runs on stdin's input with each function's callees iterated in a chosen order, not the
order of a set hashed by address (vyper#3369), so any internal-function layout such a Vyper can
give is reached by name.

argv[1]: JSON {caller: [callee, ...]}; a caller not named iterates its callees by name. The output
is vyper-json's, with `calleeOrder`: every function (name, internal, callees in the order used)
as the compiler laid them out, one list per contract compiled.

Not under mypy (pyproject's [tool.mypy] exclude): it patches that Vyper's internals
(`vyper.codegen.module._topsort`), which the main venv's Vyper, the one mypy would read, lacks.
"""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Callable, Iterator
from typing import Any

# What it reads of Vyper's objects (`Any`: no Vyper here to type them): a function type
# (`ContractFunction`: `name`, `called_functions`) and a `FunctionDef` node (`name`, its type in
# `_metadata["type"]`).


def main() -> None:
    orders: dict[str, list[str]] = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    function = importlib.import_module("vyper.semantics.types.function")
    module = importlib.import_module("vyper.codegen.module")
    vyper_json = importlib.import_module("vyper.cli.vyper_json")

    class Callees(set[Any]):
        """The set vyper keeps a function's callees in, iterated in the chosen order."""

        owner = ""

        def __iter__(self) -> Iterator[Any]:
            rank = orders.get(self.owner) or []
            return iter(
                sorted(set.__iter__(self), key=lambda f: (rank.index(f.name) if f.name in rank else len(rank), f.name))
            )

    made = function.ContractFunction.__init__

    def init(self: Any, *args: object, **kwargs: object) -> None:
        made(self, *args, **kwargs)
        callees = Callees(self.called_functions)
        callees.owner = self.name
        self.called_functions = callees

    function.ContractFunction.__init__ = init
    reported: list[list[tuple[str, bool, list[str]]]] = []
    topsort: Callable[[list[Any]], list[Any]] = module._topsort

    def recorded(functions: list[Any]) -> list[Any]:
        reported.append(
            [
                (f.name, is_internal(f._metadata["type"]), [c.name for c in f._metadata["type"].called_functions])
                for f in functions
            ]
        )
        return topsort(functions)

    module._topsort = recorded
    output = vyper_json.compile_json(sys.stdin.read(), vyper_json.exc_handler_to_dict, None, "<stdin>")
    output["calleeOrder"] = reported
    print(json.dumps(output, sort_keys=True, default=str))


def is_internal(kind: object) -> bool:
    # getattr: which of `is_internal` and `visibility` a function type has differs across the
    # Vyper 0.3.x this runs under (0.3.7 has both; the plain attribute is read where it exists).
    internal = getattr(kind, "is_internal", None)
    if internal is not None:
        return bool(internal)
    return str(getattr(kind, "visibility", "")).lower().endswith("internal")


if __name__ == "__main__":
    main()
