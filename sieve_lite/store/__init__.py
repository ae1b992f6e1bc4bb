"""Collection files: connection, schema, migrations."""

from . import layout
from .connection import connect
from .schema import SCHEMA_VERSION, check_version, create

__all__ = ["SCHEMA_VERSION", "layout", "check_version", "connect", "create"]
