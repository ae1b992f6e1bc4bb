"""Who fills a role, as prose says it: 'directed by Alexandra Pelosi', 'a song by American
rapper 2 Chainz', 'the daughter of Drusus Julius Caesar and Livilla', 'married Marion Byron'.

A bridge ('the mother of the director of film X') and a comparison through a role ('Which
film has the director born later?') both need the name that fills the role in what was read.
spaCy's entity model misses many names ('Alexandra Pelosi', '2 Chainz', 'Ertem Eğilmez'), but
English says a role in a few set ways, and the name after them is the filler. These patterns
come first; the entity model is the fallback (``bridge.bridge_name``, ``compare.related_name``).
A name found here is still only a lead: the caller checks that a document is about it.
Plain English, nothing of any collection.
"""

from __future__ import annotations

import re

# Nouns that name a person by a role or a calling ('the director of X', 'what American civil
# rights leader'): the bridge goes through them, the reader expects a person for them.
PERSON_ROLES = frozenset("""
director directors composer performer singer author writer producer father mother parent
spouse wife husband son daughter child brother sister sibling founder creator president
leader owner ceo chairman player coach manager captain member grandfather grandmother
inventor designer architect artist actor actress presenter host editor publisher narrator
screenwriter lyricist conductor king queen emperor ruler governor mayor successor
predecessor head minister chief teacher student woman man person
physicist scientist chemist biologist mathematician astronomer economist historian philosopher
poet novelist playwright journalist musician pianist guitarist drummer rapper painter sculptor
photographer politician engineer footballer comedian dancer businessman industrialist
""".split())
# ... and the nouns of a project's people ('Which core developer sponsored ...'): a person is
# asked for (read.py's candidates, spans.py's 'Sponsor:' line)
PERSON_NOUNS = frozenset({"person", "author", "developer", "manager", "editor", "owner",
                          "creator", "inventor", "founder", "director", "champion",
                          "delegate", "maintainer", "writer", "dev", "committer",
                          "contributor"})  # 'which core dev sponsored it?'

# A name: capitalised words ('J.' an initial), a particle between them ('Ludwig van
# Beethoven'); one word is a name too ('Ruslana', 'Diplo'), a number may lead ('2 Chainz').
_UPPER = r"[A-ZÀ-ÖØ-ÞĀ-ſ](?<![a-zß-ÿ])"
_WORD = rf"{_UPPER}(?:\.|[\w'’-]+)"
_PARTICLE = r"(?:van|von|de|del|da|di|der|den|la|le|du|bin|al|of|the)"
_ROMAN = r"[IVX]+\b"
_ONE = rf"(?:{_WORD}|{_ROMAN})"
# ... with the title a comma adds ('Godfrey I, Count of Verdun', 'John Lyon, 4th Earl of
# Strathmore and Kinghorne')
_TITLE = rf",\s+(?:\d+(?:st|nd|rd|th)\s+)?{_WORD}(?:\s+(?:of|and|the|de|von)\s+{_WORD}){{1,3}}"
NAME = rf"(?:\d+\s+)?{_WORD}(?:\s+(?:{_PARTICLE}\s+){{0,2}}{_ONE}){{0,4}}(?:{_TITLE})?"
# What may stand between 'by' and the name: a nationality and what the person is ('American
# hip hop artist', 'English singer-songwriter', 'the band'), lowercase words only after it.
_DESCRIBED = r"(?:(?:the\s+)?(?:[A-Z][a-z]+(?:-[A-Z][a-z]+)?\s+(?=[a-z]))?(?:[a-z][\w-]*\s+){0,3})?"

# How a text says each role with 'by' ('directed by', 'a film by'); roles not here use the
# verb made from the role's first letters ('produc' -> 'produced by').
_BY = {
    "director": r"directed|co-directed|(?:film|movie|documentary|drama|comedy)",
    "composer": r"composed|(?:music|score)",
    "performer": r"performed|recorded|sung|(?:song|single|album|track|ep)",
    "singer": r"sung|performed|recorded|(?:song|single)",
    "artist": r"performed|recorded|painted|(?:song|single|album|painting)",
    "writer": r"written|co-written|(?:novel|book|play|poem|story)",
    "author": r"written|(?:novel|book|story|poem)",
    "screenwriter": r"written|co-written",
    "lyricist": r"written|(?:lyrics)",
    "producer": r"produced|co-produced",
    "creator": r"created|co-created",
    "founder": r"founded|co-founded|established",
    "designer": r"designed",
    "architect": r"designed",
    "developer": r"developed",
    "publisher": r"published",
    "painter": r"painted|(?:painting|portrait)",
    "editor": r"edited",
    "presenter": r"presented|hosted",
    "host": r"hosted|presented",
    "narrator": r"narrated",
    "illustrator": r"illustrated",
    "inventor": r"invented",
}
_PARENTS = {"father": 1, "mother": 2, "parent": 1}
# a woman's title: 'son of Queen Salote and her consort Prince Tungi' names the mother first
_WOMAN = re.compile(r"(?:Queen|Princess|Empress|(?:Grand\s+|Arch)?[Dd]uchess|Countess|Lady|"
                    r"Baroness|Marchioness|Viscountess|Dame|Infanta|Tsarina|Mrs\.?|Madame)\s")
_SPOUSES = frozenset({"spouse", "wife", "husband"})


def said_in_role(text: str, role: str) -> list[str]:
    """The names ``text`` gives in ``role``, in the order it says them: after '<role's verb>
    by' (the last of a list of verbs counts for each: 'produced, co-written and directed
    by'), after 'a <kind of work> by' for its maker, the first or second parent of 'son of A
    and B' for a father or mother, the one 'married' or 'the wife of' for a spouse. Empty
    when the text says none of these."""
    role = role.lower()
    text = " ".join(text.split())
    out: list[str] = []
    verbs = _BY.get(role) or (rf"{re.escape(role[:5])}\w*" if len(role) >= 5 else "")
    if verbs:
        cue = rf"\b(?:{verbs})(?:(?:,|,?\s+and)\s+[a-z-]+)*\s+by\s+{_DESCRIBED}({NAME})"
        out += [m.group(1) for m in re.finditer(cue, text)]
        # the role's words at the start of a sentence ('Directed by ...', 'Music by ...'),
        # whichever of them
        out += [m.group(1) for m in re.finditer(
            rf"(?:^|[.;]\s+)(?i:{verbs})\s+by\s+({NAME})", text)]
    if role in _PARENTS:
        for m in re.finditer(rf"\b(?:son|daughter|child|children|sons|daughters)\s+of\s+"
                             rf"(?:the\s+[a-z]+\s+)?({NAME})(?:,?\s+and\s+(?:his\s+wife\s+|"
                             rf"her\s+(?:husband|consort)\s+)?"
                             rf"(?:the\s+[a-z]+\s+)?({NAME}))?", text):
            first, second = m.group(1), m.group(2)
            if not second and " and " in first:
                # 'Simon de Montfort, 5th Earl of Leicester and Alix de Montmorency': a
                # title may hold 'and' too ('Earl of Strathmore and Kinghorne'), so both
                # readings are leads, the whole first
                whole = first
                first, second = first.rsplit(" and ", 1)
                if role != "mother":
                    out.append(whole)
            if _WOMAN.match(first) and not (second and _WOMAN.match(second)):
                first, second = second, first  # the mother named first, by her title
            # the father is named first; one parent named alone is no sure mother
            if role == "mother":
                out += [second] if second else []
            elif first:
                out.append(first)
        for m in re.finditer(rf"\b(?:[Hh]is|[Hh]er|[Tt]heir|whose)\s+{role}(?:,|\s+(?:was|is))"
                             rf"\s+(?:the\s+[a-z ]{{0,30}}?)?({NAME})", text):
            out.append(m.group(1))
    if role in _SPOUSES:
        for m in re.finditer(rf"\b(?:married(?:\s+to)?|(?:[Hh]is|[Hh]er)\s+(?:wife|husband|"
                             rf"spouse)(?:,)?|(?:wife|husband|widow|widower)\s+of)\s+"
                             rf"(?:the\s+[a-z ]{{0,30}}?)?({NAME})", text):
            out.append(m.group(1))
    # a name ends before a word that starts a new clause ('Pelosi In 2011')
    cleaned = [re.sub(r"\s+(?:In|On|At|The|A|An|And|But|He|She|It|They|His|Her)$", "", n)
               .rstrip(".,;") for n in out]
    return list(dict.fromkeys(n for n in cleaned if n and not n.isdigit()))


__all__ = ["NAME", "PERSON_NOUNS", "PERSON_ROLES", "said_in_role"]
