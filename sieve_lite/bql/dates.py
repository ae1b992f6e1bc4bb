"""Date ranges of BQL.md section 4: ``2018..2023``, ``..2002``, ``2018..``, ``>=2020-05``,
``>1999``, ``<1990``, ``<=1990-06``, ``2002``, ``2002-05``, ``2002-05-17``.

Bounds are inclusive and a partial bound covers its whole span. The result is an inclusive
range of days as YYYYMMDD ints, ``None`` for an open side; a document matches when its own
span ``date_lo..date_hi`` overlaps it.
"""

from __future__ import annotations

import calendar
import datetime as _dt
import re

from ..documents import date_span
from ..errors import QueryError
from .tokens import show

_BOUND = re.compile(r"[0-9]{4}(?:-[0-9]{2}(?:-[0-9]{2})?)?")
_COMPARE = re.compile(r"(>=|<=|>|<)(.*)", re.S)
# What a date value starts with: a digit, '..', or a comparison.
_DATE_LIKE = re.compile(r"\s*[0-9<>.=]")

FIRST_DAY = 10101  # 0001-01-01
AFTER_LAST = 100000101  # the day after 9999-12-31, as YYYYMMDD


def looks_like_date(text: str) -> bool:
    """Text that is meant as a date value (and is therefore validated as one)."""
    return bool(_DATE_LIKE.match(text))


def _day(d: int) -> _dt.date:
    return _dt.date(d // 10000, d // 100 % 100, d % 100)


def _ymd(d: _dt.date) -> int:
    return d.year * 10000 + d.month * 100 + d.day


def next_day(d: int) -> int:
    if d >= 99991231:
        return AFTER_LAST
    return _ymd(_day(d) + _dt.timedelta(days=1))


def prev_day(d: int) -> int:
    if d <= FIRST_DAY:
        return 0  # before 0001-01-01: nothing
    return _ymd(_day(d) - _dt.timedelta(days=1))


def format_day(d: int) -> str:
    return f"{d // 10000:04d}-{d // 100 % 100:02d}-{d % 100:02d}"


def _span(bound: str, column: int, query: str) -> tuple[int, int]:
    if not _BOUND.fullmatch(bound):
        raise QueryError(f"'{show(bound)}' at column {column} is not a date; write YYYY, YYYY-MM "
                         "or YYYY-MM-DD, e.g. date[2018..2023] or date[>=2020-05]", column,
                         max(1, len(bound)), query)
    try:
        return date_span(bound)
    except ValueError:
        pass
    parts = [int(x) for x in bound.split("-")]
    if parts[0] == 0:
        why = "there is no year 0000"
    elif len(parts) > 1 and not 1 <= parts[1] <= 12:
        why = "months run 01-12"
    else:
        last = calendar.monthrange(parts[0], parts[1])[1]
        why = f"{bound[:7]} has {last} days"
    raise QueryError(f"impossible date '{bound}' at column {column}: {why}; write a real date, "
                     "e.g. date[2019-02-28]", column, len(bound), query)


def parse_range(text: str, column: int, query: str) -> tuple[int | None, int | None, str]:
    """``text`` (as written, ``column`` = column of its first character) -> (lo, hi, text).

    Surrounding spaces are allowed; spaces inside a value are not.
    """
    lead = len(text) - len(text.lstrip())
    s = text.strip()
    col = column + lead
    if not s:
        raise QueryError(f"empty date range at column {column}; write one, e.g. "
                         "date[2018..2023]", column, 1, query)
    if any(ch.isspace() for ch in s):
        raise QueryError(f"date range '{show(s)}' at column {col} has spaces inside; write it "
                         "without spaces, e.g. date[2018..2023]", col, len(s), query)
    m = _COMPARE.fullmatch(s)
    if m:
        op, value = m.groups()
        vcol = col + len(op)
        if not value:
            raise QueryError(f"'{op}' at column {col} has no date after it; write one, e.g. "
                             f"date[{op}2020-05]", col, len(op), query)
        lo_v, hi_v = _span(value, vcol, query)
        if op == ">=":
            return lo_v, None, s
        if op == ">":
            return next_day(hi_v), None, s
        if op == "<=":
            return None, hi_v, s
        return None, prev_day(lo_v), s
    if ".." in s:
        a, _, b = s.partition("..")
        if ".." in b or (not a and not b):
            if not a and not b:
                raise QueryError(f"date range '..' at column {col} has no bounds; give at least "
                                 "one, e.g. date[2018..] or date[..2002]", col, 2, query)
            raise QueryError(f"'{show(s)}' at column {col} is not a date range; write one "
                             "range, e.g. date[2018..2023]", col, len(s), query)
        lo = _span(a, col, query)[0] if a else None
        hi = _span(b, col + len(a) + 2, query)[1] if b else None
        if lo is not None and hi is not None and lo > hi:
            raise QueryError(f"reversed date range '{show(s)}' at column {col}: it ends before "
                             f"it starts; write the earlier bound first, e.g. date[{b}..{a}]",
                             col, len(s), query)
        return lo, hi, s
    lo, hi = _span(s, col, query)
    return lo, hi, s
