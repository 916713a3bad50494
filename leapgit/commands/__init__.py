"""One module per CLI command; each exposes plain typed functions the click layer calls."""
