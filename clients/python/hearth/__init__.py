"""Hearth's Python client: ``import hearth.client`` (see that module), errors in ``hearth.error``."""

from . import client, error
from .hearth_object import HearthObject
from .version import VERSION

__version__ = VERSION

__all__ = ["client", "error", "HearthObject", "__version__"]
