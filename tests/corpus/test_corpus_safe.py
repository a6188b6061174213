"""Safe (@safe-global/safe-contracts 1.4.1 from npm; solc 0.7.6, optimizer disabled, istanbul)
deployed by corpus/safe's own script: the SafeL2 singleton, the proxy factory, the fallback handler,
MultiSendCallOnly, and a 2-of-3 Safe, a SafeProxy the factory creates with CREATE2 (its singleton
in storage slot 0: no standard proxy slot). Every contract verified after deploy, then by address
alone, standard-json and flattened, and read back."""

from support.corpus import ProtocolChecks


class TestSafe(ProtocolChecks):
    PROTOCOL = "safe"
    CONTRACTS = ["SafeL2", "SafeProxyFactory", "CompatibilityFallbackHandler", "MultiSendCallOnly", "SafeProxy"]
