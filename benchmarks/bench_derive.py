"""Time to derive and build the verification request for each contract of an OpenZeppelin project.

    python benchmarks/bench_derive.py [--repeat 5] [--fresh]

The project is benchmarks/projects/oz_bench: 11 contract types (ERC20 with votes and permit,
Governor with six extensions, TimelockController, ERC721, ERC1155, access control, a UUPS vault,
OZ proxies) whose one compile pulls 100+ OpenZeppelin source files. It is compiled in place with
`ape compile` in a subprocess (incremental; --fresh deletes .build first so the compile is timed),
then every contract is deployed on Ape's `ethereum:local:test` provider in this process.

Import resolution is memoised per project (a file's imports are resolved once per run, as in
`ape verify all` and auto mode); `input_memo_empty_ms` times the input with that memo empty (a
one-off `ape verify contract`), and `one_off_worst_estimated_ms` the worst contract with it.

For each contract, `derive.derive(artifact, address, check=False, cache=cache)` runs once cold
(the compile of its minimal input fills the cache: that compile is the baseline), then --repeat
times warm, as standard-json, as flatten, and as standard-json with the pre-check (the engine's
Verifier on the request). Warm runs exclude compilation: every compile step is a cache hit. Reported per contract: median and p95 ms to prepare the request (and the phase
split), plus `find_artifact` (the name lookup `ape verify contract NAME` does first). Also: the
number of source files, the time to flatten the largest contract, and the time to read the
project's sources from disk. Target: under 50 ms per contract, excluding compilation.

Baseline of the input phase, same run: ape-solidity's own `get_standard_input_json`, which picks the
compiler by asking every installed solc for its version (with solc-js, a node.js start each), where
`artifacts.standard_input` hands it the manifest's version. Both must give the same sources and
remappings.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PROJECT = REPO / "benchmarks" / "projects" / "oz_bench"
RESULTS = REPO / "benchmarks" / "results" / "bench_derive.json"
TARGET_MS = 50.0
COMPILE_TIMEOUT = 900


def tool_env() -> dict:
    env = dict(os.environ)
    env["PATH"] = f"{REPO / '.venv' / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["SOLCX_BINARY_PATH"] = str(REPO / ".solcx")
    return env


def ms(seconds: float) -> float:
    return round(seconds * 1000, 2)


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]


def compile_project(fresh: bool) -> dict:
    if fresh:
        shutil.rmtree(PROJECT / ".build", ignore_errors=True)
        shutil.rmtree(PROJECT / "contracts" / ".cache", ignore_errors=True)
    was_built = (PROJECT / ".build" / "__local__.json").is_file()
    started = time.perf_counter()
    proc = subprocess.run(
        [str(REPO / ".venv" / "bin" / "ape"), "compile"],
        cwd=PROJECT,
        env=tool_env(),
        capture_output=True,
        text=True,
        timeout=COMPILE_TIMEOUT,
    )
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"ape compile failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return {"seconds": round(elapsed, 2), "full_compile": not was_built}


def deploy_all(project, deployer) -> dict[str, str]:
    """One instance of every contract type, with plausible constructor arguments."""
    addresses = {}

    def deploy(name, *args):
        addresses[name] = str(deployer.deploy(getattr(project, name), *args).address)
        return addresses[name]

    token = deploy("MyToken", "Bench Token", "BT", 10**24)
    timelock = deploy("MyTimelock", 3600, [deployer.address], [deployer.address], deployer.address)
    deploy("MyGovernor", token, timelock)
    deploy("MyNFT", deployer.address, "Bench NFT")
    deploy("MyMultiToken", "ipfs://bench/{id}.json", deployer.address)
    deploy("OwnedBox", deployer.address, 7)
    deploy("RoleBox", deployer.address)
    deploy("PausableBox", deployer.address)
    deploy("ProxyFactory")
    vault = deployer.deploy(project.Vault)
    addresses["Vault"] = str(vault.address)
    deploy("VaultProxy", vault.address, vault.initialize.encode_input(deployer.address, b"\x01" * 32))
    return addresses


def input_from_version_selection(artifact) -> dict:
    """ape-solidity's standard input for one contract, its compiler chosen by ape-solidity."""
    from ape import compilers

    inputs = compilers.solidity.get_standard_input_json([artifact.source_path], project=artifact.project)
    wanted = artifact.compiler_version.split("+")[0]
    return next(v for k, v in inputs.items() if str(k).split("+")[0] == wanted)


def time_phases(module) -> dict[str, float]:
    """The seconds each phase of `derive.derive` takes, as its functions are called (cleared by
    the caller before each derivation; the rest of its time is building the request)."""
    spent: dict[str, float] = {}
    phases = {"chain": "read_chain", "input": "standard_input", "compile": "_compile", "precheck": "precheck"}
    for phase, name in phases.items():

        def timed(*args, _real=getattr(module, name), _phase=phase, **kwargs):
            t0 = time.perf_counter()
            try:
                return _real(*args, **kwargs)
            finally:
                spent[_phase] = spent.get(_phase, 0.0) + time.perf_counter() - t0

        setattr(module, name, timed)
    return spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="warm derivations per contract and format")
    parser.add_argument(
        "--fresh", action="store_true", help="delete the build first, so `ape compile` is timed in full"
    )
    options = parser.parse_args()
    os.environ.update({k: v for k, v in tool_env().items() if k in ("PATH", "SOLCX_BINARY_PATH")})

    compiled = compile_project(options.fresh)

    from ape import Project, accounts, networks

    from ape_contract_verify.derive import artifacts, derive
    from ape_contract_verify.derive.flatten import flatten
    from ape_contract_verify.engine.compilers import CompileCache

    project = Project(PROJECT)
    cache = CompileCache()
    timings = time_phases(derive)
    per_contract: dict[str, dict] = {}
    samples: dict[str, list[float]] = {"standard-json": [], "flatten": [], "precheck": []}
    with networks.parse_network_choice("ethereum:local:test"):
        deployer = accounts.test_accounts[0]
        addresses = deploy_all(project, deployer)
        for name, address in addresses.items():
            lookups = []
            for _ in range(options.repeat):
                t0 = time.perf_counter()
                artifact = artifacts.find_artifact(name, project)
                lookups.append(time.perf_counter() - t0)
            # Cold: the compile of the minimal input (the baseline), which fills the cache.
            timings.clear()
            t0 = time.perf_counter()
            cold = derive.derive(artifact, address, check=False, cache=cache)
            cold_total = time.perf_counter() - t0
            figures = {
                "address": address,
                "source_files": len(cold.compile_input["sources"]),
                "cold_derive_ms": ms(cold_total),
                "cold_compile_ms": ms(timings["compile"]),
                "find_artifact_ms": ms(statistics.median(lookups)),
            }
            # The input with the per-project import memo empty: a one-off `ape verify contract`.
            alone = []
            for _ in range(options.repeat):
                artifacts._MEMO.clear()
                t0 = time.perf_counter()
                artifacts.standard_input(artifact)
                alone.append(time.perf_counter() - t0)
            figures["input_memo_empty_ms"] = ms(statistics.median(alone))
            # "precheck": standard-json with the pre-check (the engine's Verifier on the request);
            # its compile must be a cache hit (derive compiles the same canonical input).
            for code_format in ("standard-json", "flatten", "precheck"):
                totals, phases = [], {}
                compiles_before = cache.compiles
                for _ in range(options.repeat):
                    timings.clear()
                    t0 = time.perf_counter()
                    warm = derive.derive(
                        artifact,
                        address,
                        check=code_format == "precheck",
                        cache=cache,
                        code_format="standard-json" if code_format == "precheck" else code_format,
                    )
                    totals.append(time.perf_counter() - t0)
                    for phase, seconds in timings.items():
                        phases.setdefault(phase, []).append(seconds)
                    if code_format == "flatten" and "pragma solidity" not in warm.request.source_code:
                        raise SystemExit(f"{name}: the flattened source has no pragma")
                samples[code_format] += totals
                build = [t - sum(v[i] for v in phases.values()) for i, t in enumerate(totals)]
                figures[code_format] = {
                    "median_ms": ms(statistics.median(totals)),
                    "p95_ms": ms(p95(totals)),
                    "phases_median_ms": {
                        **{phase: ms(statistics.median(v)) for phase, v in phases.items()},
                        "build_request": ms(statistics.median(build)),
                    },
                    "compiles": cache.compiles - compiles_before,
                }
                if code_format == "precheck" and warm.match != "full":
                    raise SystemExit(f"{name}: the pre-check found a {warm.match} match")
            per_contract[name] = figures
            print(
                f"{name:14} {figures['source_files']:3} files  "
                f"std-json {figures['standard-json']['median_ms']:7.1f} ms  "
                f"flatten {figures['flatten']['median_ms']:7.1f} ms  "
                f"pre-checked {figures['precheck']['median_ms']:7.1f} ms  "
                f"(cold compile {figures['cold_compile_ms'] / 1000:.1f} s)",
                file=sys.stderr,
            )

        # Flatten alone, for the contract with the most sources.
        largest = max(per_contract, key=lambda n: per_contract[n]["source_files"])
        artifact = artifacts.find_artifact(largest, project)
        input_json = artifacts.standard_input(artifact)
        sources = {k: v["content"] for k, v in input_json["sources"].items()}
        remappings = input_json["settings"].get("remappings") or ()
        # flatten() memoises each file's analysis by its text: cold = the memo cleared first.
        from ape_contract_verify.derive.flatten import analyse

        flat_times, flat_cold = [], []
        for _ in range(options.repeat):
            analyse.cache_clear()
            t0 = time.perf_counter()
            flat = flatten(artifact.source_id, sources, remappings)
            flat_cold.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            flatten(artifact.source_id, sources, remappings)
            flat_times.append(time.perf_counter() - t0)

        # Baseline of the input phase: ape-solidity choosing the compiler itself.
        selection = {}
        for name in per_contract:
            artifact = artifacts.find_artifact(name, project)
            ours = artifacts.standard_input(artifact)
            times = []
            for _ in range(options.repeat):
                t0 = time.perf_counter()
                theirs = input_from_version_selection(artifact)
                times.append(time.perf_counter() - t0)
            same = theirs["sources"] == ours["sources"] and sorted(
                theirs["settings"].get("remappings") or []
            ) == sorted(ours["settings"].get("remappings") or [])
            selection[name] = {
                "input_ms": ms(statistics.median(times)),
                "ours_input_ms": per_contract[name]["standard-json"]["phases_median_ms"]["input"],
                "same_sources_and_remappings": same,
            }
            if not same:
                raise SystemExit(f"{name}: the input built for the manifest's version differs from ape-solidity's")

    # Baseline: reading every source file of the project (own + OpenZeppelin cache) from disk.
    files = sorted((PROJECT / "contracts").rglob("*.sol"))
    reads = []
    for _ in range(options.repeat):
        t0 = time.perf_counter()
        size = sum(len(f.read_text(encoding="utf8")) for f in files)
        reads.append(time.perf_counter() - t0)
    read_ms = ms(statistics.median(reads))

    medians = {f: statistics.median(v) for f, v in samples.items()}
    worst = max(per_contract[n][f]["median_ms"] for n in per_contract for f in samples)
    cold_compiles = [per_contract[n]["cold_compile_ms"] for n in per_contract]
    figures = {
        "contracts": len(per_contract),
        "repeat": options.repeat,
        "project_source_files": len(files),
        "largest_contract": largest,
        "largest_contract_source_files": per_contract[largest]["source_files"],
        "prepare_request_ms": {f: {"median": ms(medians[f]), "p95": ms(p95(samples[f]))} for f in samples},
        "worst_contract_median_ms": worst,
        "one_off_worst_estimated_ms": max(
            per_contract[n]["standard-json"]["median_ms"]
            - per_contract[n]["standard-json"]["phases_median_ms"]["input"]
            + per_contract[n]["input_memo_empty_ms"]
            for n in per_contract
        ),
        "target_ms": TARGET_MS,
        "meets_target": worst < TARGET_MS,
        "flatten_largest_ms": {
            "cold_median": ms(statistics.median(flat_cold)),
            "cold_p95": ms(p95(flat_cold)),
            "warm_median": ms(statistics.median(flat_times)),
            "output_chars": len(flat.source),
        },
        "baseline": {
            "read_project_sources_ms": read_ms,
            "read_project_sources_chars": size,
            "cold_compile_minimal_input_median_ms": round(statistics.median(cold_compiles), 1),
            "ape_compile_s": compiled["seconds"],
            "ape_compile_was_full": compiled["full_compile"],
            "input_via_version_selection": {
                "median_ms": round(statistics.median(v["input_ms"] for v in selection.values()), 2),
                "per_contract": selection,
            },
        },
        "ratios": {
            "prepare_standard_json_over_read_sources": round(medians["standard-json"] * 1000 / read_ms, 2),
            "prepare_standard_json_over_cold_compile": round(
                medians["standard-json"] * 1000 / statistics.median(cold_compiles), 4
            ),
            "input_ours_over_version_selection": round(
                statistics.median(v["ours_input_ms"] for v in selection.values())
                / statistics.median(v["input_ms"] for v in selection.values()),
                4,
            ),
            "flatten_largest_cold_over_read_sources": round(statistics.median(flat_cold) * 1000 / read_ms, 2),
        },
        "per_contract": per_contract,
        "notes": (
            "prepare_request = derive.derive(check=False) with the compile cache warm: chain reads, "
            "standard input (ape-solidity import resolution), cache lookup, libraries and constructor "
            "arguments, request build; precheck = the same with check=True (the engine's Verifier on "
            "the request, its compile a cache hit: `compiles` counts compiler runs in the warm rounds). "
            "Compiler: solc-js 0.8.37. Provider: ethereum:local:test."
        ),
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(figures, indent=2) + "\n")
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
