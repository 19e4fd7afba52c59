"""The Run page's user models: the checks of a model a browser user adds (fields and display name)."""

from __future__ import annotations

FIELD_CHARS = 2_000  # a path, model id or URL typed into the form (the browser's max_chars is not a check)
LABEL_CHARS = 100


def user_model_problem(kwargs: dict[str, str], label: str) -> str | None:
    """What is wrong with a user model's fields and display name (checked here: the browser is untrusted), or
    None. A display name is shown in every table, chart and export of a run: printable, short, and not the name
    of a registered model (two models of one name cannot be told apart in a run's results); adding a user model
    under the name of another user model replaces that one."""
    from alict_core.models.refs import registered_look_alike
    from alict_core.models.registry import MODELS

    long = [f"{field} has {len(value):,} characters" for field, value in kwargs.items() if len(value) > FIELD_CHARS]
    if long:
        return f"{'; '.join(long)}, over the limit of {FIELD_CHARS:,}"
    if len(label) > LABEL_CHARS:
        return f"the display name has {len(label):,} characters, over the limit of {LABEL_CHARS}"
    if not label.isprintable():
        return f"the display name {label[:40]!r} holds control characters"
    if "," in label:  # lists of models are comma-joined (run names, a shared view's model filter in the URL)
        return f"the display name {label[:40]!r} holds a comma; give one without (model lists are comma-separated)"
    if label in MODELS:
        return f"{label!r} is the name of a registered model; give this one another display name"
    alike = registered_look_alike(label)  # 'vаder' (a Cyrillic 'а'), 'ｖａｄｅｒ', 'minilm‐sst' (U+2010)
    if alike:
        return f"the display name {label[:40]!r} is {alike}; give this one another display name"
    return None


def look_alike_label(label: str, labels: list[str]) -> str | None:
    """The user model among ``labels`` whose display name reads like ``label`` without being it, or None."""
    from alict_core.common.textsafe import looks_alike

    return next((other for other in labels if other != label and looks_alike(other, label)), None)


ENDPOINT_KINDS = frozenset({"http", "openai-chat"})  # their first field is a URL


def default_label(kind: str, value: str) -> str:
    """The display name of a user model given none: ``kind:<its first field>`` when that is a fit display name, else
    ``kind:<a short hash of it>`` (a URL with line breaks or 1,500 characters went into every table and export). An
    endpoint's URL is named without user, password, query or fragment (``?token=…`` went into the shared run)."""
    import hashlib

    from alict_core.common.trust import endpoint_name

    shown = endpoint_name(value) if kind in ENDPOINT_KINDS else value  # the hash too: a short token was
    label = f"{kind}:{shown}"  # confirmable offline from a hash of the whole URL
    if user_model_problem({}, label) is None:
        return label
    return f"{kind}:{hashlib.sha256(shown.encode('utf-8', 'surrogatepass')).hexdigest()[:12]}"
