"""The CPU a command costs: user + sys seconds of every process it starts, orphans and daemons
included, and its wall time. The figure `make test`'s budget is stated in (700 CPU-s): unlike
the wall time, it does not depend on the machine's load or its number of cores.

    python benchmarks/suite_cpu.py                          # make test
    python benchmarks/suite_cpu.py --by-name -- python -m pytest tests/e2e/test_dry_run.py -n 0
    python benchmarks/suite_cpu.py --json out.json -- make test-py313

This process becomes a child subreaper (prctl PR_SET_CHILD_SUBREAPER): a descendant whose parent
exits (a daemon, a server left running) is reparented to it rather than to init, and reaped here,
so getrusage(RUSAGE_CHILDREN) counts it. Descendants still running when the command has exited
are waited for (--linger seconds), then ended with SIGTERM (SIGKILL after 5 s) and counted.

--by-name samples /proc every --interval seconds and sums each descendant's last seen CPU by
its command (`ape`, `pytest`, `node solc-daemon.js`, `vyper-json`, ...). A process that lives
less than an interval may go unseen: what the samples miss is printed as `unattributed`. The
sampling's own CPU is this process's, which the total leaves out.
"""

import argparse
import ctypes
import errno
import json
import os
import resource
import signal
import subprocess
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path

PR_SET_CHILD_SUBREAPER = 36
TICK = os.sysconf("SC_CLK_TCK")
PYTHONS = ("python", "python3")


def become_subreaper() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER) failed")


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def stat(pid: int) -> tuple[int, float, int] | None:
    """(parent pid, own user + sys seconds, start time) of a live process."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()  # after the command, which may hold spaces
    return int(fields[1]), (int(fields[11]) + int(fields[12])) / TICK, int(fields[19])


def name_of(pid: int) -> str:
    """A short name for a process: its program, or a Python's script or module."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return "?"
    args = [a.decode(errors="replace") for a in argv if a]
    if not args:
        return "?"
    program = os.path.basename(args[0])
    rest = args[1:]
    if program.startswith(PYTHONS) or program == "node":
        for i, arg in enumerate(rest):
            if arg == "-m" and i + 1 < len(rest):
                return f"{program.rstrip('0123456789.')} -m {rest[i + 1]}"
            if arg == "-c":
                return f"{program.rstrip('0123456789.')} -c"
            if not arg.startswith("-"):
                script = os.path.basename(arg)
                return script if program.startswith(PYTHONS) else f"node {script}"
    return program


class Sampler(threading.Thread):
    """Each descendant's last seen CPU, by pid, and its name."""

    def __init__(self, interval: float) -> None:
        super().__init__(daemon=True)
        self.interval = interval
        self.seen: dict[tuple[int, int], tuple[str, float]] = {}  # by (pid, start time): pids are reused
        self.stopping = threading.Event()

    def sample(self) -> None:
        me = os.getpid()
        parents: dict[int, int] = {}
        cpu: dict[int, tuple[float, int]] = {}
        for entry in os.listdir("/proc"):
            if entry.isdigit() and (got := stat(int(entry))) is not None:
                parents[int(entry)], seconds, started = got
                cpu[int(entry)] = (seconds, started)
        for pid, (seconds, started) in cpu.items():
            walk, hops = pid, 0
            while walk in parents and walk != me and hops < 64:
                walk, hops = parents[walk], hops + 1
            if walk == me and pid != me:
                previous = self.seen.get((pid, started))
                # named again until its exec: a fork's first name is its parent's
                name = previous[0] if previous and seconds > 0.5 else name_of(pid)
                self.seen[(pid, started)] = (name, seconds)

    def run(self) -> None:
        while not self.stopping.wait(self.interval):
            self.sample()

    def by_name(self) -> dict[str, tuple[int, float]]:
        totals: dict[str, list[float]] = defaultdict(lambda: [0, 0.0])
        for name, seconds in self.seen.values():
            totals[name][0] += 1
            totals[name][1] += seconds
        return {name: (int(n), s) for name, (n, s) in sorted(totals.items(), key=lambda kv: -kv[1][1])}


def reap_all() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def remaining_children() -> list[int]:
    me = os.getpid()
    return [
        pid for pid in map(int, filter(str.isdigit, os.listdir("/proc"))) if (s := stat(pid)) is not None and s[0] == me
    ]


def end_orphans(linger: float) -> list[str]:
    """Wait for the descendants left running, then end them (only ever this process's children)."""
    deadline = time.monotonic() + linger
    while (left := remaining_children()) and time.monotonic() < deadline:
        reap_all()
        time.sleep(0.2)
    ended = [name_of(pid) for pid in left]
    for sig, grace in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
        for pid in left:
            try:
                os.kill(pid, sig)
            except OSError as error:
                if error.errno != errno.ESRCH:
                    raise
        end = time.monotonic() + grace
        while (left := remaining_children()) and time.monotonic() < end:
            reap_all()
            time.sleep(0.1)
        if not left:
            break
    while True:  # whatever they started is ours now too
        try:
            os.wait()
        except ChildProcessError:
            break
    return ended


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--by-name", action="store_true", help="sample /proc for a breakdown by command")
    parser.add_argument("--interval", type=float, default=0.25, help="seconds between samples (--by-name)")
    parser.add_argument("--linger", type=float, default=10.0, help="seconds to wait for orphans before ending them")
    parser.add_argument("--top", type=int, default=15, help="names shown in the breakdown")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the command (after --); default: make test")
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    command = command or ["make", "test"]

    become_subreaper()
    sampler = Sampler(args.interval)
    if args.by_name:
        sampler.start()
    start = time.monotonic()
    proc = subprocess.Popen(command)
    try:
        rc = proc.wait()
    except KeyboardInterrupt:
        proc.send_signal(signal.SIGINT)
        rc = proc.wait()
    wall = time.monotonic() - start
    if args.by_name:
        sampler.sample()
    ended = end_orphans(args.linger)
    sampler.stopping.set()
    total = children_cpu()
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    result: dict[str, object] = {
        "command": command,
        "exit": rc,
        "wall_s": round(wall, 1),
        "cpu_s": round(total, 1),
        "user_s": round(usage.ru_utime, 1),
        "sys_s": round(usage.ru_stime, 1),
        "ended_after_exit": ended,
    }
    print(f"\n== suite_cpu: {' '.join(command)}", file=sys.stderr)
    print(
        f"exit {rc}; wall {wall:.1f} s; CPU {total:.1f} s (user {usage.ru_utime:.1f}, sys {usage.ru_stime:.1f})",
        file=sys.stderr,
    )
    if ended:
        print(f"still running after the command, ended: {', '.join(ended)}", file=sys.stderr)
    if args.by_name:
        names = sampler.by_name()
        seen = sum(s for _, s in names.values())
        result["by_name"] = {name: {"processes": n, "cpu_s": round(s, 1)} for name, (n, s) in names.items()}
        result["unattributed_s"] = round(total - seen, 1)
        for name, (n, s) in list(names.items())[: args.top]:
            print(f"  {s:8.1f} CPU-s  {n:4d} x  {name}", file=sys.stderr)
        print(f"  {total - seen:8.1f} CPU-s  unattributed (processes shorter than a sample)", file=sys.stderr)
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return rc


if __name__ == "__main__":
    sys.exit(main())
