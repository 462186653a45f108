"""The client's version (also the distribution's, read by pyproject.toml)."""

VERSION = "0.1.0"
