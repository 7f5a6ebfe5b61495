"""guiforge: a declarative data-synthesis DAG for computer-use agent training data."""

__version__ = "0.1.0"
