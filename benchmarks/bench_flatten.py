"""Time to flatten OpenZeppelin Contracts' largest contract (by transitive import count).

    python benchmarks/bench_flatten.py [--repeat 30]

The entry is chosen in the run: the OZ 5.x source with the most units in its import closure
(a Governor extension, ~38 files, ~300 kB of flat source). Figures, each the median of --repeat:
- cold: flatten with the per-file analysis cache cleared, as for the first contract of a project;
- warm: flatten again with the cache filled, as for the next contracts of the same project;
- collect_imports alone (what the minimal standard-json input needs).
Baseline, measured in the same run: reading the closure's files from disk (open + read + decode),
which any caller has to pay anyway. Target: well under 50 ms per flatten.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from ape_contract_verify.derive import flatten as flattener  # noqa: E402

OZ = REPO / "toolchain" / "node_modules" / "@openzeppelin" / "contracts"
PREFIX = "@openzeppelin/contracts/"
REMAPPINGS = [f"{PREFIX}={OZ}/"]


def read_sources(paths: list[Path]) -> dict[str, str]:
    return {str(p): p.read_text() for p in paths}


def median_ms(fn, repeat: int, before=None) -> tuple[float, list[float]]:
    times = []
    for _ in range(repeat):
        if before:
            before()
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times), times


def main() -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()
    if not OZ.is_dir():
        sys.exit(f"OpenZeppelin sources not found at {OZ}: run `make` (toolchain/install.sh) first")

    all_paths = sorted(OZ.rglob("*.sol"))
    sources = read_sources(all_paths)
    closures = {e: flattener.collect_imports(e, sources, REMAPPINGS) for e in sources}
    entry = max(closures, key=lambda e: (len(closures[e]), e))
    closure = closures[entry]
    closure_paths = [Path(p) for p in closure]
    clear = flattener.analyse.cache_clear

    read_ms, _ = median_ms(lambda: read_sources(closure_paths), args.repeat)
    cold_ms, cold_all = median_ms(lambda: flattener.flatten(entry, sources, REMAPPINGS), args.repeat, clear)
    warm_ms, _ = median_ms(lambda: flattener.flatten(entry, sources, REMAPPINGS), args.repeat)
    collect_ms, _ = median_ms(lambda: flattener.collect_imports(entry, sources, REMAPPINGS), args.repeat, clear)
    result = flattener.flatten(entry, sources, REMAPPINGS)

    figures = {
        "entry": entry.replace(str(OZ) + "/", PREFIX),
        "units_in_closure": len(closure),
        "closure_bytes": sum(len(sources[u].encode()) for u in closure),
        "flat_bytes": len(result.source.encode()),
        "repeat": args.repeat,
        "baseline_read_closure_from_disk_ms": round(read_ms, 3),
        "flatten_cold_ms": round(cold_ms, 3),
        "flatten_cold_max_ms": round(max(cold_all), 3),
        "flatten_warm_ms": round(warm_ms, 3),
        "collect_imports_cold_ms": round(collect_ms, 3),
        "flatten_cold_over_read": round(cold_ms / read_ms, 2),
        "target_ms": 50,
        "meets_target": cold_ms < 50,
        "python": sys.version.split()[0],
    }
    out = REPO / "benchmarks" / "results" / "bench_flatten.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(figures, indent=2) + "\n")
    print(json.dumps(figures, indent=2))
    return figures


if __name__ == "__main__":
    main()
