"""Lexicon sentiment models: VADER and TextBlob (no data downloads needed)."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from alict_core.common.fingerprint import combine, package_versions
from alict_core.data.records import SENTIMENT_LABELS
from alict_core.models.labels import score_to_three


class VaderModel:
    """VADER compound score → 3 classes (|compound| < 0.05 neutral, VADER's own convention)."""

    labels = SENTIMENT_LABELS

    def __init__(self, name: str = "vader", neutral_band: float = 0.05) -> None:
        from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

        self.name = name
        self.neutral_band = neutral_band
        self.analyzer = SentimentIntensityAnalyzer()
        self.fingerprint = combine("vader", {"band": neutral_band, "versions": package_versions("vaderSentiment")})

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        scores = np.array([self.analyzer.polarity_scores(t)["compound"] for t in texts])
        return score_to_three(scores, self.neutral_band)


class TextBlobModel:
    """TextBlob pattern polarity → 3 classes (|polarity| < band neutral)."""

    labels = SENTIMENT_LABELS

    def __init__(self, name: str = "textblob", neutral_band: float = 0.05) -> None:
        from textblob import TextBlob

        self.name = name
        self.neutral_band = neutral_band
        self._blob = TextBlob
        self.fingerprint = combine("textblob", {"band": neutral_band, "versions": package_versions("textblob")})

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        scores = np.array([self._blob(t).sentiment.polarity for t in texts])
        return score_to_three(scores, self.neutral_band)
