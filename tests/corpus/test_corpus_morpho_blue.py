"""Morpho Blue (@morpho-org/morpho-blue 1.0.0 from npm; solc 0.8.19, via-IR, 999999 runs, paris),
the corpus's via-IR protocol, deployed by corpus/morpho-blue's own script with the package's mocks
and one market opened. Every contract verified after deploy, then by address alone, standard-json
and flattened (flattening may change via-IR output: the plugin must then say so and fall back to
standard-json, or reproduce it), and read back."""

from support import BIN, run
from support.corpus import DEPLOYED, ProtocolChecks, _set, summary_rows


class TestMorphoBlue(ProtocolChecks):
    PROTOCOL = "morpho-blue"
    CONTRACTS = ["Morpho", "ERC20Mock", "ERC20Mock", "OracleMock", "IrmMock", "FlashBorrowerMock"]

    def test_with_codeformat_flatten_in_the_config_every_contract_still_ends_verified(self, deployed):
        """The flat file asked for in the config, not on the command line: where flattening changes
        the via-IR output and no layout keeps it, standard-json is sent instead; either way every
        contract of a second deploy ends verified (a flat file's match may be partial: its metadata
        names one file)."""
        _set(deployed.project, contract_verify={"codeformat": "flatten"})
        try:
            proc = run(
                [BIN / "ape", "run", "deploy", "--network", "ethereum:local:foundry"],
                cwd=deployed.project,
                timeout=900,
                check=False,
            )
        finally:
            _set(deployed.project, contract_verify={"codeformat": "standard-json"})
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        contracts = [(name.strip(), address) for name, address in DEPLOYED.findall(proc.stdout)]
        assert [name for name, _ in contracts] == self.CONTRACTS and {a for _, a in contracts}.isdisjoint(
            {a for _, a in deployed.contracts}
        )
        rows = summary_rows(proc.stdout)
        for name, address in contracts:
            mine = rows.get(address.lower(), [])
            assert mine and all(row[0] == name and row[1] == "verified" for row in mine), (
                name,
                address,
                mine,
                proc.stdout[-3000:],
            )
