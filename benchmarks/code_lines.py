"""Count the package's code lines: not blank, not comment, not docstring (issue 39's measure).

    python benchmarks/code_lines.py [--by-module]

Prints the lines of code in `server/` and in everything else, so `docs/architecture.md`'s
figures can be checked against the tree.
"""

from __future__ import annotations

import argparse
import ast
import io
import tokenize
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "ape_contract_verify"


def code_lines(source: str) -> int:
    """Lines holding a token other than a comment, a newline or a docstring."""
    docstrings: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        body = getattr(node, "body", None)
        if not isinstance(body, list) or not body:
            continue
        first = body[0]
        if (
            isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and isinstance(first, ast.Expr)
            and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)
        ):
            docstrings.update(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    lines: set[int] = set()
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT}
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type in skip or token.type == tokenize.ENDMARKER:
            continue
        for line in range(token.start[0], token.end[0] + 1):
            if line not in docstrings:
                lines.add(line)
    return len(lines)


def count(package: Path = PACKAGE) -> dict[str, int]:
    """Code lines per module, keyed by the path under the package."""
    return {str(path.relative_to(package)): code_lines(path.read_text()) for path in sorted(package.rglob("*.py"))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--by-module", action="store_true", help="print every module's count")
    args = parser.parse_args()
    counts = count()
    server = sum(n for name, n in counts.items() if name.startswith("server/"))
    rest = sum(n for name, n in counts.items() if not name.startswith("server/"))
    if args.by_module:
        for name, n in sorted(counts.items(), key=lambda item: item[1]):
            print(f"{n:6} {name}")
    print(f"outside server/: {rest}")
    print(f"server/:         {server}")
    print(f"all:             {rest + server}")


if __name__ == "__main__":
    main()
