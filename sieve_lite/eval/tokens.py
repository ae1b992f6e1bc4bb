"""Token counting with the model's own tokenizer, without loading the model.

A GGUF file carries its vocabulary; llama-cpp-python's ``Llama(..., vocab_only=True)`` loads
just that (under a second for SmolLM2), so the LLM-free oracle replay counts tokens exactly
as the agent's backbone does (same tokenizer, same call: no BOS, special tokens parsed).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

from ..errors import EnvironmentProblem, ModelError


class TokenCounter(Protocol):
    name: str

    def count(self, text: str) -> int:
        """Tokens of ``text``."""
        ...


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[None]:
    """llama.cpp prints context warnings on fd 2 even with verbose=False."""
    try:
        saved = os.dup(2)
    except OSError:
        yield
        return
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


class GGUFTokenizer:
    """The vocabulary of a GGUF model (the default: the agent's default model)."""

    def __init__(self, model_path: str | os.PathLike[str] | None = None) -> None:
        if model_path is None:
            from ..agent.backbones import default_model_path

            model_path = default_model_path()
        path = Path(model_path)
        if not path.is_file():
            raise ModelError(f"model file not found: {path}")
        try:
            from llama_cpp import Llama
        except ImportError:
            raise EnvironmentProblem("llama-cpp-python is not installed: "
                                     "pip install 'sieve-lite[agent]'") from None
        try:
            with _quiet_stderr():
                self._llm = Llama(model_path=str(path), vocab_only=True, verbose=False)
        except Exception as e:  # llama.cpp reports a bad file as a bare ValueError
            raise ModelError(f"cannot read the vocabulary of {path}: "
                             f"{' '.join(str(e).split())}") from None
        self.name = path.name
        self.path = path

    def count(self, text: str) -> int:
        if not text:
            return 0
        return len(self._llm.tokenize(text.encode("utf-8"), add_bos=False, special=True))


class WordCounter:
    """Whitespace-separated words: deterministic and tokenizer-free (tests, hand checks)."""

    name = "words"

    def count(self, text: str) -> int:
        return len(text.split())
