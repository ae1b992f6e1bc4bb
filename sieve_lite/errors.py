"""Typed errors. Every user-facing failure is a ``SieveError``; the CLI turns it into one line
and an exit code in one place (``sieve_lite.cli``). Anything else that escapes is our bug."""

from __future__ import annotations


class SieveError(Exception):
    """Base class of every error a user (or a model) can cause. ``str(err)`` is one line."""

    exit_code = 2

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        # Always one line, and safe for a terminal: messages quote collection text (a heading,
        # an id) that may hold control characters.
        from .display import clean

        return clean(" ".join(self.message.split("\n")))


class QueryError(SieveError):
    """A BQL query that cannot be run. Carries the 1-based column and the offending span."""

    def __init__(self, message: str, column: int = 0, length: int = 1, query: str = "") -> None:
        super().__init__(message)
        self.column = column
        self.length = max(1, length)
        self.query = query

    def highlight(self) -> str:
        """The query with a caret line under the offending span (for terminals)."""
        if not self.query or self.column <= 0:
            return ""
        line = self.query.replace("\n", " ")
        return f"{line}\n{' ' * (self.column - 1)}{'^' * self.length}"


class DocumentError(SieveError):
    """A document that does not fit DOCUMENTS.md; ``where`` names the file and line."""

    def __init__(self, message: str, where: str = "") -> None:
        super().__init__(f"{where}: {message}" if where else message)
        self.where = where
        self.reason = message


class CollectionError(SieveError):
    """A collection file that cannot be opened or used (missing, corrupt, other schema...)."""


class DamagedCollection(CollectionError):
    """A file that claims to be a collection of this version but is not what a build makes:
    corrupt pages, a table missing, an altered schema, metadata out of range, a section that
    will not unpack, a statement that ran over its time budget. The file is the problem, not
    the request: exit code 3, never 1 ("nothing found") or 2."""

    exit_code = 3


class OutputError(SieveError):
    """An output path that must not be written: a folder, one of the inputs, a file that is not
    a collection, or a collection to be replaced without ``--force``."""


class DownloadError(SieveError):
    """A download that did not finish (network, HTTP status); running it again resumes."""


class BuildError(SieveError):
    """A build that cannot go on (no sources, strict mode hit a bad document, ...)."""


class SectionError(SieveError):
    """A fetch that names a document or section the collection does not have."""


class EnvironmentProblem(SieveError):
    """The runtime lacks something we need (an SQLite feature, a model file, a package)."""


class ConfigError(SieveError):
    """A configuration file or setting that cannot be used (bad TOML, unknown key, bad value)."""


class ModelError(SieveError):
    """A language-model backbone failed (cannot load, HTTP error, context overflow)."""


class ConstraintIgnored(ModelError):
    """A model server that does not honour the constraint it was sent (its reply to a check
    did not fit it): the run would be unconstrained, so it does not start."""


class DamagedModel(ModelError):
    """A downloaded model file that is not what was asked for (another checksum, not a GGUF
    file): it is not kept. The file is the problem: exit code 3."""

    exit_code = 3


class QuestionError(SieveError):
    """An evaluation questions file that cannot be used (bad line, repeated id, ...), or an
    evaluation output folder that holds a different run."""
