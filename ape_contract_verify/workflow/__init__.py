"""One verification end to end, batches, verification after deploy and its ledger, reports."""
