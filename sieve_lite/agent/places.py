"""Nations, their peoples and their states, for reading places out of text.

'United States', 'USA' and 'American' are one value; 'Nevada' is a state of the United
States; 'Tulcea County' a province of Romania. The tables come from countryinfo (a data
package of the world's countries); without it they are empty and places stay plain words.
Nothing here knows a collection.
"""

from __future__ import annotations

import re
from functools import lru_cache

from ..words import words

# Nations of the British Isles that countryinfo (a table of states) folds into one.
_NATIONS = {"england": "english", "scotland": "scottish", "wales": "welsh",
            "britain": "british", "great britain": "british"}


@lru_cache(maxsize=1)
def demonyms() -> dict[str, str]:
    """Folded country names (and their other spellings, 'USA') -> the folded demonym
    ('united states' -> 'american'); each demonym maps to itself. Empty when countryinfo
    is not installed (then 'American' and 'United States' stay different values)."""
    try:
        from countryinfo import CountryInfo
    except ImportError:
        return {}
    out: dict[str, str] = dict(_NATIONS)
    for key, info in CountryInfo.all().items():
        dem = " ".join(words(str(info.get("demonym") or "")))
        if not dem:
            continue
        for name in (key, info.get("name") or "", *(info.get("altSpellings") or [])):
            folded = " ".join(words(str(name)))
            # two-letter codes ('US', 'IN') are words of a sentence too
            if len(folded) > 3:
                out.setdefault(folded, dem)
    for dem in list(out.values()):
        out.setdefault(dem, dem)
    return out


def nation(name: str) -> str:
    """A demonym or a country, folded so that the two compare: 'American', 'the United
    States' and 'USA' are one value; 'French' and 'french' too."""
    folded = " ".join(words(re.sub(r"^the\s+", "", name.strip(), flags=re.I)))
    return demonyms().get(folded, folded)


def is_demonym(name: str) -> bool:
    """Whether ``name`` is what a people is called ('American', 'Welsh'), not a country's
    name ('Mexico'); False for everything without countryinfo."""
    return " ".join(words(name)) in _demonyms_only()


@lru_cache(maxsize=1)
def _demonyms_only() -> frozenset[str]:
    table = demonyms()
    return frozenset(v for v in table.values()) - {k for k, v in table.items() if k != v}


@lru_cache(maxsize=1)
def provinces() -> dict[str, str]:
    """Folded names of states and provinces -> their folded country ('michigan' -> 'united
    states'), from countryinfo's table; empty without it."""
    try:
        from countryinfo import CountryInfo
    except ImportError:
        return {}
    out: dict[str, str] = {}
    for key, info in CountryInfo.all().items():
        for name in info.get("provinces") or []:
            folded = " ".join(words(str(name)))
            if len(folded) > 3:
                out.setdefault(folded, key)
    return out


# The nations of Britain are British too: 'English' does not deny 'British'.
WITHIN = {"british": frozenset({"english", "scottish", "welsh", "british"})}


def lookup(name: str) -> tuple[str, str] | None:
    """A folded name as a nation, ('american', 'nation') for 'united states', or a state,
    ('nevada', 'united states'); None for anything else."""
    nations, states = demonyms(), provinces()
    if name in nations:
        return nations[name], "nation"
    return (name, states[name]) if name in states else None


def places_in(ws: list[str]) -> list[tuple[str, str]]:
    """The nations and states a run of folded words names, in order (``lookup`` of its
    longest runs of three words or fewer)."""
    out, i = [], 0
    while i < len(ws):
        for n in (3, 2, 1):
            found = lookup(" ".join(ws[i:i + n])) if len(ws[i:i + n]) == n else None
            if found:
                out.append(found)
                break
        else:
            n = 1
        i += n
    return out


_DIVISIONS = frozenset({"county", "province", "state", "region", "department", "oblast",
                        "prefecture", "district", "governorate"})


def place(name: str) -> tuple[str, str] | None:
    """What a whole place name is (``lookup``): 'Tulcea County' a province of Romania,
    'Romania' a nation; None for anything else ('Lake Golovița', 'Paris')."""
    ws = words(re.sub(r"^the\s+", "", name.strip(), flags=re.I))
    if len(ws) > 1 and ws[-1] in _DIVISIONS:
        ws = ws[:-1]
    return lookup(" ".join(ws))


__all__ = ["WITHIN", "demonyms", "lookup", "nation", "place", "places_in", "provinces"]
