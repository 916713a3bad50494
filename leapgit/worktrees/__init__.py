"""Balls in flight: throwing into worktrees, the handoff, builder runs, rounds, rollback."""
