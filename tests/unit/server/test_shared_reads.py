"""server/shared_reads.py: requests for one key share the first read that starts after they
arrive (never an older one), errors reach every sharer, a sharer leaving does not end the read.
Reads block on events; every wait is bounded."""

import asyncio
import gc
import threading

import pytest

from ape_contract_verify.server.shared_reads import SharedReads

pytestmark = pytest.mark.unit

BOUND = 5.0  # seconds any one wait may take


class GatedRead:
    """read(key) blocks until released, and answers `<key>#<n>` for its n-th read."""

    def __init__(self, fail_first: bool = False):
        self.lock = threading.Lock()
        self.reads: list[str] = []
        self.release = threading.Event()
        self.started = threading.Event()
        self.fail_first = fail_first

    def __call__(self, key: str) -> str:
        with self.lock:
            self.reads.append(key)
            number = len(self.reads)
        self.started.set()
        assert self.release.wait(BOUND), "the test never released the read"
        if self.fail_first and number == 1:
            raise RuntimeError(f"node down on read {number}")
        return f"{key}#{number}"


async def until(condition, bound: float = BOUND) -> None:
    async def poll():
        while not condition():
            await asyncio.sleep(0.005)

    await asyncio.wait_for(poll(), bound)


def run(coroutine):
    return asyncio.run(asyncio.wait_for(coroutine, 4 * BOUND))


def test_one_request_gets_its_own_read():
    read = GatedRead()
    read.release.set()

    async def scenario():
        reads = SharedReads(read)
        assert await reads.get("a") == "a#1"
        assert await reads.get("a") == "a#2"  # no cache: a later request reads again

    run(scenario())
    assert read.reads == ["a", "a"]


def test_requests_arriving_during_a_read_share_the_next_one():
    read = GatedRead()

    async def scenario():
        reads = SharedReads(read)
        first = asyncio.ensure_future(reads.get("k"))
        await until(read.started.is_set)  # the first read is running: too old for later arrivals
        later = [asyncio.ensure_future(reads.get("k")) for _ in range(5)]
        await asyncio.sleep(0.05)
        assert len(read.reads) == 1  # one read of a key at a time
        read.release.set()
        return await first, await asyncio.gather(*later)

    first, later = run(scenario())
    assert first == "k#1"
    assert later == ["k#2"] * 5  # five requests, one fresh read
    assert read.reads == ["k", "k"]


def test_different_keys_are_read_separately():
    read = GatedRead()

    async def scenario():
        reads = SharedReads(read)
        pending = [asyncio.ensure_future(reads.get(key)) for key in ("a", "b", "a")]
        await until(lambda: len(read.reads) == 2)
        read.release.set()
        return await asyncio.gather(*pending)

    a1, b, a2 = run(scenario())
    assert a1 == a2 and a1.startswith("a#") and b.startswith("b#")
    assert sorted(read.reads) == ["a", "b"]


def test_an_error_reaches_every_sharer_and_the_next_request_reads_again():
    read = GatedRead(fail_first=True)

    async def scenario():
        reads = SharedReads(read)
        sharers = [asyncio.ensure_future(reads.get("k")) for _ in range(3)]
        await until(read.started.is_set)
        read.release.set()
        outcomes = await asyncio.gather(*sharers, return_exceptions=True)
        return outcomes, await reads.get("k")

    outcomes, again = run(scenario())
    assert all(isinstance(o, RuntimeError) and "node down on read 1" in str(o) for o in outcomes)
    assert again == "k#2"


def test_a_sharer_going_away_does_not_end_the_others_read():
    read = GatedRead()

    async def scenario():
        reads = SharedReads(read)
        leaving = asyncio.ensure_future(reads.get("k"))
        staying = asyncio.ensure_future(reads.get("k"))
        await until(read.started.is_set)
        leaving.cancel()
        await asyncio.sleep(0.01)
        read.release.set()
        with pytest.raises(asyncio.CancelledError):
            await leaving
        return await staying

    assert run(scenario()) == "k#1"
    assert read.reads == ["k"]


def test_an_error_nobody_waits_for_is_not_reported_as_unretrieved():
    read = GatedRead(fail_first=True)
    unhandled = []

    async def scenario():
        asyncio.get_running_loop().set_exception_handler(lambda loop, context: unhandled.append(context))
        reads = SharedReads(read)
        only = asyncio.ensure_future(reads.get("k"))
        await until(read.started.is_set)
        only.cancel()  # the one sharer leaves; the read still ends, with an error
        read.release.set()
        assert await reads.get("k") == "k#2"  # this read starts only once the failed one has ended
        gc.collect()

    run(scenario())
    gc.collect()
    assert unhandled == []
