"""Scoring: derive every outcome from the candidate (L7), red-first (T7.1), keep-or-revert,
the integrator's merge onto the spine (L8, L9) and the audit."""
