"""The action syntax the model writes, its parser (strict, then tolerant repair) and the GBNF
grammar that makes the in-process model's replies parse by construction.

The syntax is line-based so that a quoted BQL phrase never needs escaping (small models
mis-escape quotes inside JSON strings)::

    thought: the walrus operator is an assignment expression      (optional, one line)
    search: "assignment expression"[title] OR walrus

    fetch: 2 | Rationale              (a rank in the last search, or an id, then a section)
    visit: pep-0572                   (search-visit mode: the whole document)

    answer: PEP 572
    cite: pep-0572 | (intro)          (one line per citation: a section read in this episode)

The grammar is rebuilt before every call from the episode's state: the collection's real
fields, the ranks and ids on screen with their real section names, and the sections read so
far (the only citations allowed). Under it even a 135M model emits a well-formed action, a BQL
query that is syntactically valid, a fetch of a section that exists, and citations of sections
it has read. What a context-free grammar cannot promise (a reversed date range, a query that
admits nothing) the engine still refuses and the loop turns into an observation.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..errors import SieveError
from ..options import MODES  # re-exported: the modes are named in one place
from .steps import Action, Answer, Citation, Fetch, Search, Visit

MAX_THOUGHT_CHARS = 160
MAX_ANSWER_CHARS = 120
MAX_CITATIONS = 3


class ActionError(SieveError):
    """A reply that cannot be read as an action (a model mistake: goes back as an observation)."""


def tool_names(mode: str) -> tuple[str, ...]:
    """The tool actions of a mode, besides ``answer``."""
    return ("search", "visit") if mode == "search-visit" else ("search", "fetch")


# ------------------------------------------------------------------------------------ parsing
_KEY = re.compile(r"^\s*(thought|search|fetch|visit|answer|cite)\s*:\s?(.*)$")


def parse_action(text: str, mode: str) -> tuple[Action, str]:
    """Read a reply as an action. Returns (action, repair) where ``repair`` names the repair
    that was needed ('' when the reply was already canonical). Raises ``ActionError`` with a
    message that tells the model how to write the action."""
    try:
        return _parse_strict(text, mode), ""
    except ActionError as strict_err:
        try:
            return _parse_tolerant(text, mode)
        except ActionError:
            raise strict_err from None


def _parse_strict(text: str, mode: str) -> Action:
    lines = [ln for ln in text.strip().split("\n") if ln.strip()]
    thought = ""
    if lines and (m := _KEY.match(lines[0])) and m.group(1) == "thought":
        thought = m.group(2).strip()
        lines = lines[1:]
    if not lines:
        raise ActionError(_usage(mode, "the reply has no action line"))
    m = _KEY.match(lines[0])
    if not m or m.group(1) in ("thought", "cite"):
        raise ActionError(_usage(mode, f"cannot read {_clip(lines[0])!r} as an action"))
    kind, arg = m.group(1), m.group(2).strip()
    if kind != "answer" and len(lines) > 1:
        raise ActionError(_usage(mode, "write one action per reply, nothing after it"))
    return _build(kind, arg, lines[1:], thought, mode)


def _build(kind: str, arg: str, rest: Sequence[str], thought: str, mode: str) -> Action:
    tools = tool_names(mode)
    if kind != "answer" and kind not in tools:
        raise ActionError(_usage(mode, f"'{kind}' is not a tool in this mode"))
    if kind == "search":
        if not arg:
            raise ActionError(_usage(mode, "the search has no query"))
        return Search(arg, thought)
    if kind == "fetch":
        doc, sep, section = arg.partition("|")
        doc, section = _unquote(doc), _unquote(section)
        if not sep and doc and not any(c.isspace() for c in doc):
            return Fetch(doc, "", thought)  # no section: the document's outline
        if not sep or not doc or not section:
            raise ActionError(_usage(mode, "a fetch names a document and a section: "
                                           "'fetch: 2 | (intro)'"))
        return Fetch(doc, section, thought)
    if kind == "visit":
        doc = _unquote(arg.split("|")[0])
        if not doc:
            raise ActionError(_usage(mode, "a visit names a rank or an id: 'visit: 2'"))
        return Visit(doc, thought)
    # answer
    if not arg:
        raise ActionError(_usage(mode, "the answer is empty"))
    cites: list[Citation] = []
    for line in rest:
        m = _KEY.match(line)
        if not m or m.group(1) != "cite":
            raise ActionError(_usage(mode, f"after 'answer:' only 'cite:' lines may follow, "
                                           f"not {_clip(line)!r}"))
        cites.append(_citation(m.group(2), mode))
    return Answer(arg, tuple(cites), thought)


def _citation(text: str, mode: str) -> Citation:
    doc, sep, section = text.strip().partition("|")
    doc, section = _unquote(doc), _unquote(section)
    if not doc:
        raise ActionError(_usage(mode, "a citation is 'cite: ID | SECTION'"))
    if not sep or not section:
        section = "(document)" if mode == "search-visit" else ""
        if not section:
            raise ActionError(_usage(mode, "a citation is 'cite: ID | SECTION'"))
    return Citation(doc, section)


def _unquote(s: str) -> str:
    s = s.strip().strip("`").strip()
    if len(s) >= 2 and s[0] == s[-1] and s[0] in "\"'":
        s = s[1:-1].strip()
    return s


def _clip(s: str, n: int = 60) -> str:
    s = " ".join(s.split())
    return s if len(s) <= n else s[: n - 1] + "…"


def _usage(mode: str, problem: str) -> str:
    tool = "visit: 2" if mode == "search-visit" else "fetch: 2 | (intro)"
    return (f"Malformed action: {problem}. Write one action line, e.g. 'search: WORDS', "
            f"'{tool}' or 'answer: SHORT ANSWER' followed by 'cite: ID | SECTION' lines.")


# --- tolerant repair (HTTP backbones, or a reply cut short) -----------------------------------
_FENCE = re.compile(r"```[a-zA-Z]*")
_LOOSE_KEY = re.compile(
    r"^\s*(?:[-*>]\s*|\d+[.)]\s*)?[*_`]*\s*(final answer|thought|search|fetch|visit|answer|"
    r"cite|citations?|sources?|action|observation)\s*[*_`]*\s*[:=]\s*[*_`]*\s*(.*)$",
    re.IGNORECASE)
_CALL = re.compile(r"^\s*(search|fetch|visit|answer)\s*\((.*)\)\s*$", re.IGNORECASE | re.DOTALL)


def _parse_tolerant(text: str, mode: str) -> tuple[Action, str]:
    """Repairs, in order: a JSON object, a function call, loose keyword lines."""
    cleaned = _FENCE.sub("", text).replace("\r", "")
    obj = _json_object(cleaned)
    if obj is not None:
        return _from_json(obj, mode), "json"
    lines = [ln for ln in cleaned.split("\n") if ln.strip()]
    for ln in lines:
        m = _CALL.match(ln)
        if m:
            return _from_call(m.group(1).lower(), m.group(2), mode), "call"
    thought, kind, arg, rest = "", "", "", []
    for ln in lines:
        m = _LOOSE_KEY.match(ln)
        if not m:
            if kind == "answer" and not arg:  # 'Answer:' on its own line, the text below it
                arg = ln.strip()
            continue
        key = m.group(1).lower()
        val = m.group(2).strip().rstrip("*_`").strip()
        if key == "observation":  # the model is hallucinating the tool's reply: stop there
            break
        if key == "thought" and not kind:
            thought = val
        elif key == "action" and not kind:
            sub = _LOOSE_KEY.match(val)
            if sub and sub.group(1).lower() in ("search", "fetch", "visit", "answer"):
                kind, arg = sub.group(1).lower(), sub.group(2).strip()
        elif key in ("search", "fetch", "visit", "answer", "final answer") and not kind:
            kind, arg = ("answer" if key == "final answer" else key), val
        elif key in ("cite", "citation", "citations", "source", "sources") and kind == "answer":
            rest.extend(p for p in re.split(r";\s*", val) if p.strip())
        elif kind:
            break
    if not kind:
        raise ActionError(_usage(mode, "no action found"))
    if kind == "answer":
        # 'answer: X | cite: a | b' on one line
        inline = re.search(r"\|\s*cite\s*:", arg, re.IGNORECASE)
        if inline:
            rest.extend(p for p in re.split(r";\s*", arg[inline.end():]) if p.strip())
            arg = arg[:inline.start()]
        arg = arg.strip().strip("*").strip()
        cites = tuple(_citation(_fix_pair(p), mode) for p in rest)
        if not arg:
            raise ActionError(_usage(mode, "the answer is empty"))
        return Answer(arg[:MAX_ANSWER_CHARS * 2], cites, thought), "lines"
    if kind == "fetch" and "|" not in arg:
        arg = _fix_pair(arg)
    if kind == "search":
        arg = arg.strip().strip("`").strip()
    return _build(kind, arg, [], thought, mode), "lines"


def _fix_pair(s: str) -> str:
    """'2, Origins' / '2 Origins' / 'rank 2 section Origins' -> '2 | Origins'."""
    s = s.strip()
    if "|" in s:
        return s
    s = re.sub(r"^(?:rank|doc|document|id)\s*#?\s*", "", s, flags=re.I)
    if "," in s:
        doc, _, sec = s.partition(",")
    else:
        doc, _, sec = s.partition(" ")
    sec = re.sub(r"^(?:section|sec)\s*[:=]?\s*", "", sec.strip(), flags=re.I)
    return f"{doc.strip().lstrip('#')} | {sec}"


def _json_object(text: str) -> dict | None:
    start = text.find("{")
    end = text.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        obj = json.loads(text[start:end + 1])
    except ValueError:
        return None
    return obj if isinstance(obj, dict) else None


def _from_json(obj: dict, mode: str) -> Action:
    args = obj.get("arguments") or obj.get("args") or obj.get("action_input") or obj
    if isinstance(args, str):
        args = {"query": args}
    name = str(obj.get("action") or obj.get("tool") or obj.get("name") or "").lower()
    if not name:
        name = next((k for k in ("answer", "search", "fetch", "visit") if k in obj), "")
    thought = str(obj.get("thought", ""))
    if name == "search":
        q = args.get("query") or args.get("q") or obj.get("search") or ""
        return _build("search", str(q).strip(), [], thought, mode)
    if name in ("fetch", "visit"):
        doc = args.get("doc") or args.get("rank") or args.get("id") or args.get("document") or ""
        if name == "visit":
            return _build("visit", str(doc), [], thought, mode)
        sec = args.get("section") or args.get("heading") or ""
        return _build("fetch", f"{doc} | {sec}", [], thought, mode)
    if name in ("answer", "final_answer", "final answer"):
        text = args.get("answer") or args.get("text") or obj.get("answer") or ""
        raw = args.get("citations") or args.get("cite") or obj.get("citations") or []
        if isinstance(raw, str):
            raw = re.split(r";\s*", raw)
        cites = []
        for c in raw:
            if isinstance(c, dict):
                cites.append(f"{c.get('doc') or c.get('id', '')} | {c.get('section', '')}")
            elif isinstance(c, (list, tuple)) and len(c) == 2:
                cites.append(f"{c[0]} | {c[1]}")
            else:
                cites.append(_fix_pair(str(c)))
        return _build("answer", str(text).strip(), [f"cite: {c}" for c in cites], thought, mode)
    raise ActionError(_usage(mode, "the JSON object names no known action"))


def _from_call(name: str, inner: str, mode: str) -> Action:
    parts = [p for p in (_unquote(x) for x in _split_args(inner)) if p]
    parts = [re.sub(r"^\w+\s*=\s*", "", p) for p in parts]
    parts = [_unquote(p) for p in parts]
    if name == "search":
        return _build("search", inner.strip().strip("'\"") if not parts else parts[0], [], "",
                      mode)
    if name == "fetch":
        return _build("fetch", " | ".join(parts[:2]), [], "", mode)
    if name == "visit":
        return _build("visit", parts[0] if parts else "", [], "", mode)
    return _build("answer", parts[0] if parts else "", [], "", mode)


def _split_args(inner: str) -> list[str]:
    """Split a call's arguments on commas outside quotes."""
    out, buf, quote = [], [], ""
    for ch in inner:
        if quote:
            buf.append(ch)
            if ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
            buf.append(ch)
        elif ch == ",":
            out.append("".join(buf))
            buf = []
        else:
            buf.append(ch)
    out.append("".join(buf))
    return [x.strip() for x in out]


# ------------------------------------------------------------------------------------ grammar
def gbnf_literal(s: str) -> str:
    """A GBNF string literal for ``s``."""
    out = []
    for ch in s:
        if ch == "\\":
            out.append("\\\\")
        elif ch == '"':
            out.append('\\"')
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ch == "\x7f":
            out.append(f"\\x{ord(ch):02X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _alt(items: Iterable[str]) -> str:
    return " | ".join(gbnf_literal(x) for x in items)


# Letters of a word. Latin-1/Latin Extended letters are words too (BQL folds them); the two
# non-letters in that block (x and ÷) are left out.
_LOW = r"[a-z0-9\u00C0-\u00D6\u00D8-\u00F6\u00F8-\u024F]"
_ANY = r"[A-Za-z0-9\u00C0-\u00D6\u00D8-\u00F6\u00F8-\u024F]"
# What may come before the first letter inside a phrase (keeps the grammar unambiguous, which
# keeps llama.cpp's grammar stacks few and sampling fast).
_NON = r'[^"*\\\nA-Za-z0-9\u00C0-\u00D6\u00D8-\u00F6\u00F8-\u024F]'


# BQL for the sieve mode. Bounded so that a query can never pass BQL's limits: at most two OR
# branches of at most four units at the top, groups of at most four OR branches of at most two
# units, NEAR of at most four items (2*4*8 = 64 atoms), no deeper nesting, words of at most 20
# characters and phrases of at most 64 (a small model otherwise spells on until max_tokens);
# and a bare word may
# be AND, OR or NOT only in the operator position (all-uppercase words that are not operators
# stay possible: PEP, GIL, NEAR). Every AND group starts with a positive unit, so 'NOT x' alone,
# 'x OR NOT y' and 'NOT NOT x' cannot be written.
_BQL_RULES = r"""
query ::= andtop (" OR " andtop)?
andtop ::= posunit (andsep unit){0,3}
andsep ::= " " | " AND "
unit ::= posunit | "NOT " negtarget | "-" negterm
negtarget ::= negterm | date
negterm ::= term scope? | phrase scope? | group
posunit ::= term scope? | phrase scope? | group | near | date
group ::= "(" gand (" OR " gand){0,3} ")" scope?
gand ::= gpos (andsep gunit)?
gunit ::= gpos | "NOT " gneg | "-" gterm
gpos ::= gterm | date
gneg ::= gterm | date
gterm ::= term scope? | phrase scope?
near ::= "NEAR" ("/" [0-9] [0-9]?)? "(" nitem (" " nitem){1,3} ")" scope?
nitem ::= word | phrase
term ::= word (tsep word){0,2} | (word tsep){0,2} pword "*"
tsep ::= "-" | "'" | "."
word ::= mixed | upper
mixed ::= [A-Z]{0,19} LOW ANY{0,19}
upper ::= [A-Z] | [A-NP-Z] [A-Z] | "O" [A-QS-Z] |
  [B-MO-Z] [A-Z] [A-Z] | "A" [A-MO-Z] [A-Z] | "AN" [A-CE-Z] | "N" [A-NP-Z] [A-Z] | "NO" [A-SU-Z] |
  [A-Z] [A-Z] [A-Z] [A-Z]{1,16}
pword ::= [A-Z]{1,19} LOW ANY{0,19} | LOW ANY{1,19}
phrase ::= "\"" NON{0,3} ANY pchar{0,60} "\""
pchar ::= [^"*\\\n]
date ::= "date[" drange "]"
drange ::= dval ".." dval | dval ".." | ".." dval | (">=" | "<=" | ">" | "<") dval | dval
dval ::= year | year "-" month | year "-" mday
year ::= [12] [0-9] [0-9] [0-9]
month ::= "0" [1-9] | "1" [0-2]
mday ::= ("01" | "03" | "05" | "07" | "08" | "10" | "12") "-" d31 |
  ("04" | "06" | "09" | "11") "-" d30 | "02-" d28
d31 ::= "0" [1-9] | [12] [0-9] | "3" [01]
d30 ::= "0" [1-9] | [12] [0-9] | "30"
d28 ::= "0" [1-9] | "1" [0-9] | "2" [0-8]
""".replace("LOW", _LOW).replace("ANY", _ANY).replace("NON", _NON)


def bql_grammar(fields: Sequence[str]) -> str:
    """GBNF rules (root ``query``) for syntactically valid BQL over these fields."""
    scoped = [f for f in fields if f != "date"]
    rules = _BQL_RULES
    rules += f'scope ::= "[" field ("," field){{0,2}} "]"\nfield ::= {_alt(scoped)}\n'
    if "date" not in fields:
        # No date atom on a collection without dates: drop it from every alternative.
        rules = (rules.replace("negtarget ::= negterm | date", "negtarget ::= negterm")
                 .replace(" | near | date\n", " | near\n")
                 .replace("gpos ::= gterm | date", "gpos ::= gterm")
                 .replace("gneg ::= gterm | date", "gneg ::= gterm"))
    return rules


@dataclass(frozen=True)
class Menu:
    """What the next reply may be, as data: the one description every constraint is built
    from. ``gbnf()`` is llama.cpp's grammar (in-process and llama.cpp servers); a server that
    takes a JSON schema instead builds it from the same fields, so every server kind is held
    to the same per-step menu. The fields are ``action_grammar``'s arguments; ``choices``,
    when given, are the only answers allowed (a constrained choice among candidate answers),
    and ``span_rules`` the GBNF of answers copied from shown text."""

    mode: str
    fields: tuple[str, ...] = ()
    fetchable: tuple[tuple[str, tuple[str, ...]], ...] = ()
    citable: tuple[Citation, ...] = ()
    answer_only: bool = False
    prefilled: bool = False
    uncited_answer: bool = True
    queries: tuple[str, ...] | None = None
    free_search: bool = True
    span_rules: str | None = None
    choices: tuple[str, ...] | None = None
    thought_chars: int = MAX_THOUGHT_CHARS

    @classmethod
    def of(cls, mode: str, fields: Sequence[str] = (),
           fetchable: Sequence[tuple[str, Sequence[str]]] = (),
           citable: Sequence[Citation] = (), *, queries: Sequence[str] | None = None,
           choices: Sequence[str] | None = None, **kw: object) -> Menu:
        """A menu from plain sequences (stored as tuples: a menu is hashable and frozen)."""
        return cls(mode, tuple(fields), tuple((lab, tuple(s)) for lab, s in fetchable),
                   tuple(citable), queries=None if queries is None else tuple(queries),
                   choices=None if choices is None else tuple(choices), **kw)  # type: ignore[arg-type]

    def gbnf(self) -> str:
        """The GBNF grammar of this menu (``action_grammar``)."""
        span = self.span_rules
        if self.choices is not None:
            span = f"span ::= {_alt(self.choices)}\n"
        return action_grammar(self.mode, self.fields, self.fetchable, self.citable,
                              answer_only=self.answer_only, prefilled=self.prefilled,
                              uncited_answer=self.uncited_answer, queries=self.queries,
                              free_search=self.free_search, span_rules=span,
                              thought_chars=self.thought_chars)


def as_gbnf(grammar: str | Menu | None) -> str | None:
    """GBNF text for a backbone's ``grammar`` argument (a menu is rendered; text is kept)."""
    return grammar.gbnf() if isinstance(grammar, Menu) else grammar


def action_grammar(mode: str, fields: Sequence[str],
                   fetchable: Sequence[tuple[str, Sequence[str]]],
                   citable: Sequence[Citation], *, answer_only: bool = False,
                   prefilled: bool = False, uncited_answer: bool = True,
                   queries: Sequence[str] | None = None, free_search: bool = True,
                   span_rules: str | None = None,
                   thought_chars: int = MAX_THOUGHT_CHARS) -> str:
    """The GBNF grammar of one reply.

    ``fetchable`` lists (rank or id, its section names) that may be fetched now; in
    search-visit mode only the labels are used. ``citable`` are the sections read so far.
    ``answer_only`` allows nothing but an answer; ``prefilled`` means 'answer: ' is already in
    the model's mouth, so the grammar starts at the answer text; ``uncited_answer=False``
    leaves the answer out while nothing has been read (an answer must cite what was read).
    ``queries`` (when given) are the searches offered as whole lines; ``free_search`` adds any
    well-formed query besides them (``free_search=False`` with no queries: no search at all).
    ``span_rules`` (GBNF with a root rule ``span``) replaces free answer text: the answer can
    then only be a span of shown text (``spans.SpanIndex.grammar``). ``thought_chars`` 0 drops
    the thought line.
    """
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}")
    text = "span" if span_rules else f"[^\\n]{{1,{MAX_ANSWER_CHARS}}}"
    cite_rule = ""
    if citable:
        cite_rule = f"cite ::= {_alt(c.label() for c in citable)}\n"
        # Under the span rule the loop cites the read section that holds the span itself,
        # so the model may stop after the answer line.
        least = 0 if span_rules else 1
        cites = f' ("\\n" "cite: " cite){{{least},{MAX_CITATIONS}}}'
    else:
        cites = ""
    answer_body = f"answerbody ::= {text}{cites}\n" + cite_rule + (span_rules or "")
    if prefilled:
        return "root ::= answerbody\n" + answer_body
    actions = ["answer"] if (citable or uncited_answer or answer_only) else []
    rules = ['answer ::= "answer: " answerbody\n', answer_body]
    if not answer_only:
        search_alts = []
        if queries:
            rules.append(f"menu ::= {_alt(queries)}\n")
            search_alts.append("menu")
        if free_search or queries is None:
            search_alts.append("query")
            if mode == "sieve":
                rules.append(bql_grammar(fields))
            else:
                # Plain words: anything on one line with at least one letter or digit.
                rules.append(f"query ::= {_ANY} [^\\n]{{0,100}}\n")
        if search_alts:
            actions.insert(0, "search")
            rules.append(f'search ::= "search: " ({" | ".join(search_alts)})\n')
        targets = [(label, list(secs)) for label, secs in fetchable if label]
        if mode == "search-visit" and targets:
            actions.insert(1 if search_alts else 0, "visit")
            rules.append(f'visit ::= "visit: " ({_alt(label for label, _ in targets)})\n')
        elif mode != "search-visit":
            alts = []
            for i, (label, secs) in enumerate(targets):
                if secs:
                    rules.append(f"target{i} ::= {gbnf_literal(label + ' | ')} ({_alt(secs)})\n")
                    alts.append(f"target{i}")
            if alts:
                actions.insert(1 if search_alts else 0, "fetch")
                rules.append(f'fetch ::= "fetch: " ({" | ".join(alts)})\n')
    if not actions:
        raise ValueError("no action is possible")
    if thought_chars > 0:
        # Bounded, or a small model rambles until max_tokens and never reaches its action.
        thought = f'thought ::= "thought: " [^\\n]{{1,{thought_chars}}} "\\n"\n'
        root = f"root ::= thought? ({' | '.join(actions)})\n"
    else:
        thought, root = "", f"root ::= ({' | '.join(actions)})\n"
    return root + thought + "".join(rules)
