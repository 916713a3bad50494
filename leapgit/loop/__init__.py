"""`leap run`: the loop that drives a slice from its cut to the spine (issue 15)."""
