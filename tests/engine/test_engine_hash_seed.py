"""Vyper 0.3.7's code follows Python's hash seed (vyper#3369): ProxyFactory (one immutable(address),
create_minimal_proxy_to, internal functions called from functions above them) compiles to several
codes over the seeds, each the same instructions in another order; 0.3.10 to one. The search
compiles the internal-function orders by name: 12 (3! x 2!), each its own code, among them every
seed's. A deployment of a code the plain compile does not give is verified by the pre-check's
engine and by the local explorer over HTTP, naming the order; a search that finds no order names
the hash seed as the cause and no setting; a setting is named only with the order that makes it
reproduce, and never one that reproduces as submitted; an edited constant is not searched (other instructions, not another order)."""

import functools
import json
import os
import re
import time
from collections import Counter
from pathlib import Path

import pytest

from ape_contract_verify.engine import compilers, diagnose
from ape_contract_verify.engine.compilers import (
    CompileCache,
    Compiled,
    ContractInput,
    compile_input,
    compile_vyper_json,
    with_output_selection,
)
from ape_contract_verify.engine.verifier import Verifier
from ape_contract_verify.evm.chain import JsonRpcChain
from ape_contract_verify.explorer.jobs import RealEngine
from ape_contract_verify.request import CodeFormat, VerificationRequest
from ape_contract_verify.server.runner import start_embedded
from support.service import Anvil, encode, get, poll, post

FILE = "contracts/ProxyFactory.vy"
NAME = "ProxyFactory"
SOURCE = (Path(__file__).parents[1] / "data" / "vyper03_seed_project" / FILE).read_text()
IMPLEMENTATION = "0x" + "22" * 20
ARGS = encode(["address"], [IMPLEMENTATION])
FAIL = "Fail - Unable to verify. "
SEEDS = 8  # seeds 0 to 7: how the code moves (the search names orders instead)
# The environment's size moves the memory layout as much as the seed does (8 seeds in one
# environment gave 2 or 3 of ProxyFactory's 12 possible codes).
LAYOUTS = (0, 8)


def factory_input(version: str = "0.3.7", source: str = SOURCE, **settings) -> dict:
    """What ape-vyper sends for it: 0.3.7 takes `optimize` as a bool and knows no EVM after paris."""
    chosen = (
        {"evmVersion": "paris", "optimize": True}
        if version == "0.3.7"
        else {"evmVersion": "shanghai", "optimize": "gas"}
    )
    text = source.replace("# @version 0.3.7", f"# @version {version}", 1)
    return {"language": "Vyper", "sources": {FILE: {"content": text}}, "settings": {**chosen, **settings}}


def seed_evms(version: str, input_json: dict, layouts: tuple = (0,)) -> dict[tuple[int, int], dict]:
    return _seed_evms(version, json.dumps(input_json, sort_keys=True), layouts)


# The module's tests compile the same inputs under the same seeds: once each (a compile is a Vyper
# 0.3 process). Each test still sees every seed's code, as one run of the compiler gave it.
@functools.cache
def _seed_evms(version: str, input_text: str, layouts: tuple) -> dict[tuple[int, int], dict]:
    selected = with_output_selection(json.loads(input_text), FILE, NAME)
    return {
        (seed, layout): compile_vyper_json(f"vyper:{version}", selected, hash_seed=str(seed), layout=layout)[
            "contracts"
        ][FILE][NAME]["evm"]
        for layout in layouts
        for seed in range(SEEDS)
    }


def runtime(evm: dict) -> bytes:
    return bytes.fromhex(evm["deployedBytecode"]["object"].removeprefix("0x"))


def primary(input_json: dict, version: str = "0.3.7") -> dict:
    """The engine's plain compile (the one a verification starts from)."""
    return _primary(json.dumps(input_json, sort_keys=True), version)


@functools.cache
def _primary(input_text: str, version: str) -> dict:
    selected = with_output_selection(json.loads(input_text), FILE, NAME)
    return compile_input(f"vyper:{version}", selected)["contracts"][FILE][NAME]["evm"]


def rare_evm(input_json: dict, avoid: tuple = ()) -> tuple[dict, int]:
    """A code the plain compile (nor any of `avoid`) does not give, and how many seeds give it: of those,
    the one most seeds give (a few seeds give one code in one run and another in the next)."""
    evms = seed_evms("0.3.7", input_json, LAYOUTS)
    counts = Counter(runtime(evm) for evm in evms.values())
    plain = runtime(primary(input_json))
    others = sorted(
        ((count, code) for code, count in counts.items() if code != plain and code not in avoid), reverse=True
    )
    assert others, f"every seed compiled {NAME} alike: {len(counts)} codes"
    count, code = others[0]
    return next(evm for evm in evms.values() if runtime(evm) == code), count


@pytest.fixture(scope="module")
def world():
    anvil = Anvil()
    explorer = None
    try:
        chain = JsonRpcChain(anvil.url)
        explorer = start_embedded(chain, engine=RealEngine(chain, cache=CompileCache()))
        yield {"anvil": anvil, "explorer": explorer, "chain": chain}
    finally:
        if explorer is not None:
            explorer.stop()
        anvil.stop()


def deploy(world, evm: dict) -> str:
    return world["anvil"].deploy(bytes.fromhex(evm["bytecode"]["object"].removeprefix("0x")), ARGS)


def request_for(address: str, input_json: dict) -> VerificationRequest:
    return VerificationRequest(
        address=address,
        source_code=json.dumps(input_json),
        contract_name=f"{FILE}:{NAME}",
        compiler_version="vyper:0.3.7",
        code_format=CodeFormat.VYPER_JSON,
        constructor_arguments=ARGS.hex(),
    )


def submit(world, address: str, input_json: dict) -> str:
    base = world["explorer"].base_url
    form = {
        "module": "contract",
        "action": "verifysourcecode",
        "contractaddress": address,
        "codeformat": "vyper-json",
        "sourceCode": json.dumps(input_json),
        "contractname": f"{FILE}:{NAME}",
        "compilerversion": "vyper:0.3.7",
        "constructorArguements": ARGS.hex(),
    }
    answer = post(base, form)
    assert answer["status"] == "1", answer
    return poll(base, answer["result"], timeout=300)["result"]


def test_the_bound_0_3_7_follows_the_seed_0_3_10_does_not():
    assert compilers.environment("3", 2) == {
        "PATH": os.defpath,
        "PYTHONHASHSEED": "3",
        "APE_VERIFY_LAYOUT_0": "",
        "APE_VERIFY_LAYOUT_1": "x",
    }
    assert [
        compilers.follows_hash_seed(v)
        for v in ("vyper:0.3.3", "vyper:0.3.4", "0.3.7", "vyper:0.3.8", "vyper:0.3.10", "vyper:0.4.3", "x")
    ] == [False, True, True, False, False, False, False]
    codes = {
        version: Counter(runtime(evm) for evm in seed_evms(version, factory_input(version), LAYOUTS).values())
        for version in ("0.3.7", "0.3.10")
    }
    assert len(codes["0.3.10"]) == 1, codes["0.3.10"]
    assert len(codes["0.3.7"]) >= 2, "ProxyFactory must compile to several codes under 0.3.7"
    # Each 0.3.7 code is every other's instructions in another order: the seed moves code, never changes it.
    first, *others = codes["0.3.7"]
    assert all(diagnose.reordered(first, other) for other in others)
    # An edited constant is other instructions, not another order.
    edited = runtime(primary(factory_input(source=SOURCE.replace("<= 1000", "<= 1001"))))
    assert len(edited) == len(first) and not diagnose.reordered(first, edited)
    # The search names every order: create_vault's 3 callees (3!) times set_fee's 2 (2!), each its
    # own code, among them every code a seed gave (the seeds reach a few, the orders all).
    searched = diagnose.search(ContractInput("vyper:0.3.7", factory_input(), FILE, NAME, "vyper"), lambda evm: False)
    by_order = {bytes.fromhex(json.loads(code)[1].removeprefix("0x")) for code in searched.codes.values()}
    assert searched.orders == len(searched.codes) == searched.distinct == 12, sorted(searched.codes)
    assert set(codes["0.3.7"]) <= by_order, "a seed gave a code no order gives"
    assert all(name.startswith("internal functions in the order _") for name in searched.codes)
    # A search that reproduces stops there: the plain compile's code is among the first orders.
    plain = runtime(primary(factory_input()))
    stopped = diagnose.search(
        ContractInput("vyper:0.3.7", factory_input(), FILE, NAME, "vyper"), lambda evm: runtime(evm) == plain
    )
    assert stopped.order is not None and runtime(stopped.evm) == plain and len(stopped.codes) <= 12


def test_a_deployment_of_a_rare_seed_s_code_is_verified_by_the_pre_check_and_the_local_explorer(world):
    input_json = factory_input()
    evm, share = rare_evm(input_json)
    address = deploy(world, evm)
    started = time.perf_counter()
    result = Verifier(world["chain"], CompileCache(), require_creation=False).verify(request_for(address, input_json))
    seconds = time.perf_counter() - started
    assert result.verified and result.match == "full", result.reason
    assert result.hash_seed.startswith("internal functions in the order _"), result.hash_seed
    assert (
        f"{result.hash_seed} reproduced the deployed code (vyper 0.3.7 lays them out by a set hashed by address, vyper#3369"
        in result.reason
    )
    said = re.search(r"; (\d+) of the (\d+) orders compiled here\)", result.reason)
    assert said, result.reason
    tried, orders = (int(group) for group in said.groups())
    assert 1 <= tried <= orders == 12, said.group(0)
    assert "an explorer that compiles once gets this order only by chance, so it may fail to verify it" in result.reason
    assert runtime(evm).hex() == result.recompiled_runtime
    print(
        f"search: {seconds:.1f} s, {tried} of {orders} orders compiled, {share} of the test's 16 seeds give the code"
    )  # the report's figure
    # The local explorer, the same engine behind HTTP, verifies it too and stores the matching code.
    assert submit(world, address, input_json) == "Pass - Verified"
    (record,) = get(world["explorer"].base_url, action="getsourcecode", address=address)["result"]
    assert (record["ContractName"], record["MatchType"], record["CompilerVersion"]) == (NAME, "full", "vyper:0.3.7")


def test_no_seed_found_names_the_seed_not_a_setting(world):
    input_json = factory_input()
    # One order only, the callees by name: a seed's code in another order is not found.
    first = diagnose.search(ContractInput("vyper:0.3.7", input_json, FILE, NAME, "vyper"), lambda evm: True).evm
    evm, _ = rare_evm(input_json, avoid=(runtime(first),))
    address = deploy(world, evm)
    verifier = Verifier(world["chain"], CompileCache(), require_creation=False, callee_orders=1)
    result = verifier.verify(request_for(address, input_json))
    assert not result.verified and result.setting == "hash seed", result.reason
    assert "the deployed code holds the compiled instructions in another order" in result.reason
    assert "none of the 1 compiles tried here (1 codes, of 1 orders the callees allow)" in result.reason
    assert "settings or source differ" not in result.reason and "settings." not in result.reason, result.reason


def test_a_setting_is_named_with_the_seed_that_reproduces_it_never_one_that_reproduces_as_submitted(world):
    deployed_input = factory_input(optimize=False)
    evm, _ = rare_evm(deployed_input)
    address = deploy(world, evm)
    submitted = factory_input()
    result = Verifier(world["chain"], CompileCache(), require_creation=False).verify(request_for(address, submitted))
    assert not result.verified and result.setting == "optimizer", result.reason
    assert (
        "the deployed code was compiled with settings.optimize=false (vyper 0.3.7's code follows the hash seed: internal functions in the order _"
        in result.reason
    )
    # What the reason blames, the submitted optimize=true, reproduces the deployment under no seed.
    on_chain = bytes.fromhex(result.onchain_runtime)
    job = ContractInput("vyper:0.3.7", submitted, FILE, NAME, "vyper")
    unreproduced = diagnose.search(job, lambda evm: Compiled.from_evm(evm, "vyper").reproduces(on_chain))
    assert unreproduced.order is None and len(unreproduced.codes) == unreproduced.orders == 12
    assert submit(world, address, deployed_input) == "Pass - Verified"


def test_an_edited_constant_is_not_searched_and_names_no_seed(world):
    input_json = factory_input()
    address = deploy(world, primary(input_json))
    edited = factory_input(source=SOURCE.replace("<= 1000", "<= 1001"))
    cache = CompileCache()
    result = Verifier(world["chain"], cache, require_creation=False).verify(request_for(address, edited))
    assert not result.verified and result.setting == "source", result.reason
    assert "hash seed" not in result.reason and "PYTHONHASHSEED" not in result.reason, result.reason
    assert "No single change among settings.optimize=false" in result.reason
    assert cache.compiles <= 6, "the plain compile and the settings tried, no seed"
    # The submitted source compiled as is: verified at once, with no seed to name.
    plain = Verifier(world["chain"], cache, require_creation=False).verify(request_for(address, input_json))
    assert plain.verified and plain.hash_seed is None and plain.reason == ""


def test_the_seed_s_code_differs_only_by_order_where_the_immutable_follows(world):
    """The deployed code is runtime + the immutable: the order is read on the runtime part alone."""
    input_json = factory_input()
    evm, _ = rare_evm(input_json)
    on_chain = bytes.fromhex(world["anvil"].rpc("eth_getCode", deploy(world, evm), "latest")[2:])
    plain = Compiled.from_evm(primary(input_json), "vyper")
    assert len(on_chain) == len(plain.runtime) + 32 and plain.trailing == 32
    assert diagnose.in_another_order(plain, on_chain)
    assert not diagnose.in_another_order(plain, on_chain + b"\x00")
