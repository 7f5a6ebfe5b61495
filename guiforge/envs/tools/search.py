"""``search_tool``: BM25 over each tool's name, area, description and parameters.

Names and parameter names count extra (an agent's query often echoes them); a light suffix
stemmer folds plurals and verb forms ("converting", "converts" -> "convert").
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable
from functools import lru_cache
from typing import Annotated, Any

from pydantic import Field

from guiforge.envs.tools.context import ToolContext
from guiforge.envs.tools.registry import REGISTRY, Tool, ToolError, tool

K1, B = 1.2, 0.75
NAME_WEIGHT = 3  # name tokens are repeated this many times in the document
STOPWORDS = frozenset({
    "a", "an", "and", "are", "as", "at", "be", "by", "do", "does", "for", "from", "give", "how",
    "i", "in", "into", "is", "it", "its", "me", "my", "of", "on", "or", "the", "this", "to",
    "what", "when", "where", "which", "with", "you", "your",
})


# (suffix, replacement, shortest stem left)
_SUFFIXES = (("ies", "y", 2), ("sses", "ss", 2), ("xes", "x", 2), ("ches", "ch", 2),
             ("shes", "sh", 2), ("ing", "", 3), ("ed", "", 3), ("s", "", 3))


def stem(word: str) -> str:
    """A few Porter-style folds: plurals, -ing, -ed, then a final -e (rotate/rotated/rotating)."""
    for suffix, repl, shortest in _SUFFIXES:
        if (word.endswith(suffix) and len(word) - len(suffix) >= shortest
                and not (suffix == "s" and word.endswith(("ss", "us", "is")))):
            word = word[: -len(suffix)] + repl
            break
    return word[:-1] if word.endswith("e") and len(word) > 4 else word


def tokens(text: str) -> list[str]:
    words = re.findall(r"[a-z0-9]+", text.lower().replace("_", " "))
    return [stem(w) for w in words if w not in STOPWORDS]


def document(t: Tool) -> list[str]:
    params = " ".join(f"{name} {doc}" for name, doc in t.param_docs.items())
    return tokens(t.name) * NAME_WEIGHT + tokens(t.area) + tokens(t.description) + tokens(params)


class Bm25Index:
    def __init__(self, tools: Iterable[Tool]):
        self.tools = list(tools)
        self.docs = [Counter(document(t)) for t in self.tools]
        self.lengths = [sum(d.values()) for d in self.docs]
        self.avg = sum(self.lengths) / max(len(self.docs), 1)
        df = Counter(term for d in self.docs for term in d)
        n = len(self.docs)
        self.idf = {term: math.log(1 + (n - f + 0.5) / (f + 0.5)) for term, f in df.items()}

    def rank(self, query: str, k: int) -> list[tuple[Tool, float]]:
        terms = tokens(query)
        scored = []
        for t, doc, length in zip(self.tools, self.docs, self.lengths, strict=True):
            score = 0.0
            for term in terms:
                tf = doc.get(term, 0)
                if tf:
                    score += self.idf[term] * tf * (K1 + 1) / (tf + K1 * (1 - B + B * length / self.avg))
            if score > 0:
                scored.append((t, score))
        scored.sort(key=lambda pair: (-pair[1], pair[0].name))
        return scored[:k]


@lru_cache(maxsize=32)
def _index(names: frozenset[str]) -> Bm25Index:
    return Bm25Index(REGISTRY[n] for n in sorted(names))


def rank_tools(query: str, k: int, names: Iterable[str]) -> list[tuple[Tool, float]]:
    return _index(frozenset(names)).rank(query, k)


@tool("meta")
def search_tool(ctx: ToolContext, query: str, k: Annotated[int, Field(ge=1, le=20)] = 5) -> list[dict[str, Any]]:
    """Find the tools relevant to what you want to do and return their full JSON schemas
    (names, descriptions, parameters) to call them with.

    Args:
        query: what you need, in a few words, e.g. convert miles to km
        k: how many tools to return
    """
    names = [n for n in ctx.available if n != "search_tool"]
    hits = rank_tools(query, k, names)
    if not hits:
        raise ToolError(f"no tool matches {query!r}; try other words (the tool areas are "
                        f"{', '.join(sorted({REGISTRY[n].area for n in names}))})")
    return [{**t.schema(), "area": t.area, "score": round(s, 3)} for t, s in hits]
