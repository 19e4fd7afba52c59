"""``ModelRef``: a model to test named by its registry entry and arguments, parsed once at the boundary.

The CLI's ``--models`` text (``parse_model_refs``, checked by ``model_refs``), the app's Run form and its stored
run requests all become ``ModelRef``s; a worker in any process builds the model from ``to_dict()``. The kinds a
user may add, and the parameters each takes, are read from the registry entries (``user_kinds``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from alict_core.common.errors import AlictError
from alict_core.common.registry import Entry
from alict_core.common.textsafe import looks_alike
from alict_core.common.trust import endpoint_name
from alict_core.models.protocol import Model
from alict_core.models.registry import (
    HUB_MODELS,
    MODELS,
    check_arguments,
    get_model,
    known_arguments,
    model_entry,
)


@dataclass(frozen=True)
class ModelRef:
    """A registered model (``name``) with the arguments it is built with; ``label``: the name the app shows."""

    name: str
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    label: str | None = None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ModelRef:
        """A reference stored as ``{"name", "kwargs"[, "label"]}`` (run requests, the app's session)."""
        name = data.get("name") if isinstance(data, Mapping) else None
        if not isinstance(name, str) or not name:
            raise AlictError(f"a model reference names its registered model, got {data!r:.80}")
        kwargs = data.get("kwargs") or {}
        if not isinstance(kwargs, Mapping):
            raise AlictError(f"model {name!r}: its arguments must be a mapping, got {type(kwargs).__name__}")
        label = data.get("label")
        return cls(name, dict(kwargs), str(label) if label else None)

    def to_dict(self) -> dict[str, Any]:
        """``{"name", "kwargs"}``: small JSON values a worker in any process can build the model from."""
        return {"name": self.name, "kwargs": dict(self.kwargs)}

    @property
    def shown(self) -> str:
        """The label the app shows, else the registry name."""
        return self.label or self.name

    def run_name(self) -> str:
        """The name the model will have in a run (its ``name=`` argument, else what its kind calls it: the hub id,
        the file's stem, the URL, ``chat:<model>``): two models of one name cannot share a run."""
        kwargs = self.kwargs
        if kwargs.get("name"):
            return str(kwargs["name"])
        if self.name == "hf" and kwargs.get("model_id"):
            return str(kwargs["model_id"])
        if self.name in ("sklearn", "static") and kwargs.get("path"):
            return Path(kwargs["path"]).stem
        if self.name == "http" and kwargs.get("url"):
            return endpoint_name(str(kwargs["url"]))  # never a password or token of the URL
        if self.name == "openai-chat" and kwargs.get("model"):
            return f"chat:{kwargs['model']}"
        return self.name

    def answers_to(self, name_in_run: str) -> bool:
        """Whether a run's model called ``name_in_run`` is this one (its label, registry name or ``name=``)."""
        return name_in_run in (self.label, self.name, self.kwargs.get("name"))

    def build(self) -> Model:
        """The model (``get_model``: once per process per name and arguments)."""
        return get_model(self.name, **dict(self.kwargs))


def user_kinds() -> dict[str, Entry[Model]]:
    """Registry name → entry of the model kinds a user may add (tag ``user_kind``: their title), in order."""
    return {entry.name: entry for entry in MODELS if entry.tags.get("user_kind")}


def browser_model_kwargs(name: str, kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """``common.trust.browser_model_kwargs`` with what the registry says of ``name`` (registered, the parameters
    of a kind a user may add, the hub ids): the arguments a reference from the browser builds its model with."""
    from alict_core.common import trust

    kinds = user_kinds()
    params = [p.name for p in kinds[name].params] if name in kinds else None
    return trust.browser_model_kwargs(name, kwargs, registered=name in MODELS, params=params, hub_ids=set(HUB_MODELS))


def browser_ref(ref: ModelRef) -> ModelRef:
    """``ref`` (received from the browser) with its arguments checked by the trust model."""
    return ModelRef(ref.name, browser_model_kwargs(ref.name, ref.kwargs), ref.label)


SECRET_ARGUMENTS = ("api_key", "headers")  # values never echoed in a message (CI logs keep stderr)
_SECRET_VALUE = re.compile(rf"\b({'|'.join(SECRET_ARGUMENTS)})=[^,]*")
_URL_SECRETS = re.compile(r"(https?://)(?:[^/@,?#]*@)?([^?#,]*)(?:[?#][^,]*)?")


def _starts_entry(part: str) -> bool:
    """Whether a ``--models`` part reads as an argument (``key=value``) or a registered model (``name``,
    ``name:key=value``), not as the tail of a value that held a comma."""
    return bool(re.match(r"\s*[A-Za-z_][\w-]*\s*=(?!=)", part)) or part.partition(":")[0].strip() in MODELS


def redacted(text: str) -> str:
    """A ``--models`` text as a message may echo it: ``api_key=…``, ``headers=…`` (with the parts after them that are
    no argument or model: a value's tail after a comma), and URLs without user, password, query or fragment (a
    refusal printed the key, header values and ``?token=`` whole; passes 38, 39)."""
    parts, hiding = [], False
    for part in text.split(","):
        if hiding and part.strip() and not _starts_entry(part):
            continue  # 'headers=X-Api-Key:SEC1,SEC2': SEC2 is the key's tail
        hiding = bool(_SECRET_VALUE.search(part))
        parts.append(part)
    return _URL_SECRETS.sub(r"\1\2", _SECRET_VALUE.sub(r"\1=…", ",".join(parts)))


def parse_model_refs(text: str, option: str = "--models") -> list[ModelRef]:
    """``vader,http:url=http://127.0.0.1:8000/p,name=mine`` → [vader, http(url=..., name=mine)].

    A comma-separated part starts a new model unless it is a bare ``key=value`` (that continues the previous
    model's arguments); ``name:key=value`` starts a model with arguments.
    """
    refs: list[tuple[str, dict[str, str]]] = []
    shown = redacted(text)
    parts = [p.strip() for p in text.split(",")]
    if any(parts) and not all(parts):
        raise AlictError(f"{option} {shown!r} has an empty entry; separate models by single commas")
    for part in parts:
        if not part:
            continue
        head, eq, _ = part.partition("=")
        if eq and ":" not in head:
            if not refs:
                raise AlictError(f"{option} {shown!r}: {redacted(part)!r} is an argument with no model before "
                                 "it")
            key, _, value = part.partition("=")
            if not key.strip():
                raise AlictError(f"{option} {shown!r}: {redacted(part)!r} gives a value with no argument name; "
                                 "write key=value")
            _check_not_a_value_tail(f"{option} {shown!r}", key.strip(), part, refs[-1], argument=True)
            if key.strip() in refs[-1][1]:  # `path=a.jsonl,path=b.jsonl`: the second won without a word
                raise AlictError(f"{option} {shown!r}: {key.strip()!r} is given twice for the model "
                                 f"{refs[-1][0]!r}; give each argument once")
            refs[-1][1][key.strip()] = value.strip()
            continue
        name, colon, rest = part.partition(":") if eq else (part, "", "")
        if refs:
            _check_not_a_value_tail(f"{option} {shown!r}", name.strip(), part, refs[-1])
        kwargs: dict[str, str] = {}
        if colon:
            key, _, value = rest.partition("=")
            kwargs[key.strip()] = value.strip()
        if "" in kwargs:
            raise AlictError(f"{option} {shown!r}: {redacted(part)!r} gives a value with no argument name; "
                             "write key=value")
        refs.append((name.strip(), kwargs))
    return [ModelRef(name, kwargs) for name, kwargs in refs]


def _check_not_a_value_tail(said_value: str, name: str, part: str, previous: tuple[str, dict[str, str]],
                            argument: bool = False) -> None:
    """AlictError when an entry after a model's arguments names no model (or, after a secret, no argument the model
    takes): the tail of a value that held a comma (``headers=X-Api-Key:SEC1,SEC2`` was the model 'SEC2', the key's
    tail echoed). A secret's tail is never shown."""
    if not previous[1]:
        return
    key = next(reversed(previous[1]))
    secret = key in SECRET_ARGUMENTS
    try:
        if not argument:
            model_entry(name)
            return
        known = known_arguments(previous[0])
        if not secret or known is None or name in known:
            return
    except AlictError:
        pass
    said = "an entry" if secret else repr(redacted(part))
    raise AlictError(f"{said_value}: {said} after {key}=… of the model {previous[0]!r} is no "
                     f"{'argument it takes' if argument else 'model name'}; a value cannot hold a comma (each comma "
                     "starts the next argument or model)" + ("" if secret or argument
                                                              else f"; models: {', '.join(sorted(MODELS.names()))}"))


def checked_ref(ref: ModelRef, task: str, trust_pickle: bool, option: str = "--models") -> ModelRef:
    """One ``--models`` reference after the checks (task, the kind's required parameters, pickle trust)."""
    from alict_core.common.trust import check_pickle_allowed

    name, kwargs = ref.name, dict(ref.kwargs)
    entry = model_entry(name)
    model_task = entry.tags.get("task")
    if model_task not in (None, task):
        raise AlictError(f"model {name!r} is for task {model_task}, not {task}; models for {task}: "
                         + ", ".join(MODELS.names(task=task)))
    if model_task is None:
        if kwargs.get("task") not in (None, task):  # task=hate_speech under --task sentiment: its file was read
            raise AlictError(f"{option} {name}: task={str(kwargs['task'])[:40]!r} is not the run's task {task}; "
                             "leave task= out (it defaults to the run's task) or run that task")  # for labels it lacks
        kwargs.setdefault("task", task)
    if "trusted" in kwargs:
        raise AlictError(f"{option}: 'trusted' is not an argument; pass --trust-pickle")
    given = kwargs.get("name")
    if given is not None and (not given or len(given) > 200 or not given.isprintable()):
        raise AlictError(f"{option} {name}: name={given[:40]!r} must be 1–200 printable characters (the model's "
                         "name in the run and its reports)")
    if entry.tags.get("kind") == "sklearn":
        check_pickle_allowed(trust_pickle, origin="cli")
        kwargs["trusted"] = True
    check_arguments(name, kwargs)  # timeout=0, headers=X: said now, not after the cases are built
    missing = [p for p in entry.params if p.required and not kwargs.get(p.name)]
    if missing:  # was a TypeError of the adapter, once the run had built its cases
        raise AlictError(f"{option} {name}: give " + ", ".join(f"{p.name}=<{p.hint}>" for p in missing)
                         + f", e.g. {name}:{missing[0].name}=...")
    return ModelRef(name, kwargs, ref.label)


def registered_look_alike(name: str) -> str | None:
    """Why ``name`` may not name a user's model, or None: a registered model's name (or one that looks like it:
    case, width, dashes, mixed scripts), or a stored version's form ``<parent>@<hash>``."""
    from alict_core.common.textsafe import invisible_char, looks_alike, mixed_scripts

    if "@" in name:
        return "the form of a stored model version (<parent>@<hash>)"
    invisible = invisible_char(name)
    if invisible:
        return f"a name holding a character that draws as nothing ({invisible})"
    mixed = mixed_scripts(name)
    if mixed:
        return f"a name mixing the {' and '.join(mixed)} scripts (letters that look alike)"
    same = next((known for known in MODELS.names() if looks_alike(known, name)), None)
    return None if same is None else f"the name of the registered model {same!r} (or one that looks like it)"


def model_refs(names: str, task: str, trust_pickle: bool = False, option: str = "--models") -> list[ModelRef]:
    """The models of ``--models`` (or ``option``) after the checks (task, parameters, pickle trust, one name each)."""
    refs = [checked_ref(ref, task, trust_pickle, option) for ref in parse_model_refs(names, option)]
    if not refs:
        raise AlictError(f"{option} is empty")
    check_run_names(refs, option)
    for ref in refs:  # before any work (the run refused it only once its cases were built)
        shown = ref.run_name()
        alike = shown != ref.name and registered_look_alike(shown)
        if alike:  # static:path=st/vader.jsonl is named "vader" (or 'vаder', 'minilm-sst@deadbeef'): compare and
            # explain --results would take it for the registered model or a stored version
            raise AlictError(f"{option} {ref.name}: it would be named {shown!r} in the run, {alike}; give it another "
                             "name with name=...")
    return refs


def check_run_names(refs: Sequence[ModelRef], what: str = "--models", fix: str = "with name=...") -> None:
    """AlictError, before any work, when two of one run's models would have one name or names that read alike
    ('pop' and 'рор' in Cyrillic, 'mine' and 'MINE': "рор vs pop" in compare reads "pop vs pop"). The command line
    and the Run page (``what``: where the models were chosen) both call it."""
    seen: dict[str, ModelRef] = {}
    for ref in refs:
        shown = ref.run_name()
        if shown in seen:
            if seen[shown] == ref:
                raise AlictError(f"{what} names {shown!r} twice; name each model once")
            raise AlictError(f"{what}: two models would both be named {shown!r} in the run; tell them apart {fix}")
        twin = next((other for other in seen if looks_alike(other, shown)), None)
        if twin is not None:
            raise AlictError(f"{what}: two models would be named {twin!r} and {shown!r} in the run, which read "
                             f"alike; tell them apart {fix}")
        seen[shown] = ref


def resolve_models(names: str, task: str, trust_pickle: bool = False) -> list[Model]:
    """The models of ``--models``, built."""
    return [ref.build() for ref in model_refs(names, task, trust_pickle)]
