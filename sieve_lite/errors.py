"""Typed errors. Every user-facing failure is a ``SieveError``; the CLI turns it into one line
and an exit code in one place (``sieve_lite.cli``). Anything else that escapes is our bug."""

from __future__ import annotations


class SieveError(Exception):
    """Base class of every error a user (or a model) can cause. ``str(err)`` is one line."""

    exit_code = 2

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:  # always one line
        return " ".join(self.message.split("\n"))


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


class BuildError(SieveError):
    """A build that cannot go on (no sources, strict mode hit a bad document, ...)."""


class SectionError(SieveError):
    """A fetch that names a document or section the collection does not have."""


class EnvironmentProblem(SieveError):
    """The runtime lacks something we need (an SQLite feature, a model file, a package)."""


class ModelError(SieveError):
    """A language-model backbone failed (cannot load, HTTP error, context overflow)."""


class QuestionError(SieveError):
    """An evaluation questions file that cannot be used (bad line, repeated id, ...), or an
    evaluation output folder that holds a different run."""
