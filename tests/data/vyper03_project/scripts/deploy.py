"""Deploy VaultFactory (an admin, a fee in basis points, a vault implementation and a label), then
ask Ape's explorer (the plugin) for its type, which has the deploy hook verify it on the embedded
explorer now rather than after the script, and print what that explorer's getsourcecode says (the
explorer ends with this process)."""

import json
import time
import urllib.parse
import urllib.request

from ape import accounts, networks, project


def main():
    deployer = accounts.test_accounts[0]
    factory = deployer.deploy(project.VaultFactory, deployer.address, 30, "0x" + "22" * 20, "first")
    print(f"VaultFactory {factory.address}")
    # The plugin is Ape's explorer here: the same embedded explorer the hook verifies on.
    explorer = networks.provider.network.explorer
    explorer.get_contract_type(factory.address)  # the script waits while the hook verifies it
    page = explorer.get_address_url(factory.address)
    query = urllib.parse.urlencode({"module": "contract", "action": "getsourcecode", "address": factory.address})
    record, deadline = {}, time.monotonic() + 120
    while not record.get("MatchType") and time.monotonic() < deadline:
        time.sleep(0.5)
        with urllib.request.urlopen(f"{page.rsplit('/address/', 1)[0]}/api?{query}", timeout=30) as answer:
            record = json.loads(answer.read())["result"][0]
    print("RECORD " + json.dumps(record))
