"""The baseline of benchmarks/bench_auto_verify.py: verify deployments one at a time after the
deploy script, waiting for each, in one process (so CLI start-up is paid once, not per contract).

Reads `name address` lines from $BENCH_ADDRESSES, writes {seconds, outcomes} as JSON to $BENCH_RESULT.
Builds the same objects as `ape verify contract NAME ADDRESS` (explorer from config, options from
config, the provider as chain reader).
"""

import json
import os
import time
from pathlib import Path

from ape import chain, config, project


def main():
    from ape_contract_verify.client.targets import resolve_target
    from ape_contract_verify.evm.chain import ApeProviderChain
    from ape_contract_verify.workflow.plan import Derivations, Options
    from ape_contract_verify.workflow.verification import Verification, explorer_for

    cfg = config.get_config("contract_verify")
    network = chain.provider.network
    target = resolve_target(network.ecosystem.name, network.name, None, config=cfg)
    targets = [line.split() for line in Path(os.environ["BENCH_ADDRESSES"]).read_text().splitlines() if line.strip()]
    outcomes = []
    client = explorer_for(target, chain.provider, max_retries=cfg.max_retries)
    options = Options(
        code_format=cfg.codeformat.value,
        check=cfg.check,
        license=cfg.license,
        poll_interval=cfg.poll_interval,
        timeout=cfg.timeout,
    )
    chain_reader = ApeProviderChain(chain.provider)
    verification = Verification(client, chain_reader, options, target=target, shared=Derivations(project))
    started = time.perf_counter()
    for name, address in targets:
        reports = verification.contract(address, name)
        outcomes += [r.outcome for r in reports]
    seconds = time.perf_counter() - started
    Path(os.environ["BENCH_RESULT"]).write_text(json.dumps({"seconds": seconds, "outcomes": outcomes}))
    print(f"verified {len(targets)} one at a time in {seconds:.1f} s")
