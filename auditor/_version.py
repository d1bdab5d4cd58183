"""The package version, in one place (imported by the package, the CLI and the reports)."""

__version__ = "0.1.0"
