"""snekmate 0.1.2 from PyPI (Vyper 0.4 modules; vyper 0.4.3) deployed by corpus/snekmate's own
script: the modules that are contracts on their own (ownable, access_control, two erc4626 vaults
with immutables), each compiled with the modules it imports. Every
contract verified after deploy, then by address alone, vyper-json and flattened, and read back."""

import pytest

from support.corpus import after_deploy_failures, by_address_failures, deploy

pytestmark = [pytest.mark.corpus, pytest.mark.e2e]

CONTRACTS = ['ownable', 'access_control', 'erc4626', 'erc4626 (over erc4626)']
# The deploy script's name for a contract -> the contract type's name, where they differ.
NAMES = {'erc4626 (over erc4626)': 'erc4626'}


@pytest.fixture(scope="module")
def deployed(tmp_path_factory):
    deployed = deploy("snekmate", tmp_path_factory.mktemp("corpus"))
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
