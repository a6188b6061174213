"""The one walk of a run's blocks (`run_logs.scan_logs`): on a live network, only transactions
Ape's accounts sent are read, not every transaction of a busy chain's blocks."""

from types import SimpleNamespace as NS

from ape_contract_verify.protocol.values import checksum
from ape_contract_verify.workflow.run_logs import scan_logs

UPGRADED = "0xbc7cd75a20ee27fd9adebab32041f755214dbc6bffa90cc0225b39da2e5c2d3b"


class Chain:
    def __init__(self, is_dev: bool, senders: list[str]):
        self.network = NS(is_dev=is_dev)
        self.receipts_read: list[str] = []
        implementation = "0x" + "00" * 12 + "ab" * 20
        self.txs = [NS(txn_hash=f"0x{i:064x}", sender=s, receiver=None) for i, s in enumerate(senders)]
        self.logs = {
            tx.txn_hash: [{"address": "0x" + "cd" * 20, "topics": [UPGRADED, implementation], "data": "0x"}]
            for tx in self.txs
        }

    def get_block(self, number):
        assert number == "latest", "blocks are walked by their transactions, not Ape's query manager"
        return NS(number=1)

    def get_transactions_by_block(self, number):
        return iter(self.txs if number == 1 else [])

    def get_receipt(self, txn_hash):
        self.receipts_read.append(txn_hash)
        return NS(txn_hash=txn_hash, logs=self.logs[txn_hash], contract_address=None, status=1, gas_used=100_000)


def _ours_and_theirs():
    from ape import accounts

    return accounts.test_accounts[0].address, "0x" + "12" * 20


def test_on_a_live_network_only_the_runs_own_transactions_are_read():
    ours, theirs = _ours_and_theirs()
    chain = Chain(is_dev=False, senders=[theirs, ours, theirs])
    scan = scan_logs(chain, 0)
    assert chain.receipts_read == [chain.txs[1].txn_hash] and scan.creating == [(1, chain.txs[1].txn_hash)]
    events = scan.events
    assert scan.involved == [checksum("0x" + "cd" * 20)]  # the emitter: a contract the run touched
    assert len(events) == 1 and "0x" + "ab" * 20 in str(events[0]).lower()


def test_on_a_dev_chain_every_transaction_is_the_runs():
    ours, theirs = _ours_and_theirs()
    chain = Chain(is_dev=True, senders=[theirs, ours])
    events = scan_logs(chain, 0).events
    assert len(chain.receipts_read) == 2 and len(events) == 2
