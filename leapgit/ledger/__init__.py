"""The ledger branch: its path layout, the store that alone writes it, and queries."""
