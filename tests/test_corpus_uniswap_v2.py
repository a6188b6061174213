"""Uniswap V2 core (@uniswap/v2-core 1.0.1 from npm; solc 0.5.16, 999999 runs, istanbul) deployed
by corpus/uniswap-v2's own script: the factory, three of the package's test `ERC20` tokens (a
contract that adds only a constructor to UniswapV2ERC20, so its runtime code is UniswapV2ERC20's),
and two pairs the factory creates with CREATE2. Every one verified after deploy, then by address
alone, standard-json and flattened, and read back. Quick enough for `make test` (solc 0.5)."""

import pytest

from support.corpus import after_deploy_failures, by_address_failures, deploy

pytestmark = pytest.mark.e2e

CONTRACTS = ["UniswapV2Factory", "ERC20", "ERC20", "ERC20", "UniswapV2Pair", "UniswapV2Pair"]


@pytest.fixture(scope="module")
def uniswap(tmp_path_factory):
    deployed = deploy("uniswap-v2", tmp_path_factory.mktemp("corpus"))
    yield deployed
    deployed.stop()


def test_the_script_creates_six_contracts_two_of_them_by_the_factory(uniswap):
    assert [name for name, _ in uniswap.contracts] == CONTRACTS, uniswap.deploy.stdout[-3000:]


def test_every_contract_is_verified_after_deploy_the_tokens_as_erc20(uniswap):
    failures = after_deploy_failures(uniswap, {})
    assert not failures, "\n".join(failures) + "\n" + uniswap.deploy.stdout[-4000:]


def test_every_contract_verifies_by_address_alone(uniswap, tmp_path):
    failures = by_address_failures(uniswap, False, tmp_path, {})
    assert not failures, "\n".join(failures)


def test_every_contract_verifies_by_address_alone_flattened(uniswap, tmp_path):
    failures = by_address_failures(uniswap, True, tmp_path, {})
    assert not failures, "\n".join(failures)
