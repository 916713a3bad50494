"""The push rules, split by concept: the ledger branch, ball branches, the spine, what a
full pass is, and the one function that checks a whole push (``push.check_push``)."""
