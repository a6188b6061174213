"""snekmate 0.0.1 from PyPI (Vyper 0.3: `# @version ^0.3.7`; vyper 0.3.10, see its ape-config.yaml) deployed by
corpus/snekmate-0.0.1's own script: its ERC20 and an ERC4626 vault over it, both with
immutables (name, symbol, the EIP-712 domain, the asset), and its ownership contracts. Every
contract verified after deploy, then by address alone, vyper-json and flattened, and read back."""

import pytest

from support.corpus import after_deploy_failures, by_address_failures, deploy

pytestmark = [pytest.mark.corpus, pytest.mark.e2e]

CONTRACTS = ['ERC20', 'ERC4626', 'Ownable', 'Ownable2Step', 'AccessControl']
# The deploy script's name for a contract -> the contract type's name, where they differ.
NAMES = {}


@pytest.fixture(scope="module")
def deployed(tmp_path_factory):
    deployed = deploy("snekmate-0.0.1", tmp_path_factory.mktemp("corpus"))
    yield deployed
    deployed.stop()


def test_the_script_creates_every_contract(deployed):
    assert [name for name, _ in deployed.contracts] == CONTRACTS, deployed.deploy.stdout[-3000:]


def test_every_contract_is_verified_after_deploy(deployed):
    failures = after_deploy_failures(deployed, NAMES)
    assert not failures, "\n".join(failures) + "\n" + deployed.deploy.stdout[-4000:]


def test_every_contract_verifies_by_address_alone(deployed, tmp_path):
    failures = by_address_failures(deployed, False, tmp_path, NAMES)
    assert not failures, "\n".join(failures)


def test_every_contract_verifies_by_address_alone_flattened(deployed, tmp_path):
    failures = by_address_failures(deployed, True, tmp_path, NAMES)
    assert not failures, "\n".join(failures)
