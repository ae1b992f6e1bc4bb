"""The tool manual (the system prompt), generated from the collection it describes.

It lists the fields the collection really has (a flat collection never hears of ``section``
or ``infobox``), gives examples built from the collection's own titles, headings, authors,
infobox entries and dates -- each one parsed and run before it is shown, and dropped if it
does not parse or admits nothing -- shows a real card, and states the fetch rules and budgets.
Nothing in it depends on the clock or on chance: the same collection, mode and budgets give the
same manual, byte for byte (no current date: the paper found a baked-in date skewing results).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any

from ..errors import QueryError
from ..store import reads
from ..words import words

FIELD_MEANING = {
    "title": "the title: x[title] means the document is ABOUT x",
    "section": "the section headings",
    "body": "the section texts: x[body] means x is MENTIONED",
    "infobox": "the infobox entries, each read as 'key: value'",
    "author": "the author names",
    "tiab": "title or body: a broad first pass",
    "all": "every text field (the scope of a word with no [field])",
    "date": "the document's date, ranges only: date[2018..2020], date[>=2019-05], date[..2002]",
}


@dataclass(frozen=True)
class Example:
    query: str
    says: str


def _rank(key: str) -> str:
    """A stable pseudo-random order (sha1), so examples spread over the collection."""
    return hashlib.sha1(key.encode("utf-8")).hexdigest()


def _good_words(text: str, min_len: int = 4) -> list[str]:
    """Distinctive-looking words of a text: letters only, long enough, no stopword."""
    stop = {"the", "and", "for", "with", "from", "that", "this", "into", "about", "what",
            "when", "which", "than", "then", "their", "other", "over", "under", "more", "some",
            "python", "support", "proposal"}
    return [w for w in words(text) if w.isalpha() and len(w) >= min_len and w not in stop]


def _candidate_examples(coll: Any) -> list[Example]:
    """Examples in the order we would like to show them (before verification)."""
    conn = coll.conn
    fields = set(coll.fields)
    docs = sorted(reads.document_list(conn), key=lambda r: _rank(r[1]))
    out: list[Example] = []
    # A title phrase: two adjacent title words.
    titled = [(r, _good_words(r[2], 3)) for r in docs]
    for row, ws in titled:
        tw = words(row[2])
        pairs = [(a, b) for a, b in zip(tw, tw[1:], strict=False) if a in ws and b in ws]
        if pairs:
            a, b = pairs[0]
            out.append(Example(f'"{a} {b}"[title]',
                               f'documents whose title has the phrase "{a} {b}"'))
            break
    # A word in the title OR spelling variants, and a prefix.
    for _row, ws in titled[1:]:
        if len(ws) >= 2 and len(ws[0]) >= 6:
            w = ws[0]
            out.append(Example(f"{w[:5]}*[title] AND {ws[1]}",
                               f"a title word starting with '{w[:5]}', and '{ws[1]}' anywhere"))
            break
    if "section" in fields:
        for heading in reads.common_headings(conn, 5):
            hw = words(heading)
            if 1 <= len(hw) <= 3 and all(w.isalpha() for w in hw):
                h = hw[0] if len(hw) == 1 else '"' + " ".join(hw) + '"'
                for _r, ws in titled[2:]:
                    if ws:
                        out.append(Example(f"{ws[0]}[title] AND {h}[section]",
                                           f"'{ws[0]}' in the title and a section headed "
                                           f"{h}"))
                        break
                break
    if "author" in fields:
        name = reads.common_author(conn)
        if name:
            aw = [w for w in words(name) if w.isalpha()]
            if aw:
                out.append(Example(f"{aw[-1]}[author]", f"documents by an author named "
                                                        f"{aw[-1].capitalize()}"))
    if "infobox" in fields:
        entry = reads.common_infobox_entry(conn)
        if entry:
            kv = words(f"{entry[0]} {entry[1]}")
            if 2 <= len(kv) <= 4:
                out.append(Example(f'"{" ".join(kv)}"[infobox]',
                                   f"the infobox entry '{entry[0]}: {entry[1]}'"))
    if "date" in fields:
        years = [int(r[3][:4]) for r in docs if r[3]]
        if years:
            years.sort()
            mid = years[len(years) // 2]
            for r, ws in titled:
                if r[3] and ws and abs(int(r[3][:4]) - mid) <= 1:
                    out.append(Example(f"{ws[0]}[title,body] AND date[{mid - 1}..{mid + 1}]",
                                       f"'{ws[0]}' in the title or body, dated {mid - 1} to "
                                       f"{mid + 1}"))
                    break
    # Simple fallbacks that fit any collection (short titles, flat text).
    for _row, ws in titled:
        if ws:
            out.append(Example(f"{ws[0]}[title]", f"documents about {ws[0]}"))
            break
    for row in docs[:50]:
        text = reads.first_section_text(conn, row[0])
        bw = _good_words(text, 6) if text else []
        tw = set(words(row[2]))
        bw = [w for w in bw if w not in tw]
        if bw:
            out.append(Example(f"{bw[0]}[body]", f"documents that mention {bw[0]}"))
            break
    pair = [ws[0] for _row, ws in titled if ws][:2]
    if len(pair) == 2 and pair[0] != pair[1]:
        out.append(Example(f"({pair[0]} OR {pair[1]})[title]",
                           f"documents about {pair[0]} or about {pair[1]}"))
    # OR of two words and NOT of a third, from one document's text.
    for _row, ws in titled[3:]:
        if len(ws) >= 3 and len(set(ws[:3])) == 3:
            out.append(Example(f"({ws[0]} OR {ws[1]})[title] -{ws[2]}",
                               f"'{ws[0]}' or '{ws[1]}' in the title, and no '{ws[2]}' "
                               f"anywhere"))
            break
    return out


def examples(coll: Any, limit: int = 7) -> list[Example]:
    """Verified examples: each parses on this collection and admits at least one document."""
    from .. import bql

    good: list[Example] = []
    for ex in _candidate_examples(coll):
        try:
            bql.parse(ex.query, coll.fields)
            res = coll.search(ex.query, k=1, ranker="bm25", strict=True)
        except QueryError:
            continue
        if res.total >= 1:
            good.append(ex)
        if len(good) >= limit:
            break
    return good


def _sample_card(coll: Any, query: str) -> str:
    """The first card of a real search, as the agent will see cards."""
    try:
        res = coll.search(query, k=1, ranker="bm25")
    except QueryError:
        return ""
    if not res.results:
        return ""
    card = res.results[0].card
    return card.render_compact(6)


def _plain_examples(coll: Any) -> list[str]:
    """Word searches for the modes without BQL, from real titles."""
    docs = sorted(reads.document_list(coll.conn), key=lambda r: _rank(r[1]))
    out = []
    for _rowid, _id, title, _date in docs:
        ws = _good_words(title, 3)
        if len(ws) >= 2:
            out.append(" ".join(ws[:3]))
        if len(out) >= 2:
            break
    return out


def build_manual(coll: Any, mode: str = "sieve", k: int = 5, read_tokens: int = 12_000,
                 max_steps: int = 100) -> str:
    """The system prompt for one collection, mode and budget."""
    n = int(getattr(coll, "documents", 0))
    shown = examples(coll) if mode == "sieve" else []
    fetch_line = ("fetch: RANK | SECTION" if mode != "search-visit" else "visit: RANK")
    lines = [
        f"You answer a question by researching a collection of {n:,} documents. You act in "
        "steps; each reply is exactly one action, written like this:",
        "",
        "thought: one short line of reasoning (optional)",
        "search: QUERY",
        "",
        f"or '{fetch_line}', or, when you know the answer:",
        "",
        "answer: THE SHORTEST ANSWER",
        "cite: ID | " + ("SECTION" if mode != "search-visit" else "(document)"),
        "",
        "After a search or a " + ("fetch" if mode != "search-visit" else "visit")
        + " you get an observation. Do not write observations yourself.",
        "",
    ]
    if mode == "sieve":
        fields = list(coll.fields)
        lines += ["SEARCH uses BQL, a Boolean query language. This collection has these "
                  "fields:"]
        lines += [f"- {f}: {FIELD_MEANING[f]}" for f in fields]
        lines += [
            'Syntax: word, "exact phrase", prefix* (word*), x[field], x[field1,field2], '
            "A AND B (or just A B), A OR B, NOT A or -A, (groups). AND, OR, NOT are written "
            "in capitals; lowercase and/or/not are plain words. No stemming: use word* for "
            "variants.",
            "Examples that work on this collection:",
        ]
        lines += [f"search: {ex.query}    <- {ex.says}" for ex in shown]
        lines += [
            "Advice: search for names and distinctive words (a proper name, a number, a "
            "term), not the question's wording; relation words (founder, spouse) are what you "
            "read for, not what you search for. Use 1-2 exact words; long ANDs of common "
            "words find nothing. One hop per search: the text you fetch names the next "
            "entity; search for it next.",
            "If nothing matches, the search shows the best matches for your words instead "
            "and how many documents each part matched: loosen the part with 0 (fewer words, "
            "a prefix, a wider field). After two failed loosenings, search for another "
            "entity of the question.",
            "",
        ]
    else:
        lines += ["SEARCH takes plain words (no operators, no fields); documents sharing "
                  "words with the query come back ranked by relevance. Examples:"]
        lines += [f"search: {q}" for q in _plain_examples(coll)]
        lines += ["Search for names and distinctive words, not the question's wording. One "
                  "hop per search: what you read names the next entity to search for.", ""]
    if mode != "search-visit":
        lines += [f"RESULTS: each search shows at most {k} cards: rank, id and title; date and "
                  "authors when known; the fields the query matched; the section names; "
                  "infobox keys; a snippet of up to 25 words, with the section it comes from. "
                  "For example:"]
        sample = _sample_card(coll, shown[0].query) if shown else ""
        if not sample:
            plain = _plain_examples(coll)
            sample = _sample_card(coll, " OR ".join(words(plain[0]))) if plain else ""
        if sample:
            lines += [sample]
        lines += [
            "",
            "FETCH reads one section: 'fetch: RANK | SECTION' (RANK from the last search) or "
            "'fetch: ID | SECTION'. Copy the section name exactly from the card: (intro) is "
            "the text before the first heading" + (", infobox the infobox" if
                                                   "infobox" in coll.fields else "")
            + ". Never guess a section name. Fetch the one section the fact lives in; if it "
            "is not there, fetch another section.",
            f"A fetched text is cut at {read_tokens:,} tokens.",
        ]
    else:
        lines += [f"RESULTS: each search lists at most {k} documents: rank, id, title and a "
                  "short snippet.",
                  "",
                  "VISIT reads a whole document: 'visit: RANK' (RANK from the last search) or "
                  f"'visit: ID'. A visited text is cut at {read_tokens:,} tokens."]
    cite = "cite: ID | SECTION" if mode != "search-visit" else "cite: ID | (document)"
    lines += [
        "",
        "ANSWER with the shortest span copied from what you read, of the type the question "
        f"asks for. Then one '{cite}' line for each thing you read that supports it; cite "
        "only what you read in this conversation.",
        f"You have at most {max_steps} steps. Repeating the same call gives nothing new.",
    ]
    return "\n".join(lines)


def _short_example(coll: Any, mode: str) -> list[str]:
    """A worked example for the short manual, from a real document of the collection: its
    card line, a read of its infobox (or its first section) and an answer copied from it."""
    docs = sorted(reads.document_list(coll.conn), key=lambda r: _rank(r[1]))
    for rowid, doc_id, title, _date in docs[:50]:
        rows = [(k, v) for k, v in reads.infobox(coll.conn, rowid)
                if 0 < len(v) <= 40 and len(words(v)) <= 4]
        if len(rows) < 3:
            continue
        key, value = rows[min(2, len(rows) - 1)]
        shown = "\n".join(f"{k}: {v}" for k, v in rows[:5])
        read = "visit: 1" if mode == "search-visit" else "fetch: 1 | infobox"
        section = "(document)" if mode == "search-visit" else "infobox"
        return ["Example:",
                f"Question: What is the {key} of {title}?",
                f"[1] {doc_id} | {title}",
                read,
                f"{doc_id} | {section}:",
                shown,
                f"answer: {value}",
                f"cite: {doc_id} | {section}"]
    return []


def build_short_manual(coll: Any, mode: str = "sieve", max_steps: int = 6) -> str:
    """A short system prompt for small models (a few hundred million parameters): what each
    action looks like, one worked example from the collection, no query language. The
    searches such a model may run are offered to it (by the grammar, and listed under each
    result)."""
    n = int(getattr(coll, "documents", 0))
    read = "visit: RANK" if mode == "search-visit" else "fetch: RANK | SECTION"
    what = "a document" if mode == "search-visit" else "one section of a result"
    cite = "cite: ID | (document)" if mode == "search-visit" else "cite: ID | SECTION"
    lines = [
        f"You answer a question from a collection of {n:,} documents. The results of a "
        "search for the question's words are shown. Write one action per reply:",
        f"{read}    <- read {what}",
        "search: QUERY    <- new results (take a query from the list shown)",
        "answer: WORDS COPIED FROM THE TEXT",
        cite,
        f"Read the part most likely to hold the answer, then answer with the shortest "
        f"phrase copied from what you read. At most {max_steps} actions.",
    ]
    return "\n".join(lines + _short_example(coll, mode))


def check_manual(manual: str, coll: Any) -> list[str]:
    """Problems of a manual against its collection: a field it advertises that the
    collection lacks (tests use this; the generator should never produce one)."""
    problems = []
    advertised = set(re.findall(r"^- (\w+): ", manual, flags=re.M))
    for f in advertised - set(coll.fields):
        problems.append(f"advertises field {f!r} that the collection lacks")
    for f in set(coll.fields) - advertised:
        if "SEARCH uses BQL" in manual:
            problems.append(f"does not advertise field {f!r}")
    return problems


__all__ = ["Example", "build_manual", "build_short_manual", "check_manual", "examples"]
