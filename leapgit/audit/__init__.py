"""The audit (SPEC section 3): re-derive every pass from plain git data, through the same rule
functions the hooks run (``leapgit.rules``), never a copy of them."""
