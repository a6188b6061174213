"""From build artifacts and the chain to a `VerificationRequest`: inputs, settings, libraries, constructor arguments, flat files."""
