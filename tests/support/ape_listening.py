"""`ape` with every socket this process listens on said on stderr (`LISTENING host:port`): what
shows that a command opens no server. Run as `python tests/support/ape_listening.py ARGS`."""

import socket
import sys
from pathlib import Path

# This folder is not the program's: its vyper.py would hide the vyper package from ape-vyper.
sys.path = [entry for entry in sys.path if Path(entry or ".").resolve() != Path(__file__).parent]

_listen = socket.socket.listen


def _said(self: socket.socket, *args: int) -> None:
    print(f"LISTENING {self.getsockname()}", file=sys.stderr, flush=True)
    _listen(self, *args)


if __name__ == "__main__":
    from ape._cli import cli

    socket.socket.listen = _said  # type: ignore[method-assign]
    sys.argv[0] = str(Path(sys.executable).with_name("ape"))  # as the `ape` executable runs it
    sys.exit(cli())
