"""A corpus project as it is in the checkout: its contracts folder a link into toolchain/ (where
`make` installs the package), not a copy. `cd corpus/uniswap-v2 && ape run deploy` works so for
Ape (its source ids stay `contracts/…`); the plugin must name the sources as Ape does and verify
every contract after deploy and by address, as it does for the copied project
(tests/e2e/test_corpus_uniswap_v2.py)."""

import pytest

from support.corpus import after_deploy_failures, by_address_failures, deploy


@pytest.fixture(scope="module")
def linked(tmp_path_factory):
    deployed = deploy("uniswap-v2", tmp_path_factory.mktemp("corpus-linked"), links=True)
    assert (deployed.project / "contracts").is_symlink()
    yield deployed
    deployed.stop()


def test_a_linked_contracts_folder_is_verified_after_deploy(linked):
    failures = after_deploy_failures(linked, {})
    assert not failures, "\n".join(failures) + "\n" + linked.deploy.stdout[-4000:]


def test_a_linked_contracts_folder_verifies_by_address_alone(linked, tmp_path):
    failures = by_address_failures(linked, False, tmp_path, {})
    assert not failures, "\n".join(failures)
