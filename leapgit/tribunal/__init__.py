"""The blind tribunal (T1-T9): eight lenses grade an author-redacted envelope of whole files.

Flow: ``envelope`` (T5) -> ``routing`` (T2-T4) -> ``seating`` over ``providers`` (T6, T8)
-> ``verdict`` rules -> ``tally`` -> ``convergence`` (T7, T9) -> ``outdir`` and
``provenance`` (the ledger record set). ``convene`` drives it; nothing here imports httpx
until a seat is dispatched.
"""
