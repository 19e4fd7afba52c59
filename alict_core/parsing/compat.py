"""Make benepar 0.2.0 work with transformers 5 (import this before building a benepar model).

benepar's ``Retokenizer`` asks the tokenizer for ``build_inputs_with_special_tokens``, which
transformers 5 tokenizers no longer have. ``ensure()`` adds an equivalent method (derived from
how the tokenizer wraps a probe word) only when it is missing; nothing existing is changed.
"""

from __future__ import annotations

_DONE = False


def _build_inputs_with_special_tokens(self, token_ids_0, token_ids_1=None):  # noqa: ANN001
    probe = self("a", add_special_tokens=True)["input_ids"]
    plain = self("a", add_special_tokens=False)["input_ids"]
    for i in range(len(probe) - len(plain) + 1):
        if probe[i : i + len(plain)] == plain:
            prefix, suffix = probe[:i], probe[i + len(plain) :]
            break
    else:  # pragma: no cover - tokenizers always contain the probe
        prefix, suffix = [], []
    ids = prefix + list(token_ids_0) + suffix
    if token_ids_1 is not None:
        ids += list(token_ids_1) + suffix
    return ids


def ensure() -> None:
    """Patch once per process (idempotent)."""
    global _DONE
    if _DONE:
        return
    import warnings

    from transformers.tokenization_utils_base import PreTrainedTokenizerBase

    # torch-struct 0.5's TreeCRF predates torch's arg_constraints check: harmless, but noisy
    warnings.filterwarnings("ignore", message=".*does not define `arg_constraints`.*")

    if "build_inputs_with_special_tokens" not in dir(PreTrainedTokenizerBase):
        # the method is missing in transformers 5 (which is why this shim exists), so mypy cannot know it
        PreTrainedTokenizerBase.build_inputs_with_special_tokens = (  # type: ignore[attr-defined]
            _build_inputs_with_special_tokens
        )
    _DONE = True
