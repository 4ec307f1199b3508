"""What a chat line means, by its nearest example lines: a small classifier learnt at load time.

The examples are ``intents.yaml`` (a few dozen lines per meaning). Each line becomes a vector of
its character n-grams (2 to 4 letters, inside word boundaries) and word unigrams and bigrams,
weighted by TF-IDF and normalised; a new line takes the meaning of its nearest examples by cosine
similarity (the best example of each meaning, the two best averaged). Character n-grams carry
typos, plurals and word order changes ("biggest pieces first" is close to "big pieces first");
the score says how sure the reading is, and below :data:`MIN_SCORE` the line is not read by it.

Pure numpy: learning takes a few milliseconds, a line well under one. The model is built once per
process (:func:`load_intents`) and never changes.
"""

from __future__ import annotations

import functools
import itertools
import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import yaml

from agent.core.config import UniqueKeys

INTENTS_PATH = Path(__file__).resolve().parent / "words" / "intents.yaml"
MIN_SCORE = 0.34
"""Below this cosine similarity to its nearest examples a line is not read by meaning."""
MIN_MARGIN = 0.03
"""The best meaning must beat the second by this much."""
COMMAND = "command"
"""The meaning of lines the keyword reading takes apart (moves, questions, figures)."""
MAX_CHARS = 300
_TOKEN = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class Reading:
    intent: str
    score: float
    """Cosine similarity of the line to its meaning's nearest examples (0..1)."""
    margin: float
    """How far the best meaning is ahead of the second."""

    @property
    def sure(self) -> bool:
        return self.score >= MIN_SCORE and self.margin >= MIN_MARGIN


def _features(text: str) -> list[str]:
    words = _TOKEN.findall(text.lower()[:MAX_CHARS])
    feats = [f"w:{w}" for w in words] + [f"b:{a}_{b}" for a, b in itertools.pairwise(words)]
    for w in words:
        padded = f" {w} "
        for n in (2, 3, 4):
            feats += [f"c:{padded[i:i + n]}" for i in range(len(padded) - n + 1)]
    return feats


class IntentModel:
    """Nearest-example meanings over TF-IDF vectors of character and word n-grams."""

    def __init__(self, examples: dict[str, list[str]]) -> None:
        labels: list[str] = []
        docs: list[list[str]] = []
        for intent, lines in examples.items():
            for line in lines:
                labels.append(intent)
                docs.append(_features(line))
        vocab: dict[str, int] = {}
        df: dict[str, int] = {}
        for doc in docs:
            for f in set(doc):
                df[f] = df.get(f, 0) + 1
                vocab.setdefault(f, len(vocab))
        n = len(docs)
        self._vocab = vocab
        self._idf = np.array([math.log((1 + n) / (1 + df[f])) + 1.0 for f in vocab], dtype=np.float32)
        self._matrix = np.stack([self._vector(doc) for doc in docs]) if docs else np.zeros((0, len(vocab)))
        self._labels = labels
        self.intents = tuple(examples)
        self._rows = {i: np.array([k for k, lab in enumerate(labels) if lab == i]) for i in self.intents}

    def _vector(self, feats: list[str]) -> np.ndarray:
        v = np.zeros(len(self._vocab), dtype=np.float32)
        for f in feats:
            k = self._vocab.get(f)
            if k is not None:
                v[k] += 1.0
        v = np.log1p(v) * self._idf
        norm = float(np.linalg.norm(v))
        return v / norm if norm else v

    def read(self, text: str) -> Reading:
        """The meaning of ``text`` (lower case English, or a gloss into it)."""
        v = self._vector(_features(text))
        cols = np.flatnonzero(v)
        if not cols.size or not self._labels:
            return Reading(COMMAND, 0.0, 0.0)
        sims = self._matrix[:, cols] @ v[cols]  # the line's few features only
        scores: dict[str, float] = {}
        for intent, rows in self._rows.items():
            top = np.sort(sims[rows])[::-1][:2]
            scores[intent] = float(0.7 * top[0] + 0.3 * top[-1])
        ranked = sorted(scores.items(), key=lambda kv: -kv[1])
        best, second = ranked[0], ranked[1] if len(ranked) > 1 else (COMMAND, 0.0)
        return Reading(best[0], best[1], best[1] - second[1])


@functools.lru_cache(maxsize=2)
def _load(path: Path) -> IntentModel:
    data = yaml.load(path.read_text(encoding="utf-8"), Loader=UniqueKeys)
    if not isinstance(data, dict) or not all(isinstance(v, list) for v in data.values()):
        raise ValueError(f"{path.name}: a mapping of intent -> list of example lines")
    return IntentModel({str(k): [str(x) for x in v] for k, v in data.items()})


def load_intents(path: str | Path | None = None) -> IntentModel:
    return _load(Path(path or INTENTS_PATH).resolve())
