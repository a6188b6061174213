"""snekmate 0.0.1 from PyPI (Vyper 0.3: `# @version ^0.3.7`; vyper 0.3.10, see its ape-config.yaml) deployed by
corpus/snekmate-0.0.1's own script: its ERC20 and an ERC4626 vault over it, both with
immutables (name, symbol, the EIP-712 domain, the asset), and its ownership contracts. Every
contract verified after deploy, then by address alone, vyper-json and flattened, and read back. Under vyper 0.3.7 the same files compile to code that follows Python's hash seed:
the order search reproduces every code the seeds give (minutes of compiles, so here, not in
`make test`)."""

import pytest

from ape_contract_verify.engine import diagnose
from ape_contract_verify.engine.compilers import CompileCache, ContractInput
from support import REPO
from support.corpus import ProtocolChecks


class TestSnekmate001(ProtocolChecks):
    PROTOCOL = "snekmate-0.0.1"
    CONTRACTS = ["ERC20", "ERC4626", "Ownable", "Ownable2Step", "AccessControl"]


SNEKMATE = REPO / "toolchain" / "pypi" / "snekmate-0.0.1"
ERC20_FILE = "src/tokens/ERC20.vy"
PERMIT_FILE = "src/tokens/interfaces/IERC20Permit.vy"


ERC4626_FILE = "src/extensions/ERC4626.vy"


def snekmate_erc20_input(file: str = ERC20_FILE) -> dict:
    assert (SNEKMATE / file).is_file(), "run `make`: toolchain/install.sh installs snekmate 0.0.1"
    return {
        "language": "Vyper",
        "sources": {file: {"content": (SNEKMATE / file).read_text()}},
        "interfaces": {PERMIT_FILE: {"content": (SNEKMATE / PERMIT_FILE).read_text()}},
        "settings": {
            "evmVersion": "paris",
            "optimize": True,
            "outputSelection": {file: ["abi", "evm.bytecode", "evm.deployedBytecode"]},
        },
    }


def test_vyper_0_3_7_compiles_snekmate_s_erc20_to_different_codes_from_run_to_run():
    """The compiler's fact the diagnosis rests on (snekmate 0.0.1 from PyPI, via `make`)."""
    from ape_contract_verify.engine.compilers import compile_vyper_json

    codes = {
        compile_vyper_json("vyper:0.3.7", snekmate_erc20_input(), hash_seed=seed)["contracts"][ERC20_FILE]["ERC20"][
            "evm"
        ]["deployedBytecode"]["object"]
        for seed in ("0", "1", "2", "3", "4", "5", "6", "7")
    }
    assert len(codes) > 1  # the likeliest code came 17 times in 40 runs: 8 alike is out of reach
    # Each is the others' instructions in another order: what the seed search looks for.
    first, *others = (bytes.fromhex(code.removeprefix("0x")) for code in codes)
    assert all(diagnose.reordered(first, other) for other in others)


@pytest.mark.parametrize(("file", "name", "layouts"), [(ERC20_FILE, "ERC20", (0,)), (ERC4626_FILE, "ERC4626", (0, 8))])
def test_the_order_search_reproduces_every_code_vyper_0_3_7_gives_snekmate(file, name, layouts):
    """Every code the seeds give (ERC4626's only in other environments) is one of the internal-function
    orders the search names, found by it: the orders are searched, not the seeds and environments."""
    from ape_contract_verify.engine import diagnose
    from ape_contract_verify.engine.compilers import compile_vyper_json

    sent = snekmate_erc20_input(file)
    codes = {
        compile_vyper_json("vyper:0.3.7", sent, hash_seed=seed, layout=layout)["contracts"][file][name]["evm"][
            "deployedBytecode"
        ]["object"]
        for seed in ("0", "1", "2", "3")
        for layout in layouts
    }
    assert len(codes) > 1, f"{name}: the seeds gave one code"
    cache = CompileCache()  # shared: each order compiled once over the searches
    for code in sorted(codes):
        job = ContractInput("vyper:0.3.7", sent, file, name, "vyper", cache)
        found = diagnose.search(job, lambda evm: evm["deployedBytecode"]["object"] == code)
        assert found.order is not None and found.order.startswith("internal functions in the order _"), (
            name,
            len(found.codes),
        )
        assert found.evm["deployedBytecode"]["object"] == code
        print(f"{name}: {len(found.codes)} of {found.orders} orders compiled to reach a seed's code")
    # What no order gives, another source, is searched through and not found.
    assert diagnose.search(ContractInput("vyper:0.3.7", sent, file, name, "vyper", cache), lambda evm: False).order is None
