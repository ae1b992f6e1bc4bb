"""Collection files: connection, schema, migrations."""

from . import layout, pages
from .connection import connect
from .schema import SCHEMA_VERSION, check_version, create

__all__ = ["SCHEMA_VERSION", "layout", "pages", "check_version", "connect", "create"]
