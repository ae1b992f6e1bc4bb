"""How far the reading of the sources is, shared by the readers that advance it
(``sources``) and the build's progress bar that shows it."""

from __future__ import annotations


class Meter:
    """How far the reading of the sources is, in bytes, for a progress bar with an ETA.

    ``iter_documents`` lists every file before reading the first (a folder is walked up
    front) and sets ``total`` to the sum of their sizes; ``done`` grows as they are read, line
    by line for JSON Lines and file by file for the rest. ``files`` counts the files listed.
    """

    def __init__(self) -> None:
        self.total = 0
        self.done = 0
        self.files = 0
