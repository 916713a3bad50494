"""leapgit: slices of balls, a blind tribunal and one write spine, recorded in git."""

__version__ = "0.1.0"
