"""Which of a project's pinned packages an install moved: `python pins.py BEFORE AFTER`, two `pip
freeze` outputs. Prints each moved package (`name before -> after`, or `removed`) and exits 1;
packages the install added are fine. toolchain/floor_venv.sh runs it around the plugin's install."""

import re
import sys
from pathlib import Path


def frozen(text: str) -> dict[str, str]:
    """`name==version` lines by normalized name (PEP 503: case, `-`, `_` and `.` alike)."""
    pins = {}
    for line in text.splitlines():
        name, sep, version = line.strip().partition("==")
        if sep:
            pins[re.sub(r"[-_.]+", "-", name).lower()] = version
    return pins


def moved(before: str, after: str) -> list[str]:
    old, new = frozen(before), frozen(after)
    changed = [name for name, version in old.items() if new.get(name) != version]
    return [f"{name} {old[name]} -> {new.get(name, 'removed')}" for name in changed]


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: pins.py BEFORE AFTER (two `pip freeze` outputs)", file=sys.stderr)
        return 2
    changes = moved(Path(argv[0]).read_text(), Path(argv[1]).read_text())
    for change in changes:
        print(f"  {change}", file=sys.stderr)
    return 1 if changes else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
