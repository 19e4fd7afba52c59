"""Remote models: a JSON HTTP endpoint, and an OpenAI-compatible chat endpoint used as a classifier."""

from __future__ import annotations

import re
from typing import Any, Mapping, Sequence

import numpy as np

from alict_core.errors import ModelError
from alict_core.hashing import hash_json
from alict_core.models.labels import task_labels

DEFAULT_PROMPTS = {
    "sentiment": (
        "Classify the sentiment of the following sentence as exactly one of: negative, neutral, positive.\n"
        "Answer with the label only.\nSentence: {text}"
    ),
    "hate_speech": (
        "Is the following post hate speech? Answer with exactly one of: hateful, non-hateful.\n"
        "Answer with the label only.\nPost: {text}"
    ),
}
# Answer words (lower-case) that mean a task label, beyond the label itself.
SYNONYMS = {
    "sentiment": {"neg": "negative", "pos": "positive", "neutral": "neutral", "mixed": "neutral"},
    "hate_speech": {
        "not hateful": "non-hateful", "non hateful": "non-hateful", "nonhateful": "non-hateful",
        "not hate speech": "non-hateful", "not hate": "non-hateful", "no": "non-hateful",
        "hate speech": "hateful", "hate": "hateful", "yes": "hateful",
    },
}


class RequestBudget:
    """Counts requests and refuses the one past ``max_requests`` (None: unlimited)."""

    def __init__(self, model: str, max_requests: int | None) -> None:
        self.model, self.max_requests, self.used = model, max_requests, 0

    def take(self) -> None:
        if self.max_requests is not None and self.used >= self.max_requests:
            raise ModelError(
                f"model {self.model!r}: request cap of {self.max_requests} reached; raise max_requests to go on "
                "(finished batches are cached, a re-run resumes)"
            )
        self.used += 1


def _post(session, url: str, payload: dict, headers: Mapping[str, str], timeout: float, model: str) -> Any:
    try:
        response = session.post(url, json=payload, headers=dict(headers), timeout=timeout)
    except Exception as exc:
        raise ModelError(f"model {model!r}: request to {url} failed: {exc}") from exc
    if response.status_code != 200:
        raise ModelError(f"model {model!r}: {url} answered HTTP {response.status_code}: {response.text[:200]}")
    try:
        return response.json()
    except ValueError as exc:
        raise ModelError(f"model {model!r}: {url} did not answer JSON: {response.text[:200]!r}") from exc


class HttpJsonModel:
    """POST ``{"texts": [...]}`` to ``url``; the answer is ``{"probabilities": [[...], ...]}`` (columns in
    ``labels`` order, or rows as ``{label: p}``) or ``{"labels": [...]}`` (one-hot)."""

    def __init__(
        self, url: str, task: str, name: str | None = None, headers: Mapping[str, str] | None = None,
        batch_size: int = 32, timeout: float = 30.0, max_requests: int | None = 1000,
        label_map: Mapping[str, str] | None = None,
    ) -> None:
        import requests

        self.url, self.name = url, name or url
        self.labels = task_labels(task)
        self.headers = dict(headers or {})
        self.batch_size, self.timeout = batch_size, timeout
        self.label_map = dict(label_map or {})
        self.budget = RequestBudget(self.name, max_requests)
        self.session = requests.Session()
        self.fingerprint = "http:" + hash_json({"url": url, "task": task, "map": self.label_map})

    def _label(self, value: Any) -> str:
        value = self.label_map.get(str(value), str(value))
        if value not in self.labels:
            raise ModelError(f"model {self.name!r}: endpoint label {value!r} is not one of {self.labels}")
        return value

    def _row(self, row: Any) -> list[float]:
        """One answer row: a list in ``labels`` order, or ``{label: p}``."""
        if isinstance(row, dict):
            out = [0.0] * len(self.labels)
            for key, p in row.items():
                out[self.labels.index(self._label(key))] += float(p)
            return out
        return [float(p) for p in row]

    def _rows(self, answer: Any, n: int) -> np.ndarray:
        if not isinstance(answer, dict):
            raise ModelError(f"model {self.name!r}: expected a JSON object, got {type(answer).__name__}")
        if "probabilities" in answer:
            rows = answer["probabilities"]
            if not isinstance(rows, list):
                raise ModelError(f"model {self.name!r}: 'probabilities' must be a list, got {type(rows).__name__}")
            proba = np.array([self._row(row) for row in rows], dtype=np.float64).reshape(len(rows), -1)
        elif "labels" in answer:
            proba = np.array([np.eye(len(self.labels))[self.labels.index(self._label(v))] for v in answer["labels"]])
        else:
            raise ModelError(f"model {self.name!r}: answer has neither 'probabilities' nor 'labels': {str(answer)[:200]}")
        if proba.shape != (n, len(self.labels)):
            raise ModelError(f"model {self.name!r}: answer shape {proba.shape} for {n} texts, labels {self.labels}")
        return proba

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        parts = []
        for start in range(0, len(texts), self.batch_size):
            chunk = list(texts[start : start + self.batch_size])
            self.budget.take()
            parts.append(self._rows(_post(self.session, self.url, {"texts": chunk}, self.headers, self.timeout, self.name), len(chunk)))
        return np.concatenate(parts) if parts else np.zeros((0, len(self.labels)))


def parse_answer(answer: str, labels: Sequence[str], task: str) -> str | None:
    """The task label an LLM answer names, or None. Longest match first, so 'non-hateful' beats 'hateful'."""
    text = answer.strip().lower()
    text = re.sub(r"[*`\"'.!:]", " ", text)
    text = re.sub(r"^\s*(answer|label|sentiment|classification)\s*", " ", text)
    candidates = {label.lower(): label for label in labels} | {
        k: v for k, v in SYNONYMS.get(task, {}).items() if v in labels
    }
    best: tuple[int, int, str] | None = None  # (position, -length, label): earliest, then longest
    for phrase, label in candidates.items():
        match = re.search(rf"(?<![\w-]){re.escape(phrase)}(?![\w-])", text)
        if match and (best is None or (match.start(), -len(phrase)) < best[:2]):
            best = (match.start(), -len(phrase), label)
    if best is None:
        digit = re.fullmatch(r"\s*(\d)\s*", text)
        if digit and int(digit.group(1)) < len(labels):
            return labels[int(digit.group(1))]
        return None
    return best[2]


class OpenAIChatModel:
    """An OpenAI-compatible ``/chat/completions`` endpoint as a classifier (one request per text).

    The answer is parsed into a label (one-hot row); an unparseable answer gets the ``fallback`` label
    (default: the neutral / non-hateful one) and is counted in ``unparsed``. ``max_requests`` caps cost.
    """

    def __init__(
        self, base_url: str, model: str, task: str, name: str | None = None, api_key: str | None = None,
        prompt: str | None = None, max_requests: int | None = 500, timeout: float = 60.0,
        fallback: str | None = None, temperature: float = 0.0,
    ) -> None:
        import requests

        self.name = name or f"chat:{model}"
        self.task = task
        self.labels = task_labels(task)
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model_id, self.timeout, self.temperature = model, timeout, temperature
        self.prompt = prompt or DEFAULT_PROMPTS[task]
        if "{text}" not in self.prompt:
            raise ModelError(f"model {self.name!r}: the prompt template must contain {{text}}")
        self.fallback = fallback or self.labels[1 if task == "sentiment" else 0]
        self.headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.budget = RequestBudget(self.name, max_requests)
        self.session = requests.Session()
        self.unparsed: list[str] = []
        self.fingerprint = "chat:" + hash_json({"url": self.url, "model": model, "prompt": self.prompt, "t": temperature})

    def ask(self, text: str) -> str:
        self.budget.take()
        payload = {"model": self.model_id, "temperature": self.temperature,
                   "messages": [{"role": "user", "content": self.prompt.format(text=text)}]}
        answer = _post(self.session, self.url, payload, self.headers, self.timeout, self.name)
        try:
            return str(answer["choices"][0]["message"]["content"])
        except (KeyError, IndexError, TypeError) as exc:
            raise ModelError(f"model {self.name!r}: unexpected chat answer {str(answer)[:200]}") from exc

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), len(self.labels)))
        for i, text in enumerate(texts):
            content = self.ask(text)
            label = parse_answer(content, self.labels, self.task)
            if label is None:
                self.unparsed.append(content)
                label = self.fallback
            out[i, self.labels.index(label)] = 1.0
        return out
