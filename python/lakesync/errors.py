"""Exceptions raised by lakesync.

Every error of the C++ core carries a kind; each kind has one exception class here, all derived from
:class:`LakesyncError`. The message is the one the ``lakesync`` command prints after ``error:``
(it names the table, file, version or key concerned).
"""

from __future__ import annotations


class LakesyncError(Exception):
    """Base class of every lakesync error. ``kind`` is the core's error kind name."""

    kind = "unknown"


class NotFoundError(LakesyncError, LookupError):
    """A table, namespace, file, snapshot or version does not exist (CLI exit code 3)."""

    kind = "not found"

    def __str__(self) -> str:  # LookupError would quote the message like a KeyError
        return str(self.args[0]) if self.args else ""


class AlreadyExistsError(LakesyncError):
    """A table or namespace already exists."""

    kind = "already exists"


class InvalidArgumentError(LakesyncError, ValueError):
    """Bad input: options, configuration keys, filters, schemas, rows (CLI exit code 2)."""

    kind = "invalid argument"


class CommitConflictError(LakesyncError):
    """Another writer committed first in a way this commit cannot retry past; run again."""

    kind = "commit conflict"


class CommitStateUnknownError(LakesyncError):
    """The commit may or may not have landed; its files were kept. Running again is safe."""

    kind = "commit state unknown"


class LakesyncIOError(LakesyncError, OSError):
    """Reading or writing storage failed."""

    kind = "I/O error"


class CorruptError(LakesyncError):
    """A file or metadata document is not what its format says (CLI exit code 4)."""

    kind = "corrupt data"


class UnsupportedError(LakesyncError):
    """Valid input that lakesync does not handle (yet)."""

    kind = "unsupported"


class UnauthenticatedError(LakesyncError):
    kind = "unauthenticated"


class ForbiddenError(LakesyncError):
    kind = "forbidden"


class UnavailableError(LakesyncError):
    """A service is down or overloaded; worth retrying."""

    kind = "unavailable"


class NamespaceNotEmptyError(LakesyncError):
    kind = "namespace not empty"


_BY_KIND = {
    cls.kind: cls
    for cls in (
        NotFoundError,
        AlreadyExistsError,
        InvalidArgumentError,
        CommitConflictError,
        CommitStateUnknownError,
        LakesyncIOError,
        CorruptError,
        UnsupportedError,
        UnauthenticatedError,
        ForbiddenError,
        UnavailableError,
        NamespaceNotEmptyError,
    )
}


def error_class(kind: str) -> type[LakesyncError]:
    """The exception class for a core error kind (used by the extension module)."""
    return _BY_KIND.get(kind, LakesyncError)


__all__ = [
    "LakesyncError",
    "NotFoundError",
    "AlreadyExistsError",
    "InvalidArgumentError",
    "CommitConflictError",
    "CommitStateUnknownError",
    "LakesyncIOError",
    "CorruptError",
    "UnsupportedError",
    "UnauthenticatedError",
    "ForbiddenError",
    "UnavailableError",
    "NamespaceNotEmptyError",
]
