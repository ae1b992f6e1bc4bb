"""Collection files: connection, schema, migrations."""

from .connection import connect
from .schema import SCHEMA_VERSION, check_version, create

__all__ = ["SCHEMA_VERSION", "check_version", "connect", "create"]
