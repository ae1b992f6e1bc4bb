"""The model chooses the answer among the reader's candidates, or abstains.

``read.py`` narrows a read to a few candidate spans, each with the engine's prior. Two ways
to let the model choose:

* **likelihood** (in-process llama.cpp): the model's log-likelihood of each candidate as the
  reply to a short reading prompt (the shown sentences and the question), its prompt cached
  so that each candidate costs a few decodes. Per-token log-likelihoods are turned into a
  distribution over the candidates and combined with the prior and with how much of the
  question the candidate's sentence holds (a product of experts).
* **grammar** (servers, or for comparison): a constrained choice, the reply decoded under a
  grammar or JSON schema whose only answers are the candidates (``syntax.Menu.choices``).

Either way the model abstains when no candidate is clearly better than the rest: the best
must hold at least ``MIN_SHARE`` of the combined belief and lead the second by
``MIN_LEAD``, have a prior of ``MIN_PRIOR`` (``MIN_PRIOR_COVERED`` in a sentence that holds
``COVERED`` of the question) and (likelihood) a per-token likelihood of
``MIN_LOGLIK`` (not when the text says it where the question puts its answer:
``Candidate.placed``), unless the model is sure of it (``SURE_SHARE``, ``SURE_LEAD``; a clear
lead, ``CLEAR_SHARE`` and ``CLEAR_LEAD``, lowers the prior's floor to ``CLEAR_MIN_PRIOR``); its
sentence must hold ``MIN_COVERAGE`` of the question. Otherwise there is no answer. No
answer beats a wrong one.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..words import words
from .queries import unqualified
from .question import Question, analyze
from .read import Candidate, written_whole
from .roles import PERSON_NOUNS

OFFERED = 14           # candidates the model chooses among (more found the answer more often
#                        than fewer: 38 against 29 of 49 gold sections held it, bench/read.py)
# When the model answers (calibrated on the natural PEP dev set, bench/read.py and the
# reads an episode makes; measured, the model's own per-token likelihood and the engine's
# prior told right from wrong answers, the share alone did not):
MIN_SHARE = 0.3        # the chosen candidate's share of the combined belief,
MIN_LEAD = 1.25        # ... a quarter ahead of the second,
MIN_PRIOR = 0.7        # the engine's prior of it (its sentence, kind and place),
MIN_LOGLIK = -2.0      # and the model's mean log-likelihood per token of it (likelihood),
MIN_COVERAGE = 0.2     # in a sentence that holds a fifth of the question (idf-weighted)
# ... a sentence that holds most of the question is itself the evidence: a candidate in it
# needs less of the prior (measured on the dev sets' gold sections and episodes, replayed:
# +2 right, +1 wrong of 49 natural prose questions at 0.7. At 0.6, replayed over the recorded
# choices of 440 PEP, RFC and QA dev episodes: +3 right, +3 wrong, all the wrong on the QA
# sets, where no answer and a wrong one score alike; on the PEP and RFC sets +2 right, none
# wrong. 0.55 added 2 right and 4 wrong more.)
COVERED = 0.6
MIN_PRIOR_COVERED = 0.4
PRIOR_WEIGHT = 1.0     # the prior's exponent in the product (the model's is 1)
# ... and the coverage's: the prior weighs a sentence against the read's best, coverage says
# how much of the question it holds at all. When the model cannot tell 'CRITICAL' from
# 'FATAL', the one in the sentence that says 'log4j' and 'death' should win. Replayed over
# the recorded choices of 440 PEP, RFC and QA dev episodes: 0.3 and 0.5 gave +4 right and no
# more wrong (on the final transcripts too), 0.7 two more wrong, 1.0 +4 right +2 wrong.
COVERAGE_WEIGHT = 0.5
# ... and a span the text says where the question puts its answer (``Candidate.placed``)
# counts this many times more: the shipped model's per-token likelihood of a rare name is low
# however right it is ('sigint_event', said as the event object asked, against
# 'PyOS_StdioReadline()'). Replayed over the recorded choices of 821 PEP, RFC and issue-20
# episodes, net: 1.5 gave +5 right and +1 wrong, 2 +6 and +3, 3 +8 and +5.
PLACED_BOOST = 1.5
COVERAGE_FLOOR = 0.02  # a candidate from a sentence with none of the question's words
# ... unless the model is sure: by likelihood, the best holds this share and this many times
# the second's, and the prior and per-token gates are waived. Measured on the natural PEP
# dev set's gold sections (bench/read.py): the ten candidates whose share was 0.8 or more
# were all right; the prior alone had turned away 'Tulip' and 'flufl.enum' (names the
# engine's sentence scores did not favour).
SURE_SHARE = 0.8
SURE_LEAD = 8.0
SURE_AMONG = 3         # ... among at least this many candidates
SURE_MIN_PRIOR = 0.4   # ... and of a kind the question asks for ('2.x' for 'On what date')
# ... a person's, when a person is asked: no other kind reaches it ('TypeAlias', an entity to
# the tagger, was sure at 0.44 for 'Who proposed ...'; replayed over the recorded choices of
# every PEP, RFC and QA dev episode that one answer is the only change)
SURE_MIN_PRIOR_PERSON = 0.6
# Between the two: when the combined belief clearly favours one candidate (this share, this
# many times the second's), its prior need only be ``CLEAR_MIN_PRIOR``. A 'what media
# outlet' question gives a name at most 0.8 of the prior, so 0.7 asked the name to stand
# next to the question's words ('The Conversation', 0.69, share 0.74). Replayed over the
# recorded choices of 440 PEP, RFC and QA dev episodes: +3 right, no more wrong (on the
# final transcripts +2 right, +1 wrong, none of it on the PEPs); a floor of 0.5 one more
# wrong, a share of 0.5 and lead of 3 two more.
CLEAR_SHARE = 0.6
CLEAR_LEAD = 4.0
CLEAR_MIN_PRIOR = 0.6
CLEAR_AMONG = 2        # ... among at least this many (one candidate holds all by construction)

READING_SYSTEM = ("You answer questions from a short text. Reply with the shortest exact "
                  "span of the text that answers the question.")


@dataclass
class Choice:
    """The outcome of a choice: the candidate taken (None: abstained) and why."""

    answer: Candidate | None
    method: str                            # likelihood | grammar
    scores: list[dict[str, Any]] = field(default_factory=list)
    why: str = ""                          # why it abstained ('' when it answered)
    completion_tokens: int = 0             # what the model wrote (grammar)
    prompt_tokens: int = 0                 # the reading prompt the model processed

    def to_json(self) -> dict[str, Any]:
        return {"answer": self.answer.text if self.answer else None, "method": self.method,
                "scores": self.scores, "why": self.why}


# Two worked examples before the question, about nothing in any collection: a span that is
# not the first thing named, and a code value. With them the shipped model's likelihood put
# the right candidate first on 46 of 69 dev questions' gold sections, against 39 without
# (bench/read.py); one example did less (43), three no better (41).
READING_EXAMPLES = (
    ("Which bird was counted most often in the survey?",
     "The 2019 survey counted 4,200 birds in the park.\nThe house sparrow was the bird counted "
     "most often, ahead of the starling.", "house sparrow"),
    ("What setting turns the cache off?",
     "Caching is on by default.\nSet ``CACHE_SIZE=0`` to turn the cache off; the default size "
     "is 64 entries.", "CACHE_SIZE=0"),
)


def _reading_turn(question: str, text: str) -> str:
    # the question before the text and again after it: a small model reads the text for it
    return f"Question: {question}\n\nText:\n{text}\n\nQuestion: {question}"


def reading_messages(q: Question | str, text: str) -> list[dict[str, str]]:
    """The short prompt candidates are scored against: the worked examples, then the shown
    text and the question (the reply is prefilled with ``Answer:``)."""
    q = analyze(q)
    out = [{"role": "system", "content": READING_SYSTEM}]
    for question, shown, answer in READING_EXAMPLES:
        out += [{"role": "user", "content": _reading_turn(question, shown)},
                {"role": "assistant", "content": f"Answer: {answer}"}]
    return [*out, {"role": "user", "content": _reading_turn(q.text, text)}]


def offered(cands: Sequence[Candidate], n: int | None = None) -> list[Candidate]:
    """The candidates put to the model: the best ``n`` (``OFFERED``) by prior, one per
    distinct text."""
    n = OFFERED if n is None else n
    out: list[Candidate] = []
    seen: set[str] = set()
    for c in cands:
        key = c.text.casefold()
        if key not in seen:
            out.append(c)
            seen.add(key)
        if len(out) >= n:
            break
    return out


def combine(cands: Sequence[Candidate], loglik: Sequence[float] | None) -> list[float]:
    """Each candidate's share of the combined belief: prior^w times coverage^v times the
    model's per-token likelihood, normalised (the model's part is left out when ``loglik``
    is None)."""
    logs = []
    for i, c in enumerate(cands):
        x = PRIOR_WEIGHT * math.log(max(c.prior, 1e-6)) \
            + COVERAGE_WEIGHT * math.log(max(c.coverage, COVERAGE_FLOOR))
        if c.placed:
            x += math.log(PLACED_BOOST)
        if loglik is not None:
            x += loglik[i]
        logs.append(x)
    top = max(logs)
    exps = [math.exp(x - top) for x in logs]
    total = sum(exps)
    return [e / total for e in exps]


def decide(cands: Sequence[Candidate], shares: Sequence[float], method: str,
           extra: Sequence[dict[str, Any]] = (), relax_covered: bool = True,
           sure_floor: float = SURE_MIN_PRIOR) -> Choice:
    """Take the candidate with the largest share when it is clearly ahead; else abstain.
    ``relax_covered`` False holds a candidate in a sentence that holds most of the question
    to the full prior floor too (``MIN_PRIOR``)."""
    order = sorted(range(len(cands)), key=lambda i: -shares[i])
    scores = [{"text": cands[i].text, "kind": cands[i].kind, "prior": cands[i].prior,
               "coverage": cands[i].coverage, "share": round(shares[i], 4),
               **({"placed": True} if cands[i].placed else {}),
               **(extra[i] if extra else {})} for i in order]
    if not order:
        return Choice(None, method, scores, "no candidate")
    best = order[0]
    second = shares[order[1]] if len(order) > 1 else 0.0
    loglik = (extra[best] if extra else {}).get("per_token")
    # one candidate, or two, hold all the belief almost by construction: no sign the model
    # is sure; nor is a candidate of a kind the question hardly asks for (a low prior)
    sure = (loglik is not None and len(order) >= SURE_AMONG and shares[best] >= SURE_SHARE
            and shares[best] >= SURE_LEAD * second and cands[best].prior >= sure_floor)
    if shares[best] < MIN_SHARE:
        return Choice(None, method, scores, f"no candidate is clearly the answer (the best, "
                      f"{cands[best].text!r}, holds {shares[best]:.0%})")
    if second and shares[best] <= MIN_LEAD * second:
        return Choice(None, method, scores, f"{cands[best].text!r} and "
                      f"{cands[order[1]].text!r} are about as likely")
    floor = MIN_PRIOR_COVERED if relax_covered and cands[best].coverage >= COVERED \
        else MIN_PRIOR
    if shares[best] >= CLEAR_SHARE and shares[best] >= CLEAR_LEAD * second \
            and len(order) >= CLEAR_AMONG:
        floor = min(floor, CLEAR_MIN_PRIOR)
    if cands[best].prior < floor and not sure:
        return Choice(None, method, scores, f"{cands[best].text!r} fits the question too "
                      f"loosely (prior {cands[best].prior:.2f})")
    if cands[best].coverage < MIN_COVERAGE:
        return Choice(None, method, scores, f"{cands[best].text!r} stands in a sentence about "
                      "something else")
    # ... a span the text itself puts where the question puts its answer ('the RECORD file'
    # for 'Which file ...', ``Candidate.placed``) needs no more of the model than to lead
    # (the model's per-token likelihood of a rare name is low however right it is).
    # Replayed over the recorded choices of 485 PEP and RFC dev episodes: +6 right, none wrong
    if loglik is not None and loglik < MIN_LOGLIK and not sure and not cands[best].placed:
        return Choice(None, method, scores, f"the model finds {cands[best].text!r} unlikely "
                      f"as the answer ({loglik:.2f} a token)")
    return Choice(cands[best], method, scores)


def _sure_floor(q: Question | str) -> float:
    """The prior a candidate needs for the model to be sure of it: a person's when a person
    is asked ('Who ...', 'Which core developer ...')."""
    t = analyze(q).target
    return SURE_MIN_PRIOR_PERSON if t.kind == "who" or t.head in PERSON_NOUNS \
        else SURE_MIN_PRIOR


def by_likelihood(backbone: Any, q: Question | str, text: str,
                  cands: Sequence[Candidate], relax_covered: bool = True) -> Choice:
    """Score each offered candidate with the model (``backbone.score``) after the reading
    prompt, per token, combine with the priors, and decide."""
    pool = offered(cands)
    if not pool:
        return Choice(None, "likelihood", [], "no candidate")
    msgs = reading_messages(q, text)
    conts = [" " + c.text for c in pool]
    ll = backbone.score(msgs, conts, prefill="Answer:")
    per_token = [x / max(1, backbone.count_tokens(c) + 1) for x, c in zip(ll, conts,
                                                                           strict=True)]
    shares = combine(pool, per_token)
    extra = [{"loglik": round(x, 3), "per_token": round(p, 3)}
             for x, p in zip(ll, per_token, strict=True)]
    got = decide(pool, shares, "likelihood", extra, relax_covered, _sure_floor(q))
    render = getattr(backbone, "render", None)
    shown = render(msgs, "Answer:") if render is not None else \
        "\n".join(m["content"] for m in msgs)
    got.prompt_tokens = backbone.count_tokens(shown)
    return got


GRAMMAR_BOOST = 3.0    # the model's pick under the grammar counts this many times its prior


def by_grammar(backbone: Any, q: Question | str, text: str, cands: Sequence[Candidate],
               mode: str, relax_covered: bool = True) -> Choice:
    """The model writes one of the offered candidates under a constraint that allows only
    them (``Menu.choices``: a grammar in process and on llama.cpp servers, a JSON schema
    elsewhere); its pick weighs ``GRAMMAR_BOOST`` times its prior, then ``decide``."""
    from .steps import Answer
    from .syntax import ActionError, Menu, parse_action

    pool = offered(cands)
    if not pool:
        return Choice(None, "grammar", [], "no candidate")
    msgs = reading_messages(q, text)
    menu = Menu.of(mode, (), (), (), answer_only=True, choices=[c.text for c in pool],
                   thought_chars=0, uncited_answer=True)
    comp = backbone.complete(msgs + [{"role": "user", "content": "Choose: " + " | ".join(
        c.text for c in pool)}], max_tokens=48, grammar=menu)
    try:
        action, _ = parse_action(comp.text, mode)
    except ActionError:
        action = None
    picked = action.text.strip().casefold() if isinstance(action, Answer) else ""
    shares = combine(pool, None)
    hit = [i for i, c in enumerate(pool) if c.text.casefold() == picked]
    if hit:
        shares[hit[0]] *= GRAMMAR_BOOST
        total = sum(shares)
        shares = [x / total for x in shares]
    extra = [{"picked": i in hit} for i in range(len(pool))]
    choice = decide(pool, shares, "grammar", extra, relax_covered, _sure_floor(q))
    choice.completion_tokens = comp.completion_tokens
    choice.prompt_tokens = comp.prompt_tokens
    return choice


# 'what other device ...', 'besides the Force India driver': the question describes one
# thing of the kind it asks for and asks for another
_ANOTHER = re.compile(r"\b(?:other|another|besides|aside\s+from|apart\s+from|except)\b", re.I)


def _defines_itself(q: Question, readings: Sequence[Any], title: str) -> Candidate | None:
    """On a document the question reaches through another (``hop_title``: its title, its
    '(...)' qualifier left off), the candidate that is the document's own subject defined as
    a thing of the kind asked ('Marktown is a planned worker community' for 'which
    community'): the read named it, the question's other words found it, and it says it is
    what the question asks for. None when the question asks for another thing of that kind
    than one it describes."""
    if q.target.kind not in ("what", "where") or not q.target.head or _ANOTHER.search(q.text):
        return None
    name = unqualified(title)
    want = words(name)
    if not want:
        return None
    for r in readings:
        for c in r.candidates:
            if c.kind != "defined":
                continue
            got = words(c.text)
            if got[:1] == ["the"] and want[:1] != ["the"]:
                got = got[1:]
            if got == want:
                return c
            # a fuller form of the name ('Waylon Albright "Shooter" Jennings' is defined in
            # 'Shooter Jennings'): answered by the name the collection knows it by
            if len(got) > len(want) and all(w in got for w in want):
                return replace(c, text=name)
    return None


def choose(backbone: Any, q: Question | str, readings: Sequence[Any], method: str,
           mode: str, titles: tuple[str, ...] = (), hop: bool = False,
           hop_title: str = "") -> Choice:
    """The model's choice among the candidates of ``readings`` (``read.Reading``; their
    candidates pooled, best prior first): by likelihood when ``method`` is 'likelihood' and
    the backbone can score, else under a constraint of the candidates. A chosen candidate of
    the wrong type, or made only of the question's words, is no answer.

    ``hop``: the readings are of a document the question reaches through another one. The
    question's words there are mostly about the other, so a sentence holding many of them
    vouches less, and the full prior floor holds (bench/ask.py, HotpotQA: the relaxed floor
    let 4 wrong answers through and no right one). ``hop_title``: that document's title; when
    its text defines it as a thing of the kind asked, it is the answer (``_defines_itself``)."""
    from .answers import says_more, type_mismatch

    q = analyze(q)
    cands = sorted((c for r in readings for c in r.candidates), key=lambda c: -c.prior)
    blanks = list(dict.fromkeys(c.text for c in cands if c.kind == "blank"))
    if len(blanks) == 1:
        # the quoted passage was found with its blank: the text fills it, not a guess
        c = next(c for c in cands if c.kind == "blank")
        return Choice(c, "text", [{"text": c.text, "kind": c.kind, "prior": c.prior,
                                   "coverage": c.coverage, "share": 1.0}])
    itself = _defines_itself(q, readings, hop_title) if hop and hop_title else None
    if itself is not None:
        return Choice(itself, "text", [{"text": itself.text, "kind": itself.kind,
                                        "prior": itself.prior, "coverage": itself.coverage,
                                        "share": 1.0}])
    text = "\n".join(r.text() for r in readings)
    if method == "likelihood" and hasattr(backbone, "score"):
        got = by_likelihood(backbone, q, text, cands, relax_covered=not hop)
    else:
        got = by_grammar(backbone, q, text, cands, mode, relax_covered=not hop)
    if got.answer is not None:
        why = type_mismatch(got.answer.text, q.text, titles)
        # ... but a code name the text says as the thing asked ('the EXTERNAL-HOSTING.json
        # file' for 'what JSON file ... external wheel hosting') is news when the question
        # only has the words it is joined from
        c = got.answer
        joined = c.placed and c.kind == "code" and not written_whole(q, c.text)
        if not why and not joined and not says_more(c.text, q.text):
            why = f"the answer {got.answer.text!r} only repeats words of the question"
        if why:
            got.answer, got.why = None, why
    return got


__all__ = ["CLEAR_LEAD", "CLEAR_MIN_PRIOR", "CLEAR_SHARE", "COVERAGE_WEIGHT", "COVERED",
           "MIN_LEAD", "MIN_LOGLIK", "MIN_PRIOR", "MIN_PRIOR_COVERED", "MIN_SHARE", "OFFERED",
           "PLACED_BOOST",
           "SURE_AMONG", "SURE_LEAD", "SURE_MIN_PRIOR", "SURE_MIN_PRIOR_PERSON", "SURE_SHARE",
           "Choice", "by_grammar", "by_likelihood", "choose", "combine", "decide", "offered",
           "reading_messages"]
