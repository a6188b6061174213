"""Safe (@safe-global/safe-contracts 1.4.1 from npm; solc 0.7.6, optimizer disabled, istanbul)
deployed by corpus/safe's own script: the SafeL2 singleton, the proxy factory, the fallback handler,
MultiSendCallOnly, and a 2-of-3 Safe, a SafeProxy the factory creates with CREATE2 (its singleton
in storage slot 0: no standard proxy slot). Every contract verified after deploy, then by address
alone, standard-json and flattened, and read back."""

import pytest

from support.corpus import after_deploy_failures, by_address_failures, deploy

pytestmark = [pytest.mark.corpus, pytest.mark.e2e]

CONTRACTS = ['SafeL2', 'SafeProxyFactory', 'CompatibilityFallbackHandler', 'MultiSendCallOnly', 'SafeProxy']
# The deploy script's name for a contract -> the contract type's name, where they differ.
NAMES = {}


@pytest.fixture(scope="module")
def deployed(tmp_path_factory):
    deployed = deploy("safe", tmp_path_factory.mktemp("corpus"))
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
