"""Git hooks: install/uninstall, and the hook entry points (pre-receive, post-commit,
pre-push). The rules they enforce live in ``rules/`` and are shared by every entry point.

This package's ``__init__`` imports nothing: a hook that has nothing to do must start fast.
"""
