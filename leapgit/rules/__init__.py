"""The protocol's rules as pure judgments (L1-L9, T1-T9, S1-S6): records, an objects reader
and a config in, refusals with rule ids out. The hooks, the CLI and the audit call these
functions; none of them re-implements a rule. ``push.check_push`` checks a whole push."""
