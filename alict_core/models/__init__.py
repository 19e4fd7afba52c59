"""Models under test: one narrow protocol (``labels``, ``predict_proba``) and adapters behind it."""

from alict_core.models.protocol import Model, checked_proba

__all__ = ["Model", "checked_proba"]
