"""Remote models: a JSON HTTP endpoint, and an OpenAI-compatible chat endpoint used as a classifier.

Both only reach hosts the trust model allows (``alict_core.common.trust.check_endpoint``, checked when the model is
created and before every request, and each connection made to an address checked in that step:
``alict_core.models.pinned_http``; redirects are not followed), retry 429/5xx with back-off, and cap their
requests per run (``run_scope``), not per cached object.
"""

from __future__ import annotations

import bisect
import logging
import re
import time
from collections import deque
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from alict_core.common.errors import ModelError
from alict_core.common.fingerprint import combine
from alict_core.common.trust import BROWSER_SECRETS_ADVICE, check_endpoint, endpoint_name
from alict_core.models.arguments import check_header_values
from alict_core.models.labels import check_task_labels, task_labels
from alict_core.models.run_scope import RequestBudget, current_scope
from alict_core.tasks import HATE_SPEECH, SENTIMENT, TASKS

log = logging.getLogger(__name__)
MAX_UNPARSED_KEPT = 1000
UNPARSED_CHARS = 1000  # characters kept of one unparsed chat answer (for the report after a run)

DEFAULT_PROMPTS = {
    SENTIMENT.name: (
        "Classify the sentiment of the following sentence as exactly one of: negative, neutral, positive.\n"
        "Answer with the label only.\nSentence: {text}"
    ),
    HATE_SPEECH.name: (
        "Is the following post hate speech? Answer with exactly one of: hateful, non-hateful.\n"
        "Answer with the label only.\nPost: {text}"
    ),
}
# Answer words (lower-case) that mean a task label, beyond the label itself.
SYNONYMS = {
    SENTIMENT.name: {"neg": "negative", "pos": "positive", "neutral": "neutral", "mixed": "neutral"},
    HATE_SPEECH.name: {
        "not hateful": "non-hateful", "non hateful": "non-hateful", "nonhateful": "non-hateful",
        "not hate speech": "non-hateful", "not hate": "non-hateful", "no hate speech": "non-hateful",
        "no hate": "non-hateful", "no": "non-hateful",
        "hate speech": "hateful", "hate": "hateful", "yes": "hateful",
    },
}


RETRY_STATUS = frozenset({429, 500, 502, 503, 504})
MAX_RETRY_WAIT = 30.0  # seconds: a longer Retry-After is capped
MAX_ANSWER_BYTES = 16_000_000  # an endpoint's answer read at most (a batch of 4,096 rows of probabilities is ~0.5 MB)


def _retry_wait(response: Any, attempt: int, backoff: float) -> float:
    """Seconds to wait before the next attempt: the server's Retry-After when given, else exponential."""
    header = getattr(response, "headers", {}).get("Retry-After") if response is not None else None
    try:
        wait = float(header) if header is not None else backoff * 2**attempt
    except ValueError:
        wait = backoff * 2**attempt
    return max(0.0, min(wait, MAX_RETRY_WAIT))


def _number(value: Any) -> float:
    """A JSON number as a float; anything else (``true``, ``"0.5"``, null) is a TypeError."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{value!r:.40} is not a number")
    return float(value)


def refused_answer(model: str, url: str, status: int, reason: str, body: str,
                   secrets: Iterable[str] = ()) -> ModelError:
    """The error for an answer that cannot be used: status and a fixed reason only; the body goes to the log, with
    the request's ``secrets`` (header values, key, URL query and password) cut out of it: a service that echoes the
    request put the user's key into the log (pass 40).

    An endpoint may be an internal service (an admin console, a database error page): what it answers is never
    put into a message a user sees, so a browser user cannot read internal services through the error path.
    """
    shown = body[:2000]
    for secret in sorted({s for s in secrets if len(s) >= 4}, key=len, reverse=True):
        shown = shown.replace(secret, "…")
    log.warning("model %r: %s answered HTTP %s, %s; body: %r", model, endpoint_name(url), status, reason, shown)
    chat = url.rstrip("/").endswith("/chat/completions")
    arguments = "`api_key=` or `headers=`" if chat else "`headers=`"
    advice = (f"; the service refused the request: it needs credentials ({arguments} of the model, from the command "
              "line; the app's form takes none)" if status in (401, 403) else "")
    return ModelError(f"model {model!r}: {endpoint_name(url)} answered HTTP {status}, {reason} (its answer is logged "
                      f"as a warning, not shown){advice}")


def request_secrets(url: str, headers: Mapping[str, str]) -> list[str]:
    """What a request carries that no log may show: header values (and a bearer token's key), the URL's password and
    query values."""
    from urllib.parse import parse_qsl, urlsplit

    found = [str(value) for value in headers.values()]
    found += [value.split(" ", 1)[1] for value in found if " " in value]
    parts = urlsplit(url)
    found += [value for _, value in parse_qsl(parts.query, keep_blank_values=False)]
    return found + ([parts.password] if parts.password else [])


def _failure_reason(exc: BaseException) -> str:
    """A fixed description of why a request failed, chosen by the exception's class (and its causes') only."""
    import requests

    chain: list[BaseException] = []
    todo: list[BaseException] = [exc]
    while todo and len(chain) < 30:  # causes, contexts, and the causes requests/urllib3 keep as arguments
        item = todo.pop()
        if any(item is known for known in chain):
            continue
        chain.append(item)
        linked = [item.__cause__, item.__context__, getattr(item, "reason", None), *getattr(item, "args", ())]
        todo.extend(link for link in linked if isinstance(link, BaseException))
    names = {type(e).__name__ for e in chain}
    if isinstance(exc, requests.Timeout) or names & {"ReadTimeoutError", "ConnectTimeoutError", "TimeoutError"}:
        return "it timed out"
    if names & {"ConnectionRefusedError"}:
        return "the connection was refused"
    if names & {"NewConnectionError"}:
        return "no connection could be made (refused or unreachable)"
    if names & {"NameResolutionError", "gaierror"}:
        return "the host name could not be resolved"
    if isinstance(exc, requests.exceptions.SSLError) or names & {"SSLError", "SSLCertVerificationError"}:
        return "the TLS handshake failed"
    if names & {"BadStatusLine", "LineTooLong", "InvalidHeader", "HeaderParsingError", "InvalidChunkLength",
                "ChunkedEncodingError", "ProtocolError", "IncompleteRead", "ContentDecodingError"}:
        return "the server did not answer valid HTTP"
    if names & {"RemoteDisconnected", "ConnectionResetError", "BrokenPipeError", "ConnectionAbortedError"}:
        return "the server closed the connection"
    if isinstance(exc, requests.ConnectionError):
        return "the connection failed"
    return f"the request failed ({type(exc).__name__})"


def failed_request(model: str, url: str, exc: BaseException, tries: str = "") -> ModelError:
    """The error for a request that got no usable answer: a fixed reason only, never the exception's text.

    ``str(exc)`` can carry the peer's bytes (``BadStatusLine('SECRET db_password=…')``, a banner of a non-HTTP
    service): it goes to the log at level INFO (not to the CLI's stderr, which shows warnings), never into a message
    a user (or a browser) sees."""
    log.info("model %r: request to %s failed%s: %r", model, endpoint_name(url), tries, str(exc)[:2000])
    return ModelError(f"model {model!r}: request to {endpoint_name(url)} failed{tries}: {_failure_reason(exc)}")


def _read_answer(response: Any, timeout: float, model: str, url: str) -> bytes:
    """The body of ``response`` (streamed), at most ``MAX_ANSWER_BYTES`` and within ``timeout`` seconds in all: the
    read timeout bounds each read only, so an endpoint that sent its headers and then a byte a second kept a model
    of timeout 2 s waiting without end; a body of any size was read into memory whole."""
    import requests
    from urllib3.exceptions import HTTPError

    deadline = time.monotonic() + timeout
    chunks, size = [], 0
    try:
        while True:
            try:  # read1: what has arrived (a read of 64 KiB waited for all of them, a second per byte)
                chunk = response.raw.read1(65_536, decode_content=True)
            except (HTTPError, OSError) as exc:  # a read timeout or a broken answer: retried like a failed request
                raise requests.ConnectionError(exc) from exc
            if not chunk:
                break
            size += len(chunk)
            if size > MAX_ANSWER_BYTES:
                raise ModelError(f"model {model!r}: {endpoint_name(url)} answered more than {MAX_ANSWER_BYTES:,} "
                                 "bytes; nothing of the answer was used")
            if time.monotonic() > deadline:
                raise ModelError(f"model {model!r}: {endpoint_name(url)} did not finish its answer within {timeout:g} "
                                 "s (it kept sending slowly); nothing of the answer was used")
            chunks.append(chunk)
    finally:
        response.close()
    return b"".join(chunks)


def _post(session: Any, url: str, payload: dict, headers: Mapping[str, str], timeout: float, model: str,
          retries: int = 3, backoff: float = 0.5, loopback: bool = True, budget: RequestBudget | None = None) -> Any:
    """POST JSON to an allowed host; retry 429/5xx and connection errors with back-off; never follow redirects.
    Every try takes one request from ``budget`` (a retry is a request the service may bill: pass 39 sent 9 under
    max_requests=6)."""
    import json

    import requests

    check_endpoint(url, loopback=loopback)  # every request: the host's addresses may have changed since
    for attempt in range(retries + 1):
        response = None
        if budget is not None:
            budget.take()
        try:
            response = session.post(url, json=payload, headers=dict(headers), timeout=timeout, allow_redirects=False,
                                    stream=True)
            if response.status_code not in RETRY_STATUS or attempt == retries:
                body = _read_answer(response, timeout, model, url)
                break
            response.close()
        except (requests.ConnectionError, requests.Timeout) as exc:
            if attempt == retries:
                raise failed_request(model, url, exc, f" after {retries + 1} tries") from None
        except requests.RequestException as exc:
            raise failed_request(model, url, exc) from None
        else:
            log.warning("model %r: %s answered HTTP %s; retry %d of %d", model, endpoint_name(url),
                        response.status_code, attempt + 1, retries)
        time.sleep(_retry_wait(response, attempt, backoff))
    assert response is not None
    text = body.decode("utf-8", errors="replace")
    if response.status_code != 200:
        raise refused_answer(model, url, response.status_code, "not 200 OK", text, request_secrets(url, headers))
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        raise refused_answer(model, url, response.status_code, "not a JSON answer", text,
                             request_secrets(url, headers)) from None


class _RemoteBase:
    """What both endpoint adapters share: an allowed URL, a closable session, a per-run request cap."""

    answers_change = True  # the service behind the URL may be redeployed: its answers are asked again in each run
    name: str
    max_requests: int | None
    session: Any

    def _budget(self) -> RequestBudget:
        """This run's budget (per run scope; a call outside any run is a run of its own)."""
        scope = current_scope()
        if scope is None:
            return RequestBudget(self.name, self.max_requests)
        return scope.budget(id(self), self.name, self.max_requests)

    def close(self) -> None:
        """Close the HTTP session (its pooled connections)."""
        self.session.close()

    def __del__(self) -> None:
        session = getattr(self, "session", None)
        if session is not None:
            session.close()


class HttpJsonModel(_RemoteBase):
    """POST ``{"texts": [...]}`` to ``url``; the answer is ``{"probabilities": [[...], ...]}`` (columns in
    ``labels`` order, or rows as ``{label: p}``) or ``{"labels": [...]}`` (one-hot)."""

    def __init__(
        self, url: str, task: str, name: str | None = None, headers: Mapping[str, str] | None = None,
        batch_size: int = 32, timeout: float = 30.0, max_requests: int | None = 1000,
        label_map: Mapping[str, str] | None = None, retries: int = 3, backoff: float = 0.5, loopback: bool = True,
    ) -> None:
        from alict_core.models.pinned_http import pinned_session

        self.loopback = loopback  # False for endpoints added in the browser (alict_core.common.trust)
        self.url, self.name = check_endpoint(url, loopback=loopback), name or endpoint_name(url)
        self.labels = task_labels(task)
        self.headers = dict(headers or {})
        check_header_values(self.name, headers=self.headers)
        self.batch_size, self.timeout = batch_size, timeout
        self.label_map = dict(label_map or {})
        check_task_labels(self.name, task, label_map=self.label_map)
        self.max_requests, self.retries, self.backoff = max_requests, retries, backoff
        self.session = pinned_session(loopback)
        self.fingerprint = combine("http", {"url": url, "task": task, "map": self.label_map})

    def _unusable(self, reason: str, answer: Any) -> ModelError:
        return refused_answer(self.name, self.url, 200, reason, str(answer), request_secrets(self.url, self.headers))

    def _label(self, value: Any) -> str:
        mapped = self.label_map.get(str(value), str(value))
        if mapped not in self.labels:
            raise self._unusable(f"an answer label is not one of {list(self.labels)}", value)
        return mapped

    def _row(self, row: Any) -> list[float]:
        """One answer row: a list in ``labels`` order, or ``{label: p}``; every p a JSON number (``true`` and
        ``"0.5"`` were read as 1.0 and 0.5)."""
        if isinstance(row, dict):
            out = [0.0] * len(self.labels)
            for key, p in row.items():
                out[self.labels.index(self._label(key))] += _number(p)
            return out
        if not isinstance(row, list):
            raise TypeError("an answer row is not a list")
        return [_number(p) for p in row]

    def _rows(self, answer: Any, n: int) -> np.ndarray:
        if not isinstance(answer, dict):
            raise self._unusable(f"expected a JSON object, got {type(answer).__name__}", answer)
        try:
            if "probabilities" in answer:
                rows = answer["probabilities"]
                if not isinstance(rows, list):
                    raise self._unusable("'probabilities' must be a list", answer)
                proba = np.array([self._row(row) for row in rows], dtype=np.float64).reshape(len(rows), -1)
            elif "labels" in answer and isinstance(answer["labels"], list):
                proba = np.array([np.eye(len(self.labels))[self.labels.index(self._label(v))]
                                  for v in answer["labels"]]).reshape(len(answer["labels"]), -1)
            else:
                raise self._unusable("the answer has neither a 'probabilities' nor a 'labels' list", answer)
        except (TypeError, ValueError, OverflowError):
            raise self._unusable("an answer row is not a list of numbers", answer) from None
        if not np.isfinite(proba).all():
            raise self._unusable("the answer holds a probability that is not a finite number", answer)
        if proba.shape != (n, len(self.labels)):
            raise ModelError(f"model {self.name!r}: answer shape {proba.shape} for {n} texts, labels {self.labels}")
        return proba

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        parts = []
        budget = self._budget()
        for start in range(0, len(texts), self.batch_size):
            chunk = list(texts[start : start + self.batch_size])
            answer = _post(self.session, self.url, {"texts": chunk}, self.headers, self.timeout, self.name,
                           self.retries, self.backoff, self.loopback, budget)
            parts.append(self._rows(answer, len(chunk)))
        return np.concatenate(parts) if parts else np.zeros((0, len(self.labels)))


NEGATION = (r"(?:not|no|neither|nor|never|hardly|barely|nothing|none|nobody|far\s+from|free\s+of|without|unlikely"
            r"|lacks?|lacking|devoid\s+of|doubt|doubtful)")
NEGATED = re.compile(rf"\b{NEGATION}\b")  # a negation cue anywhere before a label in its clause
# Idioms that hold a negation word but negate nothing ("no doubt positive", "nothing but hateful").
NOT_NEGATING = re.compile(r"\b(?:no\s+doubt|without\s+(?:a\s+)?doubt|no\s+question|not\s+only|not\s+just"
                          r"|nothing\s+but|none\s+other\s+than)\b")
# A negation after the label in its clause: "negative is not the answer", "hate speech would never fit" (matched at
# the mention's end, so no '^').
NEGATED_AFTER = re.compile(r"\s*(?:[\w-]+\s+){0,3}?(?:is|are|was|were|be|been|seems?|appears?|does|do|did|would"
                           r"|could|should|will|can|might|may)\s+(?:not|never|hardly|no)\b")
# A clause that only denies what came before it: "Not at all.", "Definitely not.", "I don't think so.", "Far from it.",
# "No way."; a few words may lead it, the words after the denial are fillers only (so "It does not attack anyone."
# denies nothing).
DENIAL = re.compile(r"(?:[\w-]+\s+){0,3}?(?:not|no|nope|nah|never|hardly|doubt|doubtful|unlikely|far\s+from)"
                    r"(?:\s+(?:at|all|really|quite|exactly|so|that|it|this|is|the|case|in|any|way|slightest"
                    r"|one|bit|chance|likely|remotely|even|close|think|believe|from|of|course|much|a|little|either"
                    r"|sure|true|i|do|did|anymore|whatsoever))*")
# Where a negation stops: sentence and clause punctuation, a spaced dash, and contrast words ("not X but Y"); a '?'
# is kept apart (a label it ends is questioned, not named).
CLAUSE_BREAK = re.compile(r"(\?)|[.!;,():=\u2014\u2013]|\s-+\s|\b(?:but|however|instead|rather|although|though"
                          r"|whereas)\b")
# A label given a false value, as in a structured answer: "hate speech: false", {"hateful": 0}, "positive=no".
FALSE_VALUE = re.compile(r"(?<=[\w-])\s*[:=]\s*(?:false|0|no|none|null|n)\b(?![.,]?\d)")
# Label synonyms that are a bare reply: a label only when they are the whole answer ("No." is non-hateful; "No
# comment.", "Yes, I can help with that." name no label; pass 39).
BARE_REPLIES = frozenset({"yes", "no"})


def _answer_text(answer: str) -> str:
    """An answer lower-cased; idioms without negation blanked, quotes dropped, 'cannot' and "n't" spelled as 'not', a
    leading 'Label:' dropped and a label's false value ("hateful: false") said as a negation."""
    text = re.sub(r"n't\b", " not", answer.strip().lower().replace("\u2019", "'"))
    text = re.sub(r"\bcannot\b", "can not", text)
    text = NOT_NEGATING.sub(" ~ ", text)
    text = re.sub(r"[*`\"']", " ", text)
    text = re.sub(r"^\s*(answer|label|sentiment|classification)\s*(?=[:=\-\u2014\u2013|]|$)", " ", text)
    return FALSE_VALUE.sub(" is not ", text)  # "hateful: false", {"hateful": 0}: the label denied


class _Clauses:
    """An answer's text cut into clauses (a negation does not reach across a sentence or clause break): their spans,
    whether a '?' ends each, and where the first negation cue of each ends. Built in one pass of each pattern over the
    whole text (a clause at a time made an answer of many short clauses slow)."""

    def __init__(self, text: str) -> None:
        self.text, self.starts, self.ends, self.questioned = text, [0], [], []
        for cut in CLAUSE_BREAK.finditer(text):
            self.ends.append(cut.start())
            self.questioned.append(cut.group(1) is not None)
            self.starts.append(cut.end())
        self.ends.append(len(text))
        self.questioned.append(False)
        self.first_cue: dict[int, int] = {}
        for cue in NEGATED.finditer(text):
            self.first_cue.setdefault(self.index(cue.start()), cue.end())
        self._denials: dict[int, bool] = {}

    def index(self, position: int) -> int:
        """The clause holding ``position``."""
        return bisect.bisect_right(self.starts, position) - 1

    def negated(self, index: int, start: int) -> bool:
        """Whether a negation cue before ``start`` in clause ``index`` reaches it ("I don't think this is negative")."""
        cue = self.first_cue.get(index)
        return cue is not None and cue <= start

    def reply_denies(self, index: int, candidates: Mapping[str, str]) -> bool:
        """Whether the next clause with words only denies (a short negating reply naming no label, 'Not at all.')."""
        if index not in self._denials:
            following = (self.text[self.starts[i] : self.ends[i]] for i in range(index + 1, len(self.starts)))
            reply = next((clause for clause in following if clause.strip()), "")
            words = " ".join(re.sub(r"[^\w\s-]", " ", reply).split())
            self._denials[index] = ((words not in candidates or words in BARE_REPLIES)
                                    and DENIAL.fullmatch(words) is not None)
        return self._denials[index]


def _mentions(text: str, candidates: Mapping[str, str]) -> dict[str, tuple[int, int]] | None:
    """Label -> (position, -length) of its earliest plain mention (no negation before it in its clause); None when a
    mention is questioned ("Negative? Definitely not.") or denied after it (in its clause, or by a reply clause):
    which label the answer means is then not ours to guess. Linear in the answer's length (pass 39: quadratic)."""
    clauses = _Clauses(text)
    named: dict[str, tuple[int, int]] = {}
    whole = " ".join(re.sub(r"[\W_]+", " ", text).split())
    for phrase, label in candidates.items():
        if phrase in BARE_REPLIES and whole != phrase:
            continue  # "No comment.", "I have no way to tell.": a refusal, not the label
        for match in re.finditer(rf"(?<![\w-]){re.escape(phrase)}(?![\w-])", text):
            index = clauses.index(match.start())
            if clauses.negated(index, match.start()):
                continue  # "I don't think this is negative", "far from negative"
            if clauses.questioned[index] or NEGATED_AFTER.match(text, match.end(), clauses.ends[index]):
                return None  # "Non-hateful? No.", "Negative is not the answer here"
            if clauses.reply_denies(index, candidates):
                return None  # "Negative. Definitely not.", "Hateful. Not in the slightest."
            spot = (match.start(), -len(phrase))
            named[label] = min(named.get(label, spot), spot)
    return named


def parse_answer(answer: str, labels: Sequence[str], task: str) -> str | None:
    """The task label an LLM answer names, or None. Longest match first, so 'non-hateful' beats 'hateful'.

    A negated mention names no label: a negation anywhere before it in its clause ("I don't think this is
    negative", "does not appear to be hate speech", "cannot be called positive", "unlikely to be hate speech"), and a
    mention questioned or denied after it ("Negative is not the answer", "Negative? Of course not.", "hateful: false")
    leaves the answer unparsed, as does an answer naming two labels ("Positive? No. Negative."). Unparsed answers are
    counted by the run, never read as the label they deny (passes 37-39). Linear in the answer's length (pass 39: a
    long looping answer took minutes)."""
    text = _answer_text(answer)
    candidates = {label.lower(): label for label in labels} | {
        k: v for k, v in SYNONYMS.get(task, {}).items() if v in labels
    }
    named = _mentions(text, candidates)
    if named is None:
        return None
    # a phrase inside a longer one of another label ('hate' in 'not hate speech') is no mention of its own
    plain = {label: spot for label, spot in named.items()
             if not any(other != label and o[0] <= spot[0] and spot[0] - spot[1] <= o[0] - o[1]
                        and o != spot for other, o in named.items())}
    if len(plain) == 1:
        return next(iter(plain))
    if not plain:
        digit = re.fullmatch(r"[\s|:]*(\d)\s*", text)
        if digit and int(digit.group(1)) < len(labels):
            return labels[int(digit.group(1))]
    return None


class OpenAIChatModel(_RemoteBase):
    """An OpenAI-compatible ``/chat/completions`` endpoint as a classifier (one request per text).

    The answer is parsed into a label (one-hot row). An unparseable answer is recorded (``unparsed``, and in
    the run scope, which the runner reads so that row is never cached) and scored as the ``fallback`` label
    (default: the neutral / non-hateful one) for this run only. ``max_requests`` caps requests per run.
    """

    def __init__(
        self, base_url: str, model: str, task: str, name: str | None = None, api_key: str | None = None,
        prompt: str | None = None, max_requests: int | None = 500, timeout: float = 60.0,
        fallback: str | None = None, temperature: float = 0.0, retries: int = 3, backoff: float = 0.5,
        loopback: bool = True,
    ) -> None:
        from alict_core.models.pinned_http import pinned_session

        self.name = name or f"chat:{model}"
        self.task = task
        self.labels = task_labels(task)
        self.loopback = loopback  # False for endpoints added in the browser (alict_core.common.trust)
        if "?" in base_url or "#" in base_url:  # '/v1?token=…' + '/chat/completions' went to another path
            advice = "pass api_key instead" if loopback else BROWSER_SECRETS_ADVICE  # the app's form has no api_key
            raise ModelError(f"model {name or model!r}: base_url must not hold a query or fragment; {advice}")
        self.url = check_endpoint(base_url.rstrip("/") + "/chat/completions", loopback=loopback)
        self.model_id, self.timeout, self.temperature = model, timeout, temperature
        self.prompt = prompt or DEFAULT_PROMPTS[task]
        if "{text}" not in self.prompt:
            raise ModelError(f"model {self.name!r}: the prompt template must contain {{text}}")
        self.fallback = TASKS[task].default_label if fallback is None else fallback
        check_task_labels(self.name, task, fallback=self.fallback)
        check_header_values(self.name, api_key=api_key)
        self.headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.max_requests, self.retries, self.backoff = max_requests, retries, backoff
        self.session = pinned_session(loopback)
        self.unparsed: deque[str] = deque(maxlen=MAX_UNPARSED_KEPT)  # latest unparsed answers (all sessions)
        self.fingerprint = combine("chat", {"url": self.url, "model": model, "prompt": self.prompt, "t": temperature,
                                            "fallback": self.fallback})

    def ask(self, text: str, budget: RequestBudget | None = None) -> str:
        payload = {"model": self.model_id, "temperature": self.temperature,
                   "messages": [{"role": "user", "content": self.prompt.replace("{text}", text)}]}
        answer = _post(self.session, self.url, payload, self.headers, self.timeout, self.name,
                       self.retries, self.backoff, self.loopback, budget or self._budget())
        try:
            content = answer["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            content = False  # not the shape of a chat completion
        if content is None:
            return ""  # an empty answer: unparsed, scored as the fallback label
        if not isinstance(content, str):
            raise refused_answer(self.name, self.url, 200, "not a chat completion (choices[0].message.content)",
                                 str(answer), request_secrets(self.url, self.headers))
        return content

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), len(self.labels)))
        budget, scope = self._budget(), current_scope()
        for i, text in enumerate(texts):
            content = self.ask(text, budget)
            label = parse_answer(content, self.labels, self.task)
            if label is None:
                kept = content[:UNPARSED_CHARS]  # an answer up to MAX_ANSWER_BYTES each, 500 a run: kept cut
                self.unparsed.append(kept)
                if scope is not None:
                    scope.record_unparsed(self.name, text, kept)
                log.warning("model %r: unparsed answer %r (scored %s for this run, not cached)",
                            self.name, content[:80], self.fallback)
                label = self.fallback
            out[i, self.labels.index(label)] = 1.0
        return out
