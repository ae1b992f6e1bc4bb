"""The per-step menu as a JSON schema, for servers that constrain replies by a schema instead
of a grammar (Ollama, LM Studio, any OpenAI-compatible server), and the way back: a reply in
that JSON read as the action text the loop parses.

``menu_schema(menu)`` encodes the same choices as ``Menu.gbnf()``, within OpenAI's strict
mode (every property required, ``additionalProperties: false``, a root that is an object, at
most 1,000 enum values): the tool, the offered searches, each fetchable card's number or id
with its real section names, and the sections that may be cited are enums; the answer is one
of ``menu.choices`` when they are given, else a string (a span of shown text, which a GBNF
automaton can say and a schema cannot, is checked by the loop after the reply). A reply is::

    {"thought": "...", "action": {"name": "fetch", "doc": "1", "section": "Rationale"}}
    {"action": {"name": "search", "query": "walrus[title]"}}
    {"action": {"name": "answer", "answer": "PEP 572", "cite": ["pep-0572 | infobox"]}}

(``thought`` only when the menu has a thought line; a prefilled answer is the answer object
alone: ``{"answer": ..., "cite": [...]}``). ``reply_text`` turns such a reply into
``thought: ...`` / ``fetch: 1 | Rationale`` lines, and ``action_json`` renders an earlier
action in the JSON form, so the conversation a model sees is in the form it writes.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any

from .gbnf import strings
from .steps import Action, Answer, Citation, Fetch, Search, Visit, render_action
from .syntax import MAX_ANSWER_CHARS, MAX_CITATIONS, ActionError, Menu, parse_action

SCHEMA_NAME = "sieve_action"
MAX_ENUM_VALUES = 1000      # OpenAI strict mode: enum values in one schema
MAX_ENUM_CHARS = 15_000     # ... and their total length once there are more than 250
MAX_QUERY_CHARS = 200
MAX_SPAN_VALUES = 400       # spans listed as an enum (the rest of the budget: the menu)
JSON_TOKENS = 48            # tokens the JSON around an action takes beyond its lines


def shown(value: str) -> str:
    """How an enum value is written in the schema: without double quotes, backslashes or
    control characters. Schema-to-grammar converters differ in how they escape those (one
    in wide use leaves a backslash unescaped, and the grammar no longer parses), and a
    small model copies an escape badly; ``reply_text`` maps the value back exactly."""
    return re.sub(r"[\x00-\x1f\x7f]", " ", value.replace('"', "'").replace("\\", "/"))


def _enum(values: list[str]) -> dict[str, Any]:
    return {"type": "string", "enum": list(dict.fromkeys(shown(v) for v in values))}


def _object(props: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": list(props),
            "additionalProperties": False}


def _text(max_chars: int) -> dict[str, Any]:
    return {"type": "string", "minLength": 1, "maxLength": max_chars}


class _Budget:
    """What is left of strict mode's enum limits while a schema is built."""

    def __init__(self) -> None:
        self.values = MAX_ENUM_VALUES
        self.chars = MAX_ENUM_CHARS

    def take(self, values: list[str], keep: int = 1) -> list[str]:
        """The first values that fit (at least ``keep`` of them when there are any)."""
        out: list[str] = []
        for v in values:
            if (self.values < 1 or self.chars < len(v)) and len(out) >= keep:
                break
            out.append(v)
            self.values -= 1
            self.chars -= len(v)
        return out


@functools.lru_cache(maxsize=16)
def answer_values(menu: Menu) -> tuple[str, ...] | None:
    """The answers a menu allows, when they can be listed: its ``choices``, else the spans its
    span grammar allows when they are few enough to be an enum and reach at least four
    chunks (``gbnf.strings``); None: any text (the loop checks what comes back)."""
    if menu.choices is not None:
        return menu.choices
    if not menu.span_rules:
        return None
    # Depth 5 is the span rule's first chunk and four more: a shorter listing would hold a
    # capable model to one- or two-word answers, and then any text serves it better.
    listed = strings(menu.span_rules, "span", limit=MAX_SPAN_VALUES,
                     max_chars=MAX_ANSWER_CHARS, min_depth=5)
    return tuple(listed) if listed else None


def _answer_props(menu: Menu, budget: _Budget) -> dict[str, Any]:
    props: dict[str, Any] = {}
    values = answer_values(menu)
    if values is not None:
        props["answer"] = _enum(budget.take(list(values)))
    else:
        props["answer"] = _text(MAX_ANSWER_CHARS)
    if menu.citable:
        # Under the span rule (or a choice) the loop cites the section that holds the
        # answer itself, so citing is optional, as in the grammar.
        least = 0 if (menu.span_rules or menu.choices is not None) else 1
        labels = budget.take([c.label() for c in menu.citable])
        # No more citations than sections to cite: a small model otherwise repeats one
        # until it runs out of tokens, and the cut reply is no JSON at all.
        props["cite"] = {"type": "array", "items": _enum(labels), "minItems": least,
                         "maxItems": max(least, min(MAX_CITATIONS, len(labels)))}
    return props


def menu_schema(menu: Menu) -> dict[str, Any]:
    """The JSON schema of one reply under ``menu`` (see the module docstring).

    Raises ``ValueError`` when the menu allows nothing (as ``action_grammar`` does)."""
    budget = _Budget()
    if menu.prefilled:
        return _object(_answer_props(menu, budget))
    branches: list[dict[str, Any]] = []

    def named(name: str, props: dict[str, Any]) -> dict[str, Any]:
        budget.values -= 1  # the tool's name is an enum value too
        return _object({"name": _enum([name]), **props})

    answer_ok = bool(menu.citable or menu.uncited_answer or menu.answer_only)
    if answer_ok:
        # Built first so that its enums (the citations) are never the ones cut.
        answer = named("answer", _answer_props(menu, budget))
    if not menu.answer_only:
        free = menu.free_search or menu.queries is None
        queries = [] if free else budget.take(list(menu.queries or ()), keep=0)
        if queries or free:
            query = _text(MAX_QUERY_CHARS) if free else _enum(queries)
            branches.append(named("search", {"query": query}))
        targets = [(label, list(secs)) for label, secs in menu.fetchable if label and secs]
        if menu.mode == "search-visit" and targets:
            docs = budget.take([label for label, _ in targets], keep=0)
            if docs:
                branches.append(named("visit", {"doc": _enum(docs)}))
        elif menu.mode != "search-visit":
            for label, secs in targets:
                if budget.values < 3:
                    break  # past strict mode's limit: the older cards are left out
                budget.values -= 1  # the name
                taken = budget.take([label, *secs])
                branches.append(_object({"name": _enum(["fetch"]), "doc": _enum(taken[:1]),
                                         "section": _enum(taken[1:])}))
    if answer_ok:
        branches.append(answer)
    if not branches:
        raise ValueError("no action is possible")
    props: dict[str, Any] = {}
    if menu.thought_chars > 0:
        props["thought"] = {"type": "string", "maxLength": menu.thought_chars}
    props["action"] = branches[0] if len(branches) == 1 else {"anyOf": branches}
    return _object(props)


def _json_object(text: str) -> dict[str, Any] | None:
    text = text.strip()
    if text.startswith("```"):  # a fenced reply
        text = re.sub(r"^```[a-zA-Z]*\s*|\s*```$", "", text)
    try:
        obj = json.loads(text)
    except ValueError:
        return None
    return obj if isinstance(obj, dict) else None


class _Names:
    """The real values behind a menu's enum values (``shown`` is one-way)."""

    def __init__(self, menu: Menu) -> None:
        self.queries = {shown(q): q for q in reversed(menu.queries or ())}
        self.choices = {shown(c): c for c in reversed(answer_values(menu) or ())}
        self.docs = {shown(label): label for label, _ in reversed(menu.fetchable)}
        self.sections = {(label, shown(s)): s for label, secs in menu.fetchable for s in secs}
        self.cites = {shown(c.label()): c for c in reversed(menu.citable)}

    def cite_list(self, raw: Any) -> tuple[Citation, ...]:
        out = []
        for c in raw if isinstance(raw, list) else []:
            cite = self.cites.get(str(c))
            if cite is None:  # not one of the menu's: as written (the loop refuses it)
                doc, sep, section = str(c).partition(" | ")
                cite = Citation(doc.strip(), section.strip()) if sep else None
            if cite is not None:
                out.append(Citation(cite.doc, cite.section))
        return tuple(out)

    def answer(self, raw: Any) -> str:
        text = str(raw)
        return self.choices.get(text, " ".join(text.split()))


def reply_text(content: str, menu: Menu) -> str | None:
    """The action text of a reply written under ``menu_schema(menu)``: the lines the loop
    parses (for a prefilled menu, the answer text and its ``cite:`` lines only). None when
    the reply is not such an object (the caller keeps the reply as it came)."""
    obj = _json_object(content)
    if obj is None:
        return None
    names = _Names(menu)
    if menu.prefilled:
        text = names.answer(obj.get("answer", "")).strip()
        if not text:
            return None
        cites = names.cite_list(obj.get("cite"))
        return "\n".join([text, *(f"cite: {c.label()}" for c in cites)])
    act = obj.get("action")
    if not isinstance(act, dict):
        return None
    thought = " ".join(str(obj.get("thought") or "").split())
    name = str(act.get("name", ""))
    action: Action
    if name == "search" and str(act.get("query", "")).strip():
        query = str(act["query"])
        action = Search(names.queries.get(query, " ".join(query.split())), thought)
    elif name in ("fetch", "visit") and act.get("doc"):
        doc = names.docs.get(str(act["doc"]), str(act["doc"]))
        if name == "visit":
            action = Visit(doc, thought)
        elif act.get("section"):
            section = str(act["section"])
            action = Fetch(doc, names.sections.get((doc, section), section), thought)
        else:
            return None
    elif name == "answer" and str(act.get("answer", "")).strip():
        action = Answer(names.answer(act["answer"]), names.cite_list(act.get("cite")), thought)
    else:
        return None
    return render_action(action)


def action_json(text: str, mode: str) -> str | None:
    """An action written as lines (an earlier reply in the conversation) in the JSON form
    of ``menu_schema``; None when the text is not a well-formed action."""
    try:
        action, repair = parse_action(text, mode)
    except ActionError:
        return None
    if repair:
        return None
    act: dict[str, Any]
    if isinstance(action, Search):
        act = {"name": "search", "query": action.query}
    elif isinstance(action, Fetch):
        act = {"name": "fetch", "doc": action.doc, "section": action.section}
    elif isinstance(action, Visit):
        act = {"name": "visit", "doc": action.doc}
    else:
        act = {"name": "answer", "answer": action.text,
               "cite": [c.label() for c in action.citations]}
    obj: dict[str, Any] = {"thought": action.thought} if action.thought else {}
    obj["action"] = act
    return json.dumps(obj, ensure_ascii=False)


def format_note(mode: str) -> str:
    """For the system prompt of a schema server: how the action lines the manual describes
    are written as JSON, each line's example beside its JSON. The same for every step of an
    episode, so that the server's cached prompt prefix stays valid."""
    read = ('visit: 1 is {"action": {"name": "visit", "doc": "1"}}' if mode == "search-visit"
            else 'fetch: 1 | infobox is {"action": {"name": "fetch", "doc": "1", '
                 '"section": "infobox"}}')
    return ("Write each reply as one JSON object, not as lines: "
            f'{read}; search: QUERY is {{"action": {{"name": "search", "query": "QUERY"}}}}; '
            'answer: WORDS with cite: ID | SECTION is {"action": {"name": "answer", '
            '"answer": "WORDS", "cite": ["ID | SECTION"]}}; thought: TEXT goes in '
            '"thought" beside "action".')


__all__ = ["JSON_TOKENS", "MAX_ENUM_VALUES", "SCHEMA_NAME", "action_json", "answer_values",
           "format_note", "menu_schema", "reply_text", "shown"]
