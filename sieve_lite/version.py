"""The library's version, on the lowest floor: the modules that write it (a build's metadata,
the MCP server, the download client) import it from here, not from the package's top."""

__version__ = "0.1.0"
