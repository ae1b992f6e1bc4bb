"""Bridge questions: the answer is about a thing the question names only through another.

"Where did the composer of film The Merry Monahans die?", "When did the country containing
Nugegoda leave the British Empire?", "Who is the spouse of Big Eye's main director?": the
question names a document (*the entity*: The Merry Monahans) and a role (*the relation*:
composer) that leads from it to the thing asked about. A careful reader reads the entity's
document, finds who or what fills the role there, searches for that, and answers from its
document. The first answer becomes the next search.

* ``entity``: the longest run of the question's words, as written, that is the title of a
  document in this collection (checked with the index).
* ``relations``: the role nouns that lead from it, innermost first ('the mother of the
  director of film X' -> director, then mother), each with the kind of thing it names: a
  person (director, father, spouse, ...), a place (country, city, birth place, ...) or an
  organisation (company, team, university, ...). Plain English, no collection's words.
* ``Bridge.on_read``: in the text read, the thing of that kind nearest the role's words (in
  the sentence that best matches the question), which must itself be a document here; it
  becomes the next read. After the last role, the answer is read from that document.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..errors import QueryError
from ..words import words
from .lives import asked_fact
from .queries import search_words, unqualified
from .queries import titled as titled_doc
from .question import STOPWORDS, Question, analyze, singular
from .roles import PERSON_ROLES, said_in_role

PLACE_ROLES = frozenset("""
country city state county province region town village place location birthplace capital
area district island continent nation municipality
""".split())
# A venue is named like a building or like the body that owns it ('Androscoggin Bank Colisée').
VENUE_ROLES = frozenset("arena stadium venue ground ballpark theatre theater hall".split())
ORG_ROLES = frozenset("""
company team university school college club band party association organization
organisation network label league agency firm studio channel station church institution
museum group corporation airline chain retailer manufacturer brand unit
""".split())
# A work is named by its title, which prose quotes ('as Tyler in the film "The Visit"')
WORK_ROLES = frozenset("""film movie album song single series show novel book game opera
musical magazine newspaper episode documentary sitcom franchise""".split())
# An event is named like one, or like the body that holds it ('the Battle of Adwa')
EVENT_ROLES = frozenset("""battle war siege campaign tournament championship festival election
""".split())
# Kinds of place a name is said 'of' ('the village of Clonbrook' is Clonbrook itself)
_NAMED_KINDS = frozenset("""
village city town county state province region district island municipality country nation
area continent
""".split())
_KIND_OF = {**{r: "person" for r in PERSON_ROLES}, **{r: "place" for r in PLACE_ROLES},
            **{r: "org" for r in ORG_ROLES}, **{r: "venue" for r in VENUE_ROLES},
            **{r: "event" for r in EVENT_ROLES}, **{r: "work" for r in WORK_ROLES}}
_LABELS = {"person": ("PERSON",), "place": ("GPE", "LOC", "FAC"),
           "org": ("ORG", "NORP", "FAC"), "venue": ("FAC", "ORG", "LOC"),
           "event": ("EVENT", "ORG", "FAC"), "work": ("WORK_OF_ART", "PRODUCT", "EVENT")}
# Words between a role and the entity ('the composer of film X', 'the country where X is').
_LINK = r"(?:\s+(?:of|where|in|which|that|who|whose|containing|for|from|at|with)\b)"
# A participle that ties a role after the entity to what is asked ('directed by', 'founded in').
_PARTICIPLE = (r"(?:\w+ed|written|sung|made|run|held|built|known|shot|drawn|sold|won|begun)"
               r"\s+(?:by|in|at|for|on|from|with)\b")
# What the entity itself is ('About Time is a British comedy film that ...'): no role of it.
_IS_A = re.compile(r"\s*(?:is|was|are|were)\s+(?:a|an|the)\s+"
                   r"(?:(?!(?:at|in|of|by|for|from|with|on|to|and)\b)[\w-]+\s+){0,4}")


@dataclass(frozen=True)
class Hop:
    """One role to go through: its noun, the kind of thing it names, and the words of the
    question around it (what the bridge sentence should say)."""

    role: str
    kind: str
    cues: tuple[str, ...]


def entity(coll: Any, q: Question | str) -> tuple[str, str] | None:
    """(the question's words that name it, document id) of the longest run of the question's
    words that is exactly a document's title here; None when no run is."""
    q = analyze(q)
    if "title" not in coll.fields:
        return None
    # a possessive ends a name ("Princess Feodora Of Denmark's father")
    toks = re.findall(r"[\w][\w.&-]*(?:['’](?!s\b)[\w.&-]+)*", q.text)
    best: tuple[int, str, str, list[str]] | None = None
    for n in range(min(10, len(toks)), 0, -1):
        for i in range(len(toks) - n + 1):
            run = toks[i:i + n]
            if not run[0][:1].isupper() and not run[0][:1].isdigit():
                continue
            ws = words(" ".join(run))
            if not ws or all(w in STOPWORDS for w in ws) or (n == 1 and i == 0):
                continue
            doc = titled_doc(coll, ws)
            if doc is not None and (best is None or n > best[0]):
                best = (n, " ".join(run), doc, ws)
        if best is not None:
            # of several pages so titled ('The Hard Easy (film)', 'The Hard Easy (Adventure
            # Time)'), the one about the question's other words ('episode', 'guest stars')
            about = search_words(q, best[3])
            return best[1], (titled_doc(coll, best[3], about) if about else None) or best[2]
    return None


# The clause after a name that ties a role right before it to it: 'the country X is from',
# 'the company X is part of', 'the city X played for', 'the state X was fought?'
_TIE = (r"\s+(?:(?:is|was|are|were)\s+(?:\w+\s+){0,2}(?:in|from|of|at|on|to|for|with|by)\b"
        r"|\w+(?:s|ed)\s+(?:to|for|in|at|with)\b|(?:is|was|are|were)\s+\w+\s*[?.]?\s*$)")


def relations(q: Question | str, name: str) -> list[Hop]:
    """The roles that lead from the entity ``name`` to what is asked, innermost first: the
    role nouns of the question before the entity ('the country where Baure is located',
    'the mother of the director of film X', 'the country Signmark is from'), after a
    possessive ('Big Eye's main director', "Gisvi's city of birth"), or, when there is none
    of those, after the entity with a relative clause ('X was a professor at a university
    that is located in what city?')."""
    q = analyze(q)
    low = q.text.lower()
    span = _locate(low, name)
    if span is None:
        return []
    before = low[:span[0]]
    after = low[span[1]:]
    hops: list[Hop] = []
    # "X's (main) director", "X's city of birth", right after the entity
    for m in (re.match(r"['’]s?\s+(\w+)(\s+of\s+birth)?", after),
              re.match(r"['’]s?\s+\w+\s+(\w+)(\s+of\s+birth)?", after)):
        if m and _singular(m.group(1)) in _KIND_OF:
            hops.append(_hop("birthplace" if m.group(2) and _KIND_OF[_singular(m.group(1))]
                             == "place" else _singular(m.group(1)), q, low, name))
            break
    # roles before the entity, the nearest first: 'the R of ... the R2 where ... X'
    found = []
    for m in re.finditer(r"\b(\w+)(?:\s+of\s+(?:birth|death))?" + _LINK, before):
        role = _singular(m.group(1))
        if role not in _KIND_OF:
            continue
        rest = before[m.end():]
        # 'the village of Clonbrook', 'the city of X': the entity's own kind, not a role
        if role in _NAMED_KINDS and m.group(0).endswith(" of") and \
                not re.search(r"\b(?:the|a|an)\b", rest):
            continue
        found.append((m.group(0), role))
    direct = _direct_role(before, after)
    if direct:
        found.append((direct[0], direct[1]))
    for said, role in reversed(found):
        if "of birth" in said:
            role = "birthplace"
        elif "of death" in said:
            role = "deathplace"
        hops.append(_hop(role, q, low, name))
    if len(hops) > 1 and hops[-1].role in ("birthplace", "deathplace") and asked_fact(q):
        # 'What is the place of birth of the performer of song X?': the performer's own page
        # says where he was born (a life fact), the place's page does not say it of him
        hops.pop()
    if not hops:
        # 'X was a professor at a university that is located in what city?', 'X was written
        # by an Italian physicist who has worked in France since what year?': a role after
        # the entity that a relative clause asks about, or a participle ('X plays Tyler in a
        # film directed by which director?', 'X was a raid by a unit founded in what year?')
        tail = q.text[span[1]:]   # ('after' as written: the case of its names)
        m = next((m for m in re.finditer(r"\b(\w+)\s+(?:that|which|who|whose|where|"
                                         + _PARTICIPLE + r")", after)
                  if _singular(m.group(1)) in _KIND_OF
                  and not _IS_A.fullmatch(after[:m.start(1)])
                  # 'Humboldt Peak, in the state where Silverton is located, is part of
                  # what range?': a clause about another name says which X, not X's role
                  and not re.match(r"\s*[A-Z]", tail[m.end():])), None)
        if m:
            hop = _hop(_singular(m.group(1)), q, low, name)
            # what the question says between the entity and the role is what the text
            # says next to the filler ('as Tyler in the film "The Visit"')
            between = [w for w in words(after[:m.start()]) if w not in STOPWORDS] \
                if hop.kind == "work" else []
            hops.append(Hop(hop.role, hop.kind, tuple(dict.fromkeys([*hop.cues, *between]))))
    return hops[:3]


def _through_parents(hops: list[Hop], q: Question, name: str) -> list[Hop]:
    """A grandparent on a side the question names is that parent's parent: 'X's maternal
    grandfather' goes through X's mother, then her father (a page names a person's
    parents, seldom their grandparents)."""
    low = q.text.lower()
    out: list[Hop] = []
    for hop in hops:
        side = re.search(rf"\b(paternal|maternal)\s+{hop.role}\b", low)
        if hop.role in ("grandfather", "grandmother") and side:
            parent = "father" if side.group(1) == "paternal" else "mother"
            out += [_hop(parent, q, low, name), _hop(hop.role.removeprefix("grand"), q, low,
                                                        name)]
        else:
            out.append(hop)
    return out


def _direct_role(before: str, after: str) -> tuple[str, str, int] | None:
    """'the country Signmark is from', 'the company X is part of': a role right before the
    entity, which a clause after it ties to the entity ('the band Pearl Jam' is no role):
    (the words said, the role, the tying clause's length), or None."""
    said = re.search(r"\b(\w+)\s+(?:the\s+)?$", before)
    tie = re.match(_TIE, after)
    # ('the film A Man Called Hero is from': a work's noun before its title names its kind)
    if said and tie and _KIND_OF.get(_singular(said.group(1)), "work") != "work":
        return said.group(0), _singular(said.group(1)), tie.end()
    return None


def _locate(low: str, name: str) -> tuple[int, int] | None:
    """Where the entity's words stand in the lower-cased question, punctuation between them
    allowed ('Johnnycake West Virginia' in 'Johnnycake, West Virginia')."""
    parts = name.lower().split()
    if not parts:
        return None
    m = re.search(r"(?<!\w)" + r"\W{1,3}".join(map(re.escape, parts)) + r"(?!\w)", low)
    return m.span() if m else None


def _singular(word: str) -> str:
    """'performers' -> 'performer' when the singular is a role ('countries' -> 'country')."""
    return singular(word, _KIND_OF)


# How a text says a role with a verb whose forms do not share its first five letters
# ('written by' for the writer, 'sung by' for the singer)
_SAID_AS = {"writer": ["written", "wrote"], "author": ["written", "wrote"],
            "lyricist": ["written", "wrote"], "screenwriter": ["written", "wrote"],
            "singer": ["sung", "sang", "sings"], "founder": ["founded"],
            "creator": ["created"], "designer": ["designed"], "builder": ["built"]}


def _hop(role: str, q: Question, low: str, name: str) -> Hop:
    # the verb after the role says how it is named in the text ('published', 'born')
    # ... at the role's mention nearest the entity ('What county shares a border with the
    # county in which X is': the second)
    span = _locate(low, name)
    at = span[0] if span else 0
    mentions = list(re.finditer(rf"\b{re.escape(role)}\b\s+(?:\w+\s+){{0,3}}", low))
    near = min(mentions, key=lambda m: abs(m.start() - at), default=None)
    own = set(words(name))
    cue = [w for w in words(near.group(0)) if w not in STOPWORDS and w not in own] \
        if near else [role]
    if near and span:
        tie = [w for w in _tie_words(low, near.start(), near.start() + len(role), span)
               if w not in STOPWORDS and w not in own]
        cue += tie if len(tie) <= MAX_TIE_WORDS else []  # (more is no one clause)
    if role == "birthplace":
        cue += ["born", "birth"]
    cue += _SAID_AS.get(role, [])
    return Hop(role, _KIND_OF.get(role, "place"), tuple(dict.fromkeys([role, *cue])))


# The words that tie a role to the entity: what stands between them ('an organization
# recognized by', 'the voice of Lara Croft in a video game'), and, when a relative clause
# opens between a role and the entity after it, the rest of that clause ('the organization
# that X served two terms as president was founded ...', 'the band that X played drums
# for'). The text says them next to the role's filler.
_RELATIVE = re.compile(r"\b(?:that|which|who|whom|whose|where)\b")
_CLAUSE_END = re.compile(r"\b(?:is|was|are|were|has|have|had|did|does|do|will|can)\b|[,;?]")
MAX_TIE_WORDS = 6


def _tie_words(low: str, start: int, end: int, span: tuple[int, int]) -> list[str]:
    """The question's words that tie the role said at ``low[start:end]`` to the entity at
    ``span`` (see above)."""
    if end <= span[0]:
        between = low[end:span[0]]
        tie = words(between)
        if _RELATIVE.search(between):
            stop = _CLAUSE_END.search(low, span[1])
            tie += words(low[span[1]: stop.start() if stop else len(low)])
    elif start >= span[1]:
        tie = words(low[span[1]:start])
    else:
        return []
    return tie


_BESIDE = re.compile(r"\b(?:borders?|bordering|border with|(?:north|south|east|west)(?:ern)?\s+of|"
                     r"near|across|opposite)\s+(?:the\s+)?$", re.I)


# A part of a place said by its direction ('north-west Iowa', 'eastern Djibouti', 'central
# Texas'), which spaCy keeps in the place's name; in lower case only ('West Virginia' and
# 'Northern Ireland' are places of their own)
_REGION_OF = re.compile(r"^(?:(?:north|south)(?:[- ]?(?:east|west))?(?:ern)?|east(?:ern)?|"
                        r"west(?:ern)?|central|upper|lower)[- ]+(?=[A-Z])")


def bridge_name(text: str, hop: Hop, entities: Any, exclude: set[str]) -> list[str]:
    """Things of the hop's kind that ``text`` names, best first: for a person, the names
    prose gives in the role (``roles.said_in_role``) first; then entities of the kind (for
    a work, also the titles the text quotes), those in the sentences with the role's words
    (on their first five letters) first, nearest those words; a place
    for 'country' / 'state' is the last one a sentence names ('... in Katsina State,
    Nigeria'). Names in ``exclude`` (the entity itself) are left out."""
    if entities is None:
        return []
    from .read import split_sentences

    stems = {c[:5] for c in hop.cues}
    scored: list[tuple[float, int, str]] = []
    # the name said in the role ('directed by Alexandra Pelosi', 'the daughter of Drusus
    # Julius Caesar and Livilla'): the entity model misses many such names
    for j, name in enumerate(said_in_role(text, hop.role) if hop.kind == "person" else ()):
        if " ".join(words(name)) not in exclude:
            scored.append((10.0 - 0.01 * j, 0, name))
    for si, sentence in enumerate(split_sentences(text)[:12]):
        doc = entities(sentence)
        # 'Maharashtra state' (tagged an organisation) says it is a state
        ents = [(e.text, e.start_char, e.end_char) for e in doc.ents
                if e.label_ in _LABELS[hop.kind]
                or (len(e) > 1 and e[-1].lower_ == hop.role and hop.kind == "place")]
        if hop.kind == "work":
            # a work's title is what prose quotes ('in the film "The Visit"')
            ents += [(m.group(1), m.start(1), m.end(1))
                     for m in re.finditer(r'(?:^|(?<=[\s(]))"(\w[^"\n]{0,79}?)"(?!\w)', sentence)]
            ents.sort(key=lambda e: e[1])
        if not ents:
            continue
        marks = [t.idx for t in doc if t.lower_[:5] in stems]
        for j, (span, start, end) in enumerate(ents):
            # ('The Visit' is a film's whole title, 'the United States' is not a place's)
            name = span if hop.kind == "work" else re.sub(r"^(?:the|a|an)\s+", "", span,
                                                            flags=re.I)
            if " ".join(words(name)) in exclude:
                continue
            if marks:
                # a mark inside the name ('Maharashtra state') is as near as can be
                dist = min(0 if start <= m < end else abs(start - m) for m in marks)
                score = 2.0 + 1.0 / (1 + dist / 30)
            else:
                score = 1.0 / (1 + si)
            said = any(doc.text[m:m + 5].lower() == hop.role[:5] for m in marks)
            if hop.role in ("country", "nation", "state") and j == len(ents) - 1 and not said:
                score += 0.5  # a country is named last ('Maharashtra state, India' says which)
            if _BESIDE.search(sentence[max(0, start - 30):start]):
                if hop.kind == "place":
                    continue  # a place it borders, or lies north of, is not where it is
                score -= 1.0
            scored.append((score, -si, name))
            if hop.kind == "place" and (bare := _REGION_OF.sub("", name)) != name and bare:
                # 'north-west Iowa', 'eastern Djibouti': the part of a place is in the place
                scored.append((score - 0.01, -si, bare))
            if name.lower().endswith(" " + hop.role):
                # ... titled 'Katsina State', or just 'Maharashtra'
                scored.append((score - 0.01, -si, name[: -len(hop.role) - 1]))
            owner = re.search(r"\bof (?:the )?([A-Z][^()]*\s[^()]*)$", name)
            if owner and hop.kind in ("org", "event"):
                # 'the General Assembly of the League of Nations': a body of another, which
                # may be the page there is (not a place's one word: 'University of Kansas')
                scored.append((score - 0.02, -si, owner.group(1)))
    scored.sort(reverse=True)
    return list(dict.fromkeys(name for _s, _i, name in scored))


class Bridge:
    """A bridge question under way: the entity's document, the roles to go through, and the
    document each hop leads to; the last one is where the answer is read."""

    def __init__(self, coll: Any, q: Question | str, entities: Any) -> None:
        self.coll = coll
        self.q = analyze(q)
        self.entities = entities
        found = entity(coll, self.q)
        self.name, self.start = found if found else ("", "")
        self.hops = relations(self.q, self.name) if found else []
        self.path: list[str] = [self.start] if self.start else []   # documents, in order
        self.done = 0            # hops gone through
        self.stuck = ""          # why the bridge ended early ('' while it goes on)
        # the last role's fillers named in the last read when none has a page here: the
        # bridge ends there (``open_end``), and the answer is chosen among them
        self.last_names: list[str] = []
        # 'Who is the wife of Kim Jong-chul?': the last role's filler is the answer itself
        last = self.hops[-1].role if self.hops else ""
        # ('What nationality is X's father?' asks about the father, not for him, and 'the
        # county seat of the county where X is' about the county)
        self.asks_role = bool(last) and bool(re.match(
            rf"(?:who|(?:what|which)(?:\s+(?:person|man|woman|one))?)\s+"
            rf"(?:is|was|are|were)\s+(?:the\s+)?(?:\w+\s+)?"
            rf"(?:{re.escape(last)}s?(?=\s+(?:of|where|in|that|which|who|whose|for|from|at)\b"
            rf"|\s*\??$)|{re.escape(self.name.lower())}['’]s?\s+(?:\w+\s+)?"
            rf"{re.escape(last)}s?\s*\??$)", self.q.text.lower())) and self._ends_at_entity()
        self.fillers: list[str] = []  # every role's filler, in order (the last: ``named``)
        self.hops = _through_parents(self.hops, self.q, self.name)

    @property
    def named(self) -> str:
        """The last role's filler, as found in the text ('' before the first)."""
        return self.fillers[-1] if self.fillers else ""

    def _ends_at_entity(self) -> bool:
        """Whether the question says no more after the entity than where it is ('... the
        country where Baure is located?'), not what to ask about its filler ('... located
        named after?')."""
        span = _locate(self.q.text.lower(), self.name)
        tail = self.q.text.lower()[span[1]:] if span else ""
        return bool(re.match(r"(?:['’]s?\s+(?:\w+\s+)?\w+)?\s*(?:(?:is|was|are|were)\s+)?"
                             r"(?:located|situated|found|based|born)?\s*(?:in|at|from)?\s*"
                             r"[?.!]?\s*$", tail))

    def __bool__(self) -> bool:
        return bool(self.start and self.hops)

    def query(self) -> str:
        ws = words(self.name)
        phrase = f'"{" ".join(ws)}"' if len(ws) > 1 else ws[0]
        return f"{phrase}[title]"

    def leads(self) -> list[str]:
        """The documents to read, in order (none once the bridge broke)."""
        return [] if self.stuck else list(self.path)

    def prefer(self, doc: str, sections: list[str]) -> list[str]:
        """``sections`` of ``doc`` (best first) with the first one that names the role about
        to be gone through moved to the front ('desig' for 'designer': a page's 'Design'
        section names its designer, its introduction may not); unchanged when no role is
        about to be gone through there, or no section names it."""
        if self.stuck or not self.path or doc != self.path[-1] or self.done >= len(self.hops) \
                or len(sections) < 2:
            return sections
        stems = {w[:5] for w in self.hops[self.done].cues if len(w) > 2}
        body = {s["heading"]: s["text"].lower()
                for s in (self.coll.document(doc) or {}).get("sections", [])}
        named = next((n for n in sections
                      if any(c in body.get(n, "") or c in n.lower() for c in stems)), None)
        return sections if named is None else [named, *(n for n in sections if n != named)]

    def on_read(self, doc: str, text: str) -> None:
        """After reading the current document: go through the next role (its filler's
        document becomes the next read), or stop at the last one."""
        if doc != self.path[-1] or self.done >= len(self.hops):
            return
        hop = self.hops[self.done]
        # nor is a role's filler the entity, a document gone through or an earlier filler
        # (the sibling of the performer of Decade is not Neil Young)
        exclude = {" ".join(words(self.name))} | {" ".join(words(d)) for d in self.path} | \
            {" ".join(words(n)) for n in self.fillers}
        # (a qualifier in parentheses says which page: 'Damage (Pharoahe Monch Song)' names
        # the song's performer, and he may well fill the role)
        asked = set(words(re.sub(r"\([^()]*\)", " ", self.q.text)))
        # a name the question itself says ('the woman who portrayed Corliss Archer') is
        # what the role is about, not who fills it
        names = [n for n in bridge_name(text, hop, self.entities, exclude)
                 if not set(words(n)) <= asked][:4]
        # a name that is a document's title first: the surest next read
        for titled_only in (True, False):
            for name in names:
                target = self._document_of(name, titled_only, alone=hop.kind == "person")
                if target and target not in self.path:
                    self.path.append(target)
                    self.done += 1
                    self.fillers.append(name)
                    return
        # the last role asked for: who fills it is the answer and needs no page of its own,
        # but the first name found is no sure answer without one (right 2 times in 9 on the
        # QA sets), so the model chooses among the names the text says in the role ('married
        # Mira Cole', 'his father, X') or in a sentence with the role's word: a cast list
        # beside the director is no spouse ('Hobart Bosworth' for 'the director's spouse')
        last = self.asks_role and self.done == len(self.hops) - 1
        self.last_names = self._in_role(text, hop, names) if last else []
        if not self.last_names:
            self.stuck = f"no {hop.role} of {self.name} found in what was read"

    @property
    def open_end(self) -> bool:
        """The last read names the last role's fillers, none with a page of its own: the
        answer is chosen from that read (``answer_doc``, ``fillers_reading``)."""
        return bool(self.last_names)

    @staticmethod
    def _in_role(text: str, hop: Hop, names: list[str]) -> list[str]:
        """Those of ``names`` the text says in the hop's role, or in a sentence with the
        role's word (on its first five letters)."""
        from .read import split_sentences

        said = set(said_in_role(text, hop.role)) if hop.kind == "person" else set()
        stem = re.compile(rf"\b{re.escape(hop.role[:5])}", re.I)
        sentences = [t for t in split_sentences(text) if stem.search(t)]
        return [n for n in names if n in said or any(n in t for t in sentences)]

    def fillers_reading(self, text: str, label: tuple[str, str]) -> Any:
        """At an open end, the read as the model chooses from it (``read.Reading``): the
        sentences that name the last role's fillers, and those names as the candidates,
        in the order ``bridge_name`` found them (its priors fall a tenth a place). The
        question's words need not be in them ('married' says 'spouse')."""
        from .read import Candidate, Reading, Sentence, split_sentences

        said = split_sentences(text)
        sentences: list[Sentence] = []
        cands: list[Candidate] = []
        for j, name in enumerate(self.last_names):
            at = next((i for i, t in enumerate(said) if name in t), None)
            if at is None:
                continue
            if all(x.index != at for x in sentences):
                sentences.append(Sentence(said[at], at, 1.0, 1.0))
            cands.append(Candidate(name, "person", at, round(1.0 - 0.1 * j, 2), label, 1.0))
        sentences.sort(key=lambda x: x.index)
        return Reading(label, sentences, cands)

    def _document_of(self, name: str, titled_only: bool = False, alone: bool = False
                     ) -> str | None:
        """Where to read about ``name``: the document titled so, else (unless
        ``titled_only``) the best-ranked one that has it as a phrase and one of the
        question's other words (the first answer becomes the next search), else (``alone``:
        a person's name of two words or more) the best-ranked one that has it."""
        ws = words(name)
        if not ws:
            return None
        own = set(words(self.name)) | set(ws)
        rest = search_words(self.q, own)
        # of several documents so titled, the one about what is asked, not about the path
        # ('Kansas' on its congressional districts, not its area, for 'The state where
        # Henry Worrall died has how many congressional districts?')
        path = {c for h in self.hops for c in h.cues}
        titled = titled_doc(self.coll, ws, [w for w in rest if w not in path] or rest)
        if titled or titled_only:
            return titled
        phrase = f'"{" ".join(ws)}"' if len(ws) > 1 else ws[0]
        # with one of the question's other words, else a person's name of two words or more
        # alone (a page that names 'Henrik Ibsen' may say 'Norway's' without 'country' or
        # 'citizen'; a place's name is said on many pages that are not about it)
        last = [phrase] if (alone and len(ws) > 1) or not rest else []
        # a page whose title holds the name is about it ('History of Mississippi', 'Prague
        # astronomical clock', 'South Korea at the Olympics'): first, with the other words
        # (not for a person: 'Neil Young (album)' is not about him)
        about = [f"{phrase}[title] AND ({' OR '.join(rest)})"] if rest and not alone else []
        # ('Midway, Copiah County, Mississippi' is a place in it, not about it)
        placed_in = re.compile(r",\s*" + r"\W+".join(map(re.escape, ws)) + r"\W*$")
        for query in about + ([f"{phrase} AND ({' OR '.join(rest)})"] if rest else []) + last:
            try:
                res = self.coll.search(query, k=5, ranker="bm25", strict=True)
            except QueryError:
                return None
            for r in res.results:
                if str(r.id) not in self.path and not (
                        query in about and placed_in.search(unqualified(r.title).lower())):
                    return str(r.id)
        return None

    def question(self) -> str:
        """The question about where the roles led, once they did: the roles and the entity
        replaced by the name found ("What government position was held by the woman who
        portrayed Corliss Archer in the film Kiss and Tell?" -> "What government position
        was held by Shirley Temple?"): the answer document need not say the path's words,
        only what is asked. The question itself before that, or when no span is found."""
        if not self.answer_doc or not self.named or not self.hops or self.open_end:
            return self.q.text
        text = self.q.text
        low = text.lower()
        span = _locate(low, self.name)
        if span is None:
            return text
        at, end = span
        clause = self._relative_clause(span)
        if clause is not None:
            # 'the state where X is located', 'the city where X died': the role and its
            # relative clause, as the question's parse gives them, are the filler
            start, stop = clause
            return text[:start] + self.named + re.sub(r"^\s*,", "", text[stop:])
        # the name's qualifier goes with it ('Damage (X Song)', 'Tin Roof (Y Song)')
        if text[end:end + 1] == ")" and text[at:end].count("(") > text[at:end].count(")"):
            end += 1
        elif qualifier := re.match(r"\s*\([^()]*\)", text[end:]):
            end += qualifier.end()
        # "X's father", "X's main director" (the role right after the possessive first:
        # "X's father born?" is not the role 'born')
        tail = next((m for m in (re.match(r"['’]s?\s+(\w+)(?:\s+of\s+birth)?", low[end:]),
                                 re.match(r"['’]s?\s+\w+\s+(\w+)(?:\s+of\s+birth)?", low[end:]))
                     if m and _singular(m.group(1)) in _KIND_OF), None)
        if tail:
            end += tail.end()
        elif direct := _direct_role(low[:at], low[end:]):
            end += direct[2]  # 'the country Signmark is from': the tying clause goes too
        roles = [m for h in self.hops
                 for m in re.finditer(rf"\b(?:(?:the|a|an)\s+)?(?:\d{{4}}\s+)?"
                                      rf"(?:{re.escape(h.role)}s?"
                                      rf"{'|place of birth' if h.role == 'birthplace' else ''})"
                                      rf"\b", low[:at])]
        if not roles and end == span[1]:
            # the role comes after the entity, and its relative clause is what is asked
            # ('... at a university that is located in what city?' -> 'Columbia University
            # is located in what city?')
            last = re.escape(self.hops[-1].role)
            clause = re.search(rf"\b{last}s?\s+(?:(?:that|which|who)\s+(.+)|"
                               rf"({_PARTICIPLE}.+))$", text[end:], re.I)
            if clause is None:
                return text
            return f"{self.named} {clause.group(1) or 'was ' + clause.group(2)}"
        start = min((m.start() for m in roles), default=at)
        rest = text[end:]
        # 'the 1940 film in which X appeared?': the relative clause's last word or two go
        # with the role it is about
        if re.search(r"\b(?:which|that|whom|who)\b", low[start:at]) and \
                re.fullmatch(r"\s*\w+(?:\s+\w+)?\s*\?", rest):
            rest = "?"
        return f"{text[:start]}{self.named}{rest}"

    def _relative_clause(self, span: tuple[int, int]) -> tuple[int, int] | None:
        """Where the outermost role of the question stands with the relative clause that
        holds the entity ('the state where Pocahontas Mounds is located' in 'When did the
        state where Pocahontas Mounds is located become part of the United States?'), as
        spaCy's parse gives it; None without a parser or such a clause."""
        if self.entities is None or not hasattr(self.entities, "pipe_names") or \
                "parser" not in self.entities.pipe_names:
            return None
        roles = {h.role for h in self.hops}
        best: tuple[int, int] | None = None
        for tok in self.entities(self.q.text):
            if tok.dep_ != "relcl" or _singular(tok.head.lower_) not in roles:
                continue
            # only a clause of place ('where X died'): a 'that' or 'which' clause's parse
            # too often takes the main clause's verb in ('the novel that X based "Nina" on
            # first published' lost 'first published' on HotpotQA)
            if next(tok.subtree).lower_ != "where":
                continue
            sub = list(tok.head.subtree)
            start, stop = sub[0].idx, sub[-1].idx + len(sub[-1])
            if start <= span[0] and span[1] <= stop and \
                    (best is None or stop - start > best[1] - best[0]):
                best = (start, stop)
        return best

    @property
    def answer(self) -> str:
        """The answer when the question asks for the last role's filler ('' otherwise)."""
        return self.named if self.asks_role and self._crossed else ""

    # -- the route interface the loop drives (shared with compare.Comparison) --------------
    def why(self) -> str:
        return f"{self.name}, then its " + ", then ".join(h.role for h in self.hops)

    def settled(self) -> Any:
        """The answer when it is the last role's filler, once found (None otherwise: the
        answer is then chosen from ``answer_doc``)."""
        from .compare import Verdict

        return Verdict(self.answer, f"the {self.hops[-1].role} of {self.name}") \
            if self.answer else None

    def sources(self) -> set[str]:
        """The document that names the answer (its citation)."""
        return {self.path[-2]} if len(self.path) > 1 else set()

    @property
    def answer_doc(self) -> str:
        """The document the answer is read from, once every role was gone through ('' when
        the answer is the last role's filler itself); the last read when it names fillers of
        the last role but none has a page (``open_end``)."""
        if self.open_end:
            return self.path[-1]
        return self.path[-1] if self._crossed and not self.asks_role else ""

    @property
    def _crossed(self) -> bool:
        return self.done >= len(self.hops) and not self.stuck


__all__ = ["Bridge", "Hop", "bridge_name", "entity", "relations"]
