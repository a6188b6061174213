"""The explorer's pages in real headless Chromium (Debian's /usr/bin/chromium, driven by Playwright):
the example deployed to anvil by `ape run deploy` and verified on `ape verify serve`, then read back
the way a person would, by clicking. Each test saves a screenshot under test-output/screenshots/."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest
import requests
from eth_abi import decode, encode
from eth_utils import keccak, to_checksum_address

from support import REPO
from support.e2e import summary
from support.service import Anvil, ServerProcess, json_form, poll, post, solc_compile

CHROMIUM = Path("/usr/bin/chromium")
SHOTS = REPO / "test-output" / "screenshots"
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync",
]  # fmt: skip
TIMEOUT_MS = 20_000


@dataclass
class Site:
    anvil: Anvil
    server: ServerProcess
    url: str  # the pages' root, http://127.0.0.1:<port>
    deployed: dict  # the deploy script's name -> checksummed address
    verified: dict  # contract name -> address, from the deploy's verification summary

    @property
    def proxy(self) -> str:
        """Our own EIP-1967 proxy in front of Box, initialised with value 42."""
        return next(self.deployed[n] for n in ("SimpleProxy", "ERC1967Proxy") if n in self.deployed)


@pytest.fixture(scope="module")
def site(example_on_anvil):
    """The session's example on anvil (tests/conftest.py): these tests read it, and add only a
    contract of their own (Evil)."""
    server, proc, deployed = example_on_anvil.explorer, example_on_anvil.proc, example_on_anvil.deployed
    rows = summary(proc.stdout)
    verified = {name: row[0] for name, row in rows.items() if row[1] == "verified" and "(proxy link)" not in name}
    assert {"Token", "Box", "Vault", "Clone"} <= set(deployed) and len(verified) >= 11, proc.stdout[-3000:]
    return Site(example_on_anvil.anvil, server, server.base_url.removesuffix("/api"), deployed, verified)


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    assert CHROMIUM.exists(), "Debian's chromium is missing: apt-get install -y chromium"
    from playwright.sync_api import sync_playwright

    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_playwright() as driver:
        # A persistent context on a fresh directory: the --user-data-dir these tests promise.
        context = driver.chromium.launch_persistent_context(
            str(profile),
            executable_path=str(CHROMIUM),
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": 1280, "height": 900},
        )
        yield context
        context.close()


@pytest.fixture
def page(browser):
    tab = browser.new_page()
    tab.set_default_timeout(TIMEOUT_MS)
    errors: list[str] = []
    tab.on("pageerror", lambda err: errors.append(str(err)))
    tab.page_errors = errors
    yield tab
    tab.close()


def screenshot(page, name: str) -> Path:
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    print(f"screenshot: {path}")
    return path


def eth_call(anvil: Anvil, to: str, signature: str, types: list, values: list, returns: list):
    data = keccak(text=signature)[:4] + encode(types, values)
    result = anvil.rpc("eth_call", {"to": to, "data": "0x" + data.hex()}, "latest")
    return decode(returns, bytes.fromhex(result[2:]))


def run_form(page, panel: str, function: str, *args: str) -> str:
    page.click(f"#tab-{panel}")
    form = page.locator(f"#{panel} form.fn[data-function='{function}']")
    inputs = form.locator("input[name=arg]")
    assert inputs.count() == len(args)
    for i, value in enumerate(args):
        inputs.nth(i).fill(value)
    form.locator("button[type=submit]").click()
    form.locator(".out[data-state=done], .out[data-state=error]").wait_for()
    return form.locator(".out").inner_text()


# -- Verified Contracts ------------------------------------------------------------------------


def test_verified_contracts_lists_every_deployed_contract(site, page):
    page.goto(site.url + "/")
    assert page.locator("h1").inner_text() == "Verified Contracts"
    rows = page.locator("table.contracts tbody tr")
    listed = {
        rows.nth(i).locator("a.addr").inner_text(): rows.nth(i).locator("td").nth(1).inner_text()
        for i in range(rows.count())
    }
    for name, address in site.verified.items():
        assert listed.get(address) == name.rsplit(":", 1)[-1], f"{name} {address} missing from the list: {listed}"
    # An EIP-1167 clone is linked as a proxy, it has no source of its own: everything else is listed.
    assert set(site.deployed.values()) - {site.deployed["Clone"]} <= set(listed)
    # Every row says what the API says of the same record.
    for i in range(rows.count()):
        cells = rows.nth(i).locator("td").all_inner_texts()
        entry = requests.get(
            site.server.base_url,
            params={"module": "contract", "action": "getsourcecode", "address": cells[0]},
            timeout=10,
        ).json()["result"][0]
        assert cells[1] == entry["ContractName"] and cells[2] == entry["CompilerVersion"]
        assert cells[4] == entry["LicenseType"] and cells[5] == entry["MatchType"].capitalize()
        assert cells[6] == ("Yes" if entry["Proxy"] == "1" else "No"), cells
    # The columns the issue names, for a Solidity contract with an optimizer, and a proxy.
    proxy_row = page.locator("table.contracts tbody tr", has=page.locator(f"a:text-is('{site.proxy}')"))
    cells = proxy_row.locator("td").all_inner_texts()
    assert cells[2].startswith("v0.8.") and cells[3] == "Yes, 200 runs" and cells[4] == "MIT" and cells[6] == "Yes"
    assert page.page_errors == []
    screenshot(page, "verified-contracts")


def test_search_by_name_and_by_address(site, page):
    page.goto(site.url + "/")
    everything = page.locator("table.contracts tbody tr td:nth-child(2)").all_inner_texts()
    page.fill("form.search input[name=q]", "Beacon")
    page.click("form.search button")
    names = page.locator("table.contracts tbody tr td:nth-child(2)").all_inner_texts()
    assert {"BeaconProxy", "UpgradeableBeacon"} <= set(names)
    assert sorted(names) == sorted(n for n in everything if "beacon" in n.lower())
    page.goto(site.url + "/?q=" + site.deployed["Vault"][:12].lower())
    assert page.locator("table.contracts tbody tr a.addr").all_inner_texts() == [site.deployed["Vault"]]
    page.goto(site.url + "/?q=NoSuchContractAnywhere")
    assert "No verified contract matches" in page.inner_text("main")
    # A whole address goes straight to its page.
    page.goto(site.url + "/?q=" + site.deployed["Box"])
    assert page.url.endswith("/address/" + site.deployed["Box"])


def test_list_is_newest_first_on_one_page(site, page):
    page.goto(site.url + "/")
    times = page.locator("table.contracts tbody tr time").all_inner_texts()
    assert len(times) >= 11 and times == sorted(times, reverse=True)
    assert page.locator("nav.pager").count() == 0  # fewer than 25 contracts: one page (paging: test_pages_app.py)


# -- a contract page ---------------------------------------------------------------------------


def test_contract_page_shows_source_settings_constructor_and_abi(site, page):
    token = site.deployed["Token"]
    page.goto(f"{site.url}/address/{token}")
    assert token in page.locator("h1").inner_text()
    code = page.locator("#code")
    assert code.is_visible()
    files = page.locator(".file-tab").all_inner_texts()
    assert "Token.sol" in files and "ERC20Base.sol" in files
    visible = page.locator("figure.source:visible")
    assert visible.count() == 1
    page.click(".file-tab:text-is('Token.sol')")
    source = page.locator("figure.source:visible pre").inner_text()
    assert "contract Token is ERC20Base" in source
    assert page.locator("figure.source:visible pre span").count() > 50  # highlighted by Pygments
    settings = page.locator("table.facts").first.inner_text()
    assert "v0.8." in settings and "Yes, 200 runs" in settings and "MIT" in settings
    constructor = page.locator("h2:text('Constructor arguments') + .table-wrap").inner_text()
    assert "Example Token" in constructor and "EXT" in constructor and "1000000000000000000000" in constructor
    abi = json.loads(page.locator("#abi-json").inner_text())
    assert {"balanceOf", "transfer", "holderCount"} <= {item.get("name") for item in abi}
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=site.url)
    page.click("button[data-copy='abi-json']")
    page.locator("button[data-copy='abi-json']:text-is('Copied')").wait_for()
    assert json.loads(page.evaluate("navigator.clipboard.readText()")) == abi
    assert page.page_errors == []
    screenshot(page, "contract-token")


def test_read_contract_returns_what_a_direct_call_returns(site, page):
    token, holder = site.deployed["Token"], site.anvil.accounts[1]
    (direct,) = eth_call(site.anvil, token, "balanceOf(address)", ["address"], [holder], ["uint256"])
    assert direct > 0
    page.goto(f"{site.url}/address/{token}#read")
    out = run_form(page, "read", "balanceOf(address)", holder)
    assert out.strip() == f"uint256: {direct}"
    (name,) = eth_call(site.anvil, token, "name()", [], [], ["string"])
    assert run_form(page, "read", "name()").strip() == f"string: {name}"
    # Bad input is answered in the form, naming the parameter and the fix.
    error = run_form(page, "read", "balanceOf(address)", "0x1234")
    assert "is not an address; use 0x followed by 40 hex digits" in error
    assert page.page_errors == []
    screenshot(page, "read-contract")


def test_write_contract_builds_calldata_and_sends_nothing(site, page):
    token = site.deployed["Token"]
    to, amount = site.anvil.accounts[2], 12345
    before = eth_call(site.anvil, token, "balanceOf(address)", ["address"], [to], ["uint256"])
    page.goto(f"{site.url}/address/{token}#write")
    out = run_form(page, "write", "transfer(address,uint256)", to, str(amount))
    expected = (
        "0x" + (keccak(text="transfer(address,uint256)")[:4] + encode(["address", "uint256"], [to, amount])).hex()
    )
    assert f"data: {expected}" in out and f"to: {token}" in out
    assert eth_call(site.anvil, token, "balanceOf(address)", ["address"], [to], ["uint256"]) == before
    screenshot(page, "write-contract")


# -- proxies -----------------------------------------------------------------------------------


def test_read_as_proxy_reads_the_implementations_state_through_the_proxy(site, page):
    proxy, box = site.proxy, site.deployed["Box"]
    (through_proxy,) = eth_call(site.anvil, proxy, "value()", [], [], ["uint256"])
    (at_box,) = eth_call(site.anvil, box, "value()", [], [], ["uint256"])
    assert through_proxy == 42 and at_box != through_proxy  # the proxy's own storage, not Box's
    page.goto(f"{site.url}/address/{proxy}#readProxy")
    assert page.locator("#implementation-link").get_attribute("href") == f"/address/{box.lower()}"
    # Opening the tab reads the argument-less functions at once, as public explorers do.
    version = page.locator("#readProxy form.fn[data-function='version()'] .out[data-state=done]")
    assert version.inner_text().strip() == "string: Box v1"
    out = run_form(page, "readProxy", "value()")
    assert out.strip() == f"uint256: {through_proxy}"
    (admin,) = eth_call(site.anvil, proxy, "admin()", [], [], ["address"])
    assert run_form(page, "readProxy", "admin()").strip() == f"address: {to_checksum_address(admin)}"
    assert page.page_errors == []
    screenshot(page, "read-as-proxy")
    # The link leads to the implementation's own page.
    page.click("#readProxy a.addr")
    assert box in page.locator("h1").inner_text()


def test_write_as_proxy_builds_calldata_for_the_proxy(site, page):
    proxy = site.proxy
    page.goto(f"{site.url}/address/{proxy}#writeProxy")
    out = run_form(page, "writeProxy", "setValue(uint256)", "7")
    expected = "0x" + (keccak(text="setValue(uint256)")[:4] + encode(["uint256"], [7])).hex()
    assert f"to: {proxy}" in out and f"data: {expected}" in out
    error = run_form(page, "writeProxy", "setValue(uint256)", "-1")
    assert "out of range" in error and "newValue (uint256)" in error
    assert eth_call(site.anvil, proxy, "value()", [], [], ["uint256"]) == (42,)
    screenshot(page, "write-as-proxy")


# -- unknown addresses and bad requests --------------------------------------------------------


def test_unverified_and_unknown_addresses_get_a_clear_page(site, page):
    response = page.goto(f"{site.url}/address/{site.anvil.accounts[5]}")
    assert response.status == 200
    assert "there is no contract at this address" in page.inner_text("main")
    clone = site.deployed["Clone"]  # code, no source of its own, but a verified proxy link
    page.goto(f"{site.url}/address/{clone}#readProxy")
    # As Blockscout shows a minimal proxy: its implementation's verified source, and says whose it is.
    code = page.locator("#code").text_content()
    assert "Minimal Proxy Contract (EIP-1167) for" in code and "its implementation's" in code, code[:300]
    assert run_form(page, "readProxy", "value()").strip() == "uint256: 99"
    response = page.goto(f"{site.url}/address/not-an-address")
    assert response.status == 404 and "is not an address" in page.inner_text("main")
    screenshot(page, "not-an-address")


def test_form_endpoints_refuse_bad_input_with_json_text(site):
    token = site.deployed["Token"]
    cases = [
        ({"address": token, "function": "balanceOf(address)", "args": ["0x12"]}, 400, "is not an address"),
        ({"address": token, "function": "nope()", "args": []}, 400, "Unknown function"),
        ({"address": token, "function": "transfer(address,uint256)", "args": [token, "1"]}, 400, "Write form"),
        ({"address": site.anvil.accounts[5], "function": "x()", "args": []}, 404, "not verified"),
        ({"address": token, "function": "balanceOf(address)", "args": "x"}, 400, "args: expected a JSON array"),
    ]
    for body, status, text in cases:
        response = requests.post(site.url + "/page-api/read", json=body, timeout=10)
        assert response.status_code == status and text in response.json()["error"], (body, response.text)
    response = requests.post(site.url + "/page-api/read", data=b"{not json", timeout=10)
    assert response.status_code == 400 and "must be JSON" in response.json()["error"]
    response = requests.post(
        site.url + "/page-api/calldata",
        json={"address": token, "function": "transfer(address,uint256)", "args": [token, "1"], "value": "5"},
        timeout=10,
    )
    assert response.status_code == 400 and "not payable" in response.json()["error"]


def test_a_revert_through_a_proxy_is_an_answer_named_by_the_implementation(site):
    """OpenZeppelin's proxiableUUID() reverts when called through the proxy, by design: Read as
    Proxy answers HTTP 200 with the custom error decoded through BoxUUPS's verified ABI."""
    body = {"address": site.deployed["UUPSProxy"], "function": "proxiableUUID()", "args": [], "proxy": True}
    response = requests.post(site.url + "/page-api/read", json=body, timeout=10)
    assert response.status_code == 200, response.text
    assert response.json() == {"ok": False, "reverted": True, "error": "reverted: UUPSUnauthorizedCallContext()"}


# -- escaping ----------------------------------------------------------------------------------

EVIL_FILE = "contracts/<img src=x onerror=window.__pwned=1>.sol"
EVIL_SOURCE = """// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// @title <script>window.__pwned = 2</script> in NatSpec
contract Evil {
    // a comment that ends the page's script: </script><script>window.__pwned = 3</script>
    string public constant note = "</script><script>window.__pwned = 4</script>";

    function label() external pure returns (string memory) {
        return "<script>window.__pwned = 5</script>";
    }
}
"""


def test_submitted_markup_shows_as_text_and_runs_nothing(site, page):
    input_json = {
        "language": "Solidity",
        "sources": {EVIL_FILE: {"content": EVIL_SOURCE}},
        "settings": {"optimizer": {"enabled": False, "runs": 200}},
    }
    output = solc_compile(input_json)
    creation = output["contracts"][EVIL_FILE]["Evil"]["evm"]["bytecode"]["object"]
    address = site.anvil.deploy(creation)
    guid = post(site.server.base_url, json_form(address, input_json, f"{EVIL_FILE}:Evil"))["result"]
    assert poll(site.server.base_url, guid, timeout=120)["result"] == "Pass - Verified"

    raw = requests.get(f"{site.url}/address/{address}", timeout=10).text
    assert "<script>window" not in raw and "</script><script>" not in raw and "<img src=x" not in raw
    page.goto(f"{site.url}/address/{address}")
    source = page.locator("figure.source:visible pre").inner_text()
    assert '"</script><script>window.__pwned = 4</script>"' in source
    assert "// a comment that ends the page's script: </script><script>window.__pwned = 3</script>" in source
    assert "/// @title <script>window.__pwned = 2</script> in NatSpec" in source
    assert EVIL_FILE in page.locator("figcaption").inner_text()
    assert f"{EVIL_FILE}:Evil" in page.locator("table.facts").first.inner_text()
    out = run_form(page, "read", "label()")
    assert out.strip() == "string: <script>window.__pwned = 5</script>"
    assert run_form(page, "read", "note()").strip() == "string: </script><script>window.__pwned = 4</script>"
    # Nothing ran and nothing was added: our one script tag, no image from the file name.
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert page.evaluate("document.scripts.length") == 1
    assert page.locator("main img").count() == 0
    assert page.page_errors == []
    page.click("#tab-code")
    screenshot(page, "escaping")
    page.goto(f"{site.url}/?q=Evil")
    assert page.locator("table.contracts tbody tr td:nth-child(2)").all_inner_texts() == ["Evil"]
    assert page.evaluate("typeof window.__pwned") == "undefined"


def test_pages_work_at_a_phone_width(site, browser):
    phone = browser.new_page()
    phone.set_viewport_size({"width": 390, "height": 844})
    try:
        phone.goto(site.url + "/")
        width = phone.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, f"the list overflows a phone's width: {width} px"
        assert phone.locator("table.contracts thead").is_hidden()  # rows become cards with labels
        screenshot(phone, "verified-contracts-phone")
        phone.goto(f"{site.url}/address/{site.proxy}#readProxy")
        assert phone.evaluate("document.documentElement.scrollWidth") <= 390
        screenshot(phone, "read-as-proxy-phone")
    finally:
        phone.close()


def test_pages_fetch_nothing_from_outside(site, page):
    requested: list[str] = []
    page.on("request", lambda r: requested.append(r.url))
    page.goto(f"{site.url}/address/{site.deployed['Vault']}")
    page.wait_for_load_state("networkidle")
    assert requested and all(url.startswith(site.url + "/") for url in requested), requested
    assert "Vault.vy" in page.locator(".file-tab").all_inner_texts()
    assert "vyper:0.4.3" in page.locator("table.facts").first.inner_text()
    policy = requests.get(site.url + "/", timeout=10).headers["content-security-policy"]
    assert "script-src 'self'" in policy and "default-src 'none'" in policy
