"""The menu as a JSON schema (``schema.py``) and the spans a span grammar allows as a list
(``gbnf.py``): strict mode's rules hold, the schema says what the grammar says, a reply in
it comes back as the action text the loop parses, and llama.cpp's own schema converter reads
every schema we make."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sieve_lite.agent import gbnf
from sieve_lite.agent.schema import (
    MAX_ENUM_VALUES,
    action_json,
    answer_values,
    format_note,
    menu_schema,
    reply_text,
    shown,
)
from sieve_lite.agent.spans import Source, SpanIndex
from sieve_lite.agent.steps import Citation
from sieve_lite.agent.syntax import Menu, parse_action

FIELDS = ("title", "author", "date", "infobox")
CITED = [Citation("pep-0572", "infobox"), Citation("pep-0572", "Abstract")]


def walk(node: Any):
    """Every schema object in a schema."""
    if isinstance(node, dict):
        yield node
        for v in node.values():
            yield from walk(v)
    elif isinstance(node, list):
        for v in node:
            yield from walk(v)


def strict(schema: dict[str, Any]) -> None:
    """OpenAI's strict mode: an object root, every property required, no others, <= 1,000
    enum values."""
    assert schema["type"] == "object" and "anyOf" not in schema
    enums = 0
    for node in walk(schema):
        if node.get("type") == "object":
            assert node["additionalProperties"] is False
            assert node["required"] == list(node["properties"])
        enums += len(node.get("enum", []))
    assert enums <= MAX_ENUM_VALUES


def branches(schema: dict[str, Any]) -> list[dict[str, Any]]:
    act = schema["properties"]["action"]
    return act.get("anyOf", [act])


def names(schema: dict[str, Any]) -> list[str]:
    return [b["properties"]["name"]["enum"][0] for b in branches(schema)]


def test_the_schema_encodes_the_menu() -> None:
    menu = Menu.of("sieve", FIELDS, [("1", ["infobox", "Abstract"]), ("pep-0008", ["Code"])],
                   CITED, queries=['"walrus operator"', "walrus[title]"], free_search=False,
                   thought_chars=40)
    schema = menu_schema(menu)
    strict(schema)
    assert schema["properties"]["thought"]["maxLength"] == 40
    assert names(schema) == ["search", "fetch", "fetch", "answer"]
    search, fetch1, fetch2, answer = branches(schema)
    # offered searches only (no free BQL), written without double quotes
    assert search["properties"]["query"]["enum"] == ["'walrus operator'", "walrus[title]"]
    assert fetch1["properties"]["doc"]["enum"] == ["1"]
    assert fetch1["properties"]["section"]["enum"] == ["infobox", "Abstract"]
    assert fetch2["properties"]["doc"]["enum"] == ["pep-0008"]
    cite = answer["properties"]["cite"]
    assert cite["items"]["enum"] == ["pep-0572 | infobox", "pep-0572 | Abstract"]
    assert cite["minItems"] == 1 and cite["maxItems"] == 2  # no more than there is to cite
    assert answer["properties"]["answer"]["maxLength"] == 120


def test_free_search_no_answer_before_a_read_and_no_thought() -> None:
    menu = Menu.of("sieve", FIELDS, [("1", ["infobox"])], [], uncited_answer=False,
                   queries=None, thought_chars=0)
    schema = menu_schema(menu)
    strict(schema)
    assert "thought" not in schema["properties"]
    assert names(schema) == ["search", "fetch"]
    assert branches(schema)[0]["properties"]["query"] == {"type": "string", "minLength": 1,
                                                          "maxLength": 200}


def test_search_visit_and_prefilled_and_answer_only() -> None:
    visit = menu_schema(Menu.of("search-visit", (), [("1", ["(document)"]), ("2", ["(document)"])],
                                [], queries=[], free_search=False, uncited_answer=False))
    assert names(visit) == ["visit"]
    assert branches(visit)[0]["properties"]["doc"]["enum"] == ["1", "2"]
    only = menu_schema(Menu.of("sieve", (), (), CITED, answer_only=True, choices=["PEP 572"],
                               thought_chars=0))
    strict(only)
    act = only["properties"]["action"]
    assert "anyOf" not in act and act["properties"]["answer"]["enum"] == ["PEP 572"]
    assert act["properties"]["cite"]["minItems"] == 0  # the loop cites what holds it
    pre = menu_schema(Menu.of("sieve", (), (), CITED, prefilled=True))
    strict(pre)
    assert list(pre["properties"]) == ["answer", "cite"]
    with pytest.raises(ValueError):
        menu_schema(Menu.of("sieve", (), (), (), uncited_answer=False, queries=[],
                            free_search=False))


def test_strict_modes_enum_limit_drops_the_oldest_cards() -> None:
    fetchable = [(f"pep-{i:04d}", [f"Section {j}" for j in range(30)]) for i in range(60)]
    schema = menu_schema(Menu.of("sieve", FIELDS, fetchable, CITED, queries=["a", "b"]))
    strict(schema)
    docs = [b["properties"]["doc"]["enum"][0] for b in branches(schema)
            if b["properties"]["name"]["enum"] == ["fetch"]]
    assert docs[0] == "pep-0000" and 20 < len(docs) < 60  # the first cards kept, in order
    # the citations are never the ones cut
    answer = branches(schema)[-1]
    assert len(answer["properties"]["cite"]["items"]["enum"]) == 2


def test_a_reply_comes_back_as_the_action_lines() -> None:
    menu = Menu.of("sieve", FIELDS, [("1", ['The "with" statement', "Abstract"])], CITED,
                   queries=['"walrus operator"'], free_search=False, thought_chars=40)
    fetch = {"thought": "read it", "action": {"name": "fetch", "doc": "1",
                                              "section": shown('The "with" statement')}}
    assert reply_text(json.dumps(fetch), menu) == \
        'thought: read it\nfetch: 1 | The "with" statement'
    search = {"thought": "", "action": {"name": "search", "query": "'walrus operator'"}}
    assert reply_text(json.dumps(search), menu) == 'search: "walrus operator"'
    answer = {"thought": "", "action": {"name": "answer", "answer": "PEP  572",
                                        "cite": ["pep-0572 | infobox"]}}
    text = reply_text(" " + json.dumps(answer) + "\n", menu)
    assert text == "answer: PEP 572\ncite: pep-0572 | infobox"
    assert parse_action(text, "sieve")[1] == ""  # canonical: no repair
    assert reply_text("The sea is wide.", menu) is None
    assert reply_text('{"action": {"name": "dance"}}', menu) is None
    pre = Menu.of("sieve", (), (), CITED, prefilled=True)
    assert reply_text('{"answer": "PEP 572", "cite": ["pep-0572 | Abstract"]}', pre) == \
        "PEP 572\ncite: pep-0572 | Abstract"


def test_earlier_actions_are_shown_in_the_json_form() -> None:
    assert json.loads(action_json("fetch: 1 | Abstract", "sieve")) == \
        {"action": {"name": "fetch", "doc": "1", "section": "Abstract"}}
    assert json.loads(action_json("thought: hm\nsearch: walrus", "sieve")) == \
        {"thought": "hm", "action": {"name": "search", "query": "walrus"}}
    assert action_json("I think the answer is 5", "sieve") is None
    note = format_note("sieve")
    assert '"name": "fetch"' in note and '"cite"' in note and note == format_note("sieve")


SPAN_TEXT = "PEP: 572\nTitle: Assignment Expressions\nAuthor: Chris Angelico, Tim Peters"


def test_a_span_grammar_becomes_the_list_of_its_spans() -> None:
    idx = SpanIndex([Source(SPAN_TEXT, ("pep-0572", "infobox"))])
    rules = idx.grammar(starts={"PEP"})
    listed = gbnf.strings(rules, "span")
    assert listed is not None and listed[:2] == ["PEP", "PEP 572"]
    assert "PEP 572 Title Assignment Expressions" in listed
    assert all(idx.ground(s) is not None for s in listed)  # every one is shown text
    menu = Menu.of("sieve", (), (), CITED, answer_only=True, span_rules=rules,
                   thought_chars=0)
    assert answer_values(menu) == tuple(listed)
    enum = menu_schema(menu)["properties"]["action"]["properties"]["answer"]["enum"]
    assert enum[:2] == ["PEP", "PEP 572"]
    # too many spans to list at any useful depth: any text (the loop grounds it)
    many = SpanIndex([Source(" ".join(f"w{i}" for i in range(900)), ("d", "s"))])
    big = Menu.of("sieve", (), (), CITED, answer_only=True, span_rules=many.grammar(),
                  thought_chars=0)
    assert answer_values(big) is None
    # the menu's own choices win
    chosen = Menu.of("sieve", (), (), CITED, answer_only=True, span_rules=rules,
                     choices=["Tim Peters"], thought_chars=0)
    assert answer_values(chosen) == ("Tim Peters",)


def test_gbnf_strings_reads_the_grammar_it_can_list() -> None:
    g = 'root ::= "a" ("b" | "c")? x{1,2}\nx ::= "y" | "z"\n'
    listed = gbnf.strings(g, "root")
    assert listed is not None and len(listed) == 18 and set(listed) == {
        a + b + x for a in ("a",) for b in ("", "b", "c")
        for x in ("y", "z", "yy", "yz", "zy", "zz")}
    assert [len(s) for s in listed] == sorted(len(s) for s in listed)  # shortest first
    assert gbnf.strings('root ::= [a-z]+\n', "root") is None       # a character class
    assert gbnf.strings('root ::= "a" root?\n', "root", limit=5) == \
        ["a", "aa", "aaa", "aaaa", "aaaaa"]                          # recursion: bounded
    assert gbnf.strings("root ::= missing\n", "root") is None
    assert gbnf.strings('root ::= "a\\"b\\\\c\\n"\n', "root") == ['a"b\\c\n']


def test_llama_cpps_converter_reads_every_schema() -> None:
    """What an imitation (and llama-cpp-python's server, and Ollama, which use the same
    converter) does with our schemas: each becomes a GBNF grammar llama.cpp parses."""
    llama_cpp = pytest.importorskip("llama_cpp")
    idx = SpanIndex([Source(SPAN_TEXT, ("pep-0572", "infobox"))])
    menus = [
        Menu.of("sieve", FIELDS, [("1", ['The "with" statement', "Résumé\\n"])], CITED,
                queries=['"pep 572"[infobox]', 'a\\b'], free_search=False, thought_chars=40),
        Menu.of("sieve", FIELDS, [("1", ["infobox"])], [], queries=None),
        Menu.of("sieve", (), (), CITED, answer_only=True, span_rules=idx.grammar(),
                thought_chars=0),
        Menu.of("sieve", (), (), CITED, prefilled=True),
    ]
    for menu in menus:
        llama_cpp.LlamaGrammar.from_json_schema(json.dumps(menu_schema(menu)), verbose=False)
