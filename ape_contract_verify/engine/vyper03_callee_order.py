"""Run by a Vyper 0.3.4-0.3.7's own Python (never imported by the plugin): vyper-json on stdin's
input with each function's callees iterated in a chosen order, not the order of a set hashed by
address (vyper#3369), so any internal-function layout such a Vyper can give is reached by name.

argv[1]: JSON {caller: [callee, ...]}; a caller not named iterates its callees by name. The output
is vyper-json's, with `calleeOrder`: every function (name, internal, callees in the order used)
as the compiler laid them out, one list per contract compiled."""

import importlib
import json
import sys


def main() -> None:
    orders = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    function = importlib.import_module("vyper.semantics.types.function")
    module = importlib.import_module("vyper.codegen.module")
    vyper_json = importlib.import_module("vyper.cli.vyper_json")

    class Callees(set):
        """The set vyper keeps a function's callees in, iterated in the chosen order."""

        owner = ""

        def __iter__(self):
            rank = orders.get(self.owner) or []
            return iter(
                sorted(set.__iter__(self), key=lambda f: (rank.index(f.name) if f.name in rank else len(rank), f.name))
            )

    made = function.ContractFunction.__init__

    def init(self, *args, **kwargs):
        made(self, *args, **kwargs)
        callees = Callees(self.called_functions)
        callees.owner = self.name
        self.called_functions = callees

    function.ContractFunction.__init__ = init
    reported = []
    topsort = module._topsort

    def recorded(functions):
        reported.append(
            [
                [f.name, bool(_internal(f._metadata["type"])), [c.name for c in f._metadata["type"].called_functions]]
                for f in functions
            ]
        )
        return topsort(functions)

    module._topsort = recorded
    output = vyper_json.compile_json(sys.stdin.read(), vyper_json.exc_handler_to_dict, None, "<stdin>")
    output["calleeOrder"] = reported
    print(json.dumps(output, sort_keys=True, default=str))


def _internal(kind) -> bool:
    internal = getattr(kind, "is_internal", None)
    if internal is not None:
        return internal
    return str(getattr(kind, "visibility", "")).lower().endswith("internal")


if __name__ == "__main__":
    main()
