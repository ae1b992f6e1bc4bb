"""Collection files: connection, schema, migrations, metadata, integrity checks."""

from . import content, layout
from .connection import connect, set_unpack_limit
from .integrity import check_ranges
from .meta import Meta, read_meta
from .schema import SCHEMA_VERSION, check_schema, check_version, create

__all__ = ["SCHEMA_VERSION", "Meta", "check_ranges", "check_schema", "check_version",
           "connect", "content", "create", "layout", "read_meta", "set_unpack_limit"]
