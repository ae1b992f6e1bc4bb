"""Collection files: connection, schema, migrations, metadata, integrity checks."""

from . import content, integrity, layout, pages, reads, writes
from .connection import connect, set_unpack_limit
from .integrity import check_collection, check_ranges
from .meta import Meta, read_meta
from .schema import SCHEMA_VERSION, check_schema, check_version, create

__all__ = ["SCHEMA_VERSION", "Meta", "check_collection", "check_ranges", "check_schema",
           "check_version", "connect", "content", "create", "integrity", "layout", "pages",
           "read_meta", "reads", "set_unpack_limit", "writes"]
