"""Models under test: one narrow protocol (``labels``, ``predict_proba``) and adapters behind it.

``MODELS`` (a Registry, entries tagged ``task`` and ``offline``) and ``get_model(name, **kw)``;
``ModelRef``: a model named by its entry and arguments (``alict_core.models.refs``).
"""

from alict_core.models.protocol import Model, checked_proba, model_fingerprint
from alict_core.models.refs import ModelRef
from alict_core.models.registry import MODELS, clear_model_cache, get_model, model_task

__all__ = ["MODELS", "Model", "ModelRef", "checked_proba", "clear_model_cache", "get_model", "model_fingerprint",
           "model_task"]
