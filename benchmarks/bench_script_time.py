"""The user's script with auto on against auto off: when it reaches its own last line.

    python benchmarks/bench_script_time.py [--pairs 5] [--project solmate]

A scratch copy of a corpus project (default corpus/solmate: eleven deployments by its own
`scripts/deploy.py`) is compiled once. Each pair runs `ape run timed --network
ethereum:local:test` (Ape's test provider) twice, auto off then on, alternating which goes first:
`scripts/timed.py` runs the project's own `deploy.main()` and prints the wall-clock time at its
last line. The figure is (last line - command start), auto on over auto off, as medians and as the
median of the pairs' ratios; the whole command's time too, and the summary's rows (every
contract verified, else the benchmark fails). Target (issue 40): the script at most 1.05x.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results" / "bench_script_time.json"
BIN = REPO / ".venv" / "bin"
NETWORK = "ethereum:local:test"
LAST_LINE = re.compile(r"^LAST-LINE (\d+\.\d+)$", re.M)
HOOK = re.compile(r"^HOOK-S ?(.*)$", re.M)
ROW = re.compile(r"^(\S.*?)\s{2,}(0x[0-9a-fA-F]{40})\s{2,}(\S.*?)\s*$", re.M)
TARGET = 1.05
TIMED = """import importlib.util
import time
from pathlib import Path

from ape_contract_verify.workflow import after_deploy

_spec = importlib.util.spec_from_file_location("project_deploy", Path(__file__).with_name("deploy.py"))
_deploy = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_deploy)
_hook, _spent = after_deploy.HOOK, []
_deployed = _hook.deployed


def _timed(*deploy):  # what the plugin does on the script's thread at each deploy
    started = time.perf_counter()
    try:
        return _deployed(*deploy)
    finally:
        _spent.append(time.perf_counter() - started)


_hook.deployed = _timed


def main():
    _deploy.main()
    print(f"HOOK-S {' '.join(f'{s:.6f}' for s in _spent)}", flush=True)
    print(f"LAST-LINE {time.time():.6f}", flush=True)
"""


def tool_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env["SOLCX_BINARY_PATH"] = str(REPO / ".solcx")
    env["VVM_BINARY_PATH"] = str(REPO / ".vyper" / "vvm")
    return env


def scratch_project(name: str, into: Path) -> Path:
    source = REPO / "corpus" / name
    project = into / name
    project.mkdir()
    for item in source.iterdir():
        if item.name in (".build", ".cache"):
            continue
        target = project / item.name
        if item.is_symlink():  # the package's own files, where the corpus links them
            target.symlink_to(item.resolve())
        elif item.is_dir():
            shutil.copytree(item, target)
        else:
            shutil.copy2(item, target)
    (project / "scripts" / "timed.py").write_text(TIMED)
    return project


def set_auto(project: Path, auto: bool) -> None:
    path = project / "ape-config.yaml"
    config = yaml.safe_load(path.read_text())
    config["contract_verify"] = {**config.get("contract_verify", {}), "auto": auto}
    path.write_text(yaml.safe_dump(config, sort_keys=False))


def run(project: Path, auto: bool) -> dict[str, object]:
    set_auto(project, auto)
    shutil.rmtree(project / ".build" / "contract_verify", ignore_errors=True)
    start = time.time()
    proc = subprocess.run(
        [str(BIN / "ape"), "run", "timed", "--network", NETWORK],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=900,
        env=tool_env(),
    )
    end = time.time()
    found = LAST_LINE.search(proc.stdout)
    if proc.returncode != 0 or found is None:
        raise SystemExit(
            f"ape run (auto={auto}) exited {proc.returncode}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        )
    rows = [outcome for _, _, outcome in ROW.findall(proc.stdout)]
    hook = HOOK.search(proc.stdout)
    spent = [float(s) for s in hook.group(1).split()] if hook is not None else []
    return {"script_s": float(found.group(1)) - start, "command_s": end - start, "rows": rows, "hook_s": spent}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--project", default="solmate", help="a project under corpus/")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-script-") as scratch:
        project = scratch_project(options.project, Path(scratch))
        subprocess.run([str(BIN / "ape"), "compile"], cwd=project, check=True, capture_output=True, env=tool_env())
        off: list[dict[str, object]] = []
        on: list[dict[str, object]] = []
        for pair in range(options.pairs):
            order = (False, True) if pair % 2 == 0 else (True, False)
            for auto in order:
                (on if auto else off).append(run(project, auto))
                print(
                    f"pair {pair + 1} auto={'on ' if auto else 'off'} {(on if auto else off)[-1]['script_s']:.2f} s",
                    file=sys.stderr,
                )
    verified = [r["rows"] for r in on]
    if not all(rows and all(outcome.startswith("verified") for outcome in rows) for rows in verified):  # type: ignore[union-attr]
        raise SystemExit(f"not every contract verified with auto on: {verified}")

    def median(runs: list[dict[str, object]], key: str) -> float:
        return statistics.median(float(r[key]) for r in runs)  # type: ignore[arg-type]

    pair_ratios = [float(a["script_s"]) / float(b["script_s"]) for a, b in zip(on, off)]  # type: ignore[arg-type]
    figures = {
        "project": options.project,
        "network": NETWORK,
        "pairs": options.pairs,
        "rows_verified": len(verified[0]),
        "script_off_s": round(median(off, "script_s"), 2),
        "script_on_s": round(median(on, "script_s"), 2),
        "script_ratio": round(median(on, "script_s") / median(off, "script_s"), 3),
        "script_ratio_paired_median": round(statistics.median(pair_ratios), 3),
        # The hook's time on the script's thread per deploy (ms): auto off records, auto on prepares.
        "hook_ms_per_deploy_off": round(1000 * statistics.median(t for r in off for t in r["hook_s"]), 2),  # type: ignore[attr-defined]
        "hook_ms_per_deploy_on": round(1000 * statistics.median(t for r in on for t in r["hook_s"]), 2),  # type: ignore[attr-defined]
        "hook_ms_first_deploy_off": round(1000 * statistics.median(r["hook_s"][0] for r in off), 2),  # type: ignore[index]
        "hook_ms_first_deploy_on": round(1000 * statistics.median(r["hook_s"][0] for r in on), 2),  # type: ignore[index]
        "command_off_s": round(median(off, "command_s"), 2),
        "command_on_s": round(median(on, "command_s"), 2),
        "target": TARGET,
        "rounds_script_off_s": [round(float(r["script_s"]), 2) for r in off],  # type: ignore[arg-type]
        "rounds_script_on_s": [round(float(r["script_s"]), 2) for r in on],  # type: ignore[arg-type]
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(figures, indent=2) + "\n")
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
