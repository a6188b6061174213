"""What the plugin adds to every `ape` command: the import of ape_contract_verify, plus its
config hook, on top of what Ape has loaded before it loads plugins (`ape.plugins` and
`ape.api.config`). Baseline: loading that Ape part itself, in the same run.

    python benchmarks/bench_import.py [--runs N]

Each sample is a fresh interpreter, alternating the two measurements so machine noise hits both.
"""

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

PROBE = """
import time
t0 = time.perf_counter()
import ape
from ape import plugins
from ape.api.config import PluginConfig
t1 = time.perf_counter()
import ape_contract_verify
ape_contract_verify.config_class()
t2 = time.perf_counter()
print(t1 - t0, t2 - t1)
"""


def main() -> dict:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    ape_times, plugin_times = [], []
    for _ in range(args.runs):
        out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True)
        ape_s, plugin_s = map(float, out.stdout.split())
        ape_times.append(ape_s)
        plugin_times.append(plugin_s)
    result = {
        "runs": args.runs,
        "ape_plugin_machinery_median_ms": round(statistics.median(ape_times) * 1000, 2),
        "plugin_import_median_ms": round(statistics.median(plugin_times) * 1000, 2),
        "plugin_import_max_ms": round(max(plugin_times) * 1000, 2),
        "plugin_vs_ape_machinery": round(statistics.median(plugin_times) / statistics.median(ape_times), 4),
        "budget_ms": 30,
    }
    result["within_budget"] = result["plugin_import_median_ms"] <= result["budget_ms"]
    out_dir = Path(__file__).parent / "results"
    out_dir.mkdir(exist_ok=True)
    (out_dir / "bench_import.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
