"""Uniswap V2 core (@uniswap/v2-core 1.0.1 from npm; solc 0.5.16, 999999 runs, istanbul) deployed
by corpus/uniswap-v2's own script: the factory, three of the package's test `ERC20` tokens (a
contract that adds only a constructor to UniswapV2ERC20, so its runtime code is UniswapV2ERC20's),
and two pairs the factory creates with CREATE2. Every one verified after deploy, then by address
alone, standard-json and flattened, and read back. Quick enough for `make test` (solc 0.5)."""

from support.corpus import ProtocolChecks


class TestUniswapV2(ProtocolChecks):
    PROTOCOL = "uniswap-v2"
    # Two pairs made by the factory; the three tokens are named ERC20 in every summary.
    CONTRACTS = ["UniswapV2Factory", "ERC20", "ERC20", "ERC20", "UniswapV2Pair", "UniswapV2Pair"]
