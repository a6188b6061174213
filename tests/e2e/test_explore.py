"""`make explore`: the example deployed and verified on a chain and an explorer that stay up, so the
summary's links open pages, until Ctrl-C stops both."""

import re
import signal
import subprocess
import threading
import time
import urllib.request

import pytest

from support import BIN, REPO, tool_env
from support.e2e import copy_project

READY = "Both keep running until Ctrl-C."


def _get(url: str) -> tuple[int, str]:
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.status, response.read().decode()


def test_explore_keeps_every_link_alive_until_ctrl_c(compiled_example, tmp_path):
    project = copy_project(compiled_example, tmp_path / "explored")
    proc = subprocess.Popen(
        [
            str(BIN / "python"),
            str(REPO / "toolchain" / "explore.py"),
            "--project",
            str(project),
            "--workdir",
            str(tmp_path / "work"),
            "--port",
            "0",
            "--anvil-port",
            "0",
        ],
        env=tool_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: list[str] = []
    ready = threading.Event()

    def pump():
        for line in proc.stdout:
            lines.append(line)
            if READY in line:
                ready.set()

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    try:
        assert ready.wait(600), "".join(lines)[-4000:]
        output = "".join(lines)
        site = re.search(r"Local explorer: (http://127\.0\.0\.1:\d+)/", output).group(1)
        chain = re.search(r"Chain: (http://127\.0\.0\.1:\d+)", output).group(1)
        token_link = re.search(r"^Token\s+0x[0-9a-fA-F]{40}\s+verified\s+etherscan\s+(\S+)$", output, re.M).group(1)
        assert token_link.startswith(site + "/address/"), token_link
        # The script has ended its deploy; its links still open the verified contract's page.
        status, page = _get(token_link)
        assert status == 200 and "Contract Source Code Verified" in page
        status, listing = _get(site + "/")
        assert status == 200 and listing.count("class='addr'") >= 10
    finally:
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=60)
        reader.join(timeout=10)
    assert code == 0 and "explore: stopped." in "".join(lines)
    # Both children are gone with it: nothing answers at their ports any more.
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            _get(site + "/")
        except OSError:
            break
        time.sleep(0.2)
    else:
        raise AssertionError(f"the explorer at {site} still answers after Ctrl-C")
    with pytest.raises(OSError):
        urllib.request.urlopen(chain, data=b"{}", timeout=2)
