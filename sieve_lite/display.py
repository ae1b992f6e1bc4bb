"""Text from a collection, made safe to show on a terminal.

A collection may come from anyone, and its titles, headings and texts reach the terminal.
``clean`` drops the characters a terminal acts on instead of printing: C0 and C1 control
characters other than newline and tab (ESC starts colour changes, cursor moves, window titles
and OSC-8 hyperlinks; CR overwrites a line), DEL, and the Unicode bidirectional embeddings,
overrides and isolates (which reorder what is shown). ``for_rich`` also escapes rich markup,
so ``[/oops]`` in a title is printed as written. JSON output needs neither: ``json.dumps``
escapes control characters itself, and it is for programs.
"""

from __future__ import annotations

import re

_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def clean(text: str) -> str:
    """``text`` without terminal control characters (newlines and tabs stay)."""
    return _UNSAFE.sub("", text)


def for_rich(text: str) -> str:
    """``text`` cleaned and with rich markup escaped, to put inside a markup string."""
    from rich.markup import escape

    return escape(clean(text))
