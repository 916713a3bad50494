"""The slice: draft loading, validation (L1, L2, L4), scope paths and stamps, waves (L5)."""
