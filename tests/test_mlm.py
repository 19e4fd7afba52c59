"""Masked-LM suggesters: whole-word filtering, batching, caching, the HF path and the MLM build script."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from alict_core.common.errors import ArtefactMissingError, ModelError  # noqa: E402
from alict_core.mlm import (  # noqa: E402
    SUGGESTERS,
    Suggester,
    get_suggester,
    menu_names,
    minilm,
)
from alict_core.mlm.suggesters import head_at_positions, load_hf_suggester, token_word, whole_word_ids  # noqa: E402
from alict_core.training import mlm as mlm_training  # noqa: E402

WORDS = ["the", "a", "movie", "film", "was", "is", "good", "bad", "great", "and", "i", "loved", "it", "very", "plot",
         "actors", "don't", "well-made"]
PIECES = ["##ing", "##s", "##ly", ",", ".", "!", "'", "42", "1990"]
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


@pytest.fixture(scope="module")
def tiny_model_dir(tmp_path_factory) -> Path:
    """A randomly initialised BertForMaskedLM with a 32-token vocabulary, saved like any HF model."""
    from transformers import BertConfig, BertForMaskedLM, BertTokenizer

    folder = tmp_path_factory.mktemp("tiny_bert")
    tokenizer = BertTokenizer(vocab={t: i for i, t in enumerate(SPECIALS + WORDS + PIECES)}, do_lower_case=True)
    torch.manual_seed(0)
    config = BertConfig(vocab_size=len(SPECIALS + WORDS + PIECES), hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=64, max_position_embeddings=64)
    model = BertForMaskedLM(config)
    with torch.no_grad():  # make sub-word pieces and punctuation the model's favourites: the filter must drop them
        for token in PIECES:
            model.cls.predictions.bias[tokenizer.convert_tokens_to_ids(token)] = 8.0
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture()
def tiny(tiny_model_dir):
    return load_hf_suggester(str(tiny_model_dir), name="tiny", batch_size=32)


def test_token_word_keeps_whole_words_only():
    assert token_word("movie") == "movie"
    assert token_word("well-made") == "well-made"
    assert token_word("ĠMovie") == "Movie"
    assert token_word("a") == "a" and token_word("I") == "I"
    for piece in ("##ing", ",", "42", "[MASK]", "e.g.", "Ġ,", "moviĠe", "s", "t"):
        assert token_word(piece) is None, piece


def test_whole_word_ids_excludes_pieces_punctuation_and_specials(tiny):
    vocab = tiny.tokenizer.get_vocab()
    allowed = {tiny.tokenizer.convert_ids_to_tokens(i) for i in whole_word_ids(tiny.tokenizer)}
    assert allowed == set(WORDS)
    assert not allowed & set(PIECES + SPECIALS)
    assert len(vocab) == len(SPECIALS + WORDS + PIECES)


def test_suggest_returns_whole_words_per_mask_best_first(tiny):
    out = tiny.suggest(["the movie was [MASK] and i [MASK] it ."], top_k=5)
    assert len(out) == 1 and len(out[0]) == 2  # one text, two masks (left to right)
    for slot in out[0]:
        assert len(slot) == 5
        words = [w for w, _ in slot]
        assert all(w in WORDS for w in words), words  # the favoured '##ing', ',' ... never appear
        probs = [p for _, p in slot]
        assert probs == sorted(probs, reverse=True)
        assert all(0.0 < p < 1.0 for p in probs)


def test_suggest_probabilities_are_the_models_own(tiny):
    text = "the [MASK] was good ."
    (slot,) = tiny.suggest([text], top_k=3)[0]
    enc = tiny.tokenizer([text], return_tensors="pt")
    with torch.no_grad():
        logits = tiny.model(**enc).logits[0]
    position = int((enc["input_ids"][0] == tiny.tokenizer.mask_token_id).nonzero()[0])
    probs = torch.softmax(logits[position], dim=-1)
    for word, p in slot:
        assert p == pytest.approx(float(probs[tiny.tokenizer.convert_tokens_to_ids(word)]), rel=1e-4)


def test_head_is_applied_at_mask_positions_only_and_matches_full_forward(tiny):
    enc = dict(tiny.tokenizer(["the [MASK] was good .", "a [MASK] [MASK] ."], padding=True, return_tensors="pt"))
    positions = (enc["input_ids"] == tiny.tokenizer.mask_token_id).nonzero(as_tuple=True)
    calls = []
    hook = tiny.model.cls.register_forward_hook(lambda module, args, out: calls.append(args[0].shape))
    try:
        with torch.no_grad():
            selected = head_at_positions(tiny.model, enc, positions)
    finally:
        hook.remove()
    assert calls == [torch.Size([3, 32])]  # 3 masks, hidden size 32: not batch x length x hidden
    with torch.no_grad():
        full = tiny.model(**enc).logits[positions[0], positions[1]]
    assert torch.allclose(selected, full, atol=1e-5)


def test_suggest_batches_across_texts_and_caches(tiny_model_dir):
    suggester = load_hf_suggester(str(tiny_model_dir), name="tiny", batch_size=2)
    texts = [f"the {w} was [MASK] ." for w in ("movie", "film", "plot", "actors", "movie")]
    batched = suggester.suggest(texts, top_k=4)
    assert suggester.forward_calls == 2  # 4 distinct texts in batches of 2, not one call per mask
    assert batched[0] == batched[4]
    suggester.suggest(texts, top_k=4)
    assert suggester.forward_calls == 2  # cached by (fingerprint, text)
    one_by_one = [load_hf_suggester(str(tiny_model_dir), name="tiny").suggest([t], top_k=4)[0] for t in texts[:2]]
    for a, b in zip(batched[:2], one_by_one, strict=True):
        assert [w for w, _ in a[0]] == [w for w, _ in b[0]]  # padding does not change the answer
        assert [p for _, p in a[0]] == pytest.approx([p for _, p in b[0]], rel=1e-4)
    bigger = suggester.suggest(texts[:1], top_k=6)
    assert len(bigger[0][0]) == 6 and suggester.forward_calls == 3  # larger top_k is recomputed


def test_suggest_rejects_text_without_mask(tiny):
    with pytest.raises(ModelError, match="no \\[MASK\\]"):
        tiny.suggest(["the movie was good ."])


def test_hf_loader_reports_missing_model_clearly(tmp_path):
    with pytest.raises(ModelError, match="local folder"):
        load_hf_suggester(str(tmp_path))


def test_registry_names_and_get_suggester_loads_once(tiny_model_dir):
    assert {"minilm-offline", "hf", "bert-base-uncased", "roberta-base"} <= set(SUGGESTERS.names())
    assert menu_names() == ["minilm-offline", "bert-base-uncased", "roberta-base"]
    first = get_suggester("hf", model=str(tiny_model_dir))
    assert isinstance(first, Suggester)
    assert get_suggester("hf", model=str(tiny_model_dir)) is first
    assert first.fingerprint and first.name == f"hf:{tiny_model_dir}"


def test_minilm_suggester_says_how_to_build_when_missing(tmp_path):
    with pytest.raises(ArtefactMissingError, match="build mlm"):
        SUGGESTERS.create("minilm-offline", path=tmp_path / "nowhere")


def test_corpus_split_is_deterministic_and_disjoint():
    sentences = mlm_training.corpus_sentences(include_task_text=False)
    assert len(sentences) > 100_000
    train, held = mlm_training.split_held_out(sentences)
    assert not set(train) & set(held)
    assert 0.01 < len(held) / len(sentences) < 0.03
    assert mlm_training.split_held_out(sentences[:500]) == mlm_training.split_held_out(sentences[:500])
    assert not any("/" in s.split()[0] and s.split()[0].endswith("/at") for s in sentences[:2000])  # brown tags gone


def test_micro_build_trains_saves_small_delta_and_loads(tmp_path):
    from alict_core.common.jsonl import read_json
    from alict_core.models import artefacts
    from alict_core.training.targets import build

    artefact = build("mlm", "micro", tmp_path, log=lambda _: None)
    path = artefact.path
    assert path == tmp_path / "micro" / "mlm" and artefacts.verify(path, "mlm")["steps"] == 4
    meta = read_json(path / "meta.json")
    assert meta["steps"] == 4
    assert artefact.figures == {"top1": meta["held_out"]["top1"], "top10": meta["held_out"]["top10"]}
    assert 0.0 <= meta["held_out"]["top1"] <= meta["held_out"]["top10"] <= 1.0
    base_size = (minilm.base_model_dir() / "model.safetensors").stat().st_size
    assert (path / "mlm_delta.safetensors").stat().st_size < 0.3 * base_size  # head + fp16 layers, not the whole model
    suggester = SUGGESTERS.create("minilm-offline", path=path)
    (slots,) = suggester.suggest(["the movie was [MASK] ."], top_k=10)
    assert len(slots[0]) == 10 and all(not w.startswith("##") and w.isalpha() for w, _ in slots[0])


@pytest.mark.slow
def test_built_minilm_head_fills_sentiment_slot():
    from alict_core.models.artefacts import is_built

    if not is_built("mlm"):
        pytest.skip("MiniLM MLM head not built: run `python -m alict_core build mlm`")
    suggester = get_suggester("minilm-offline")
    (slots,) = suggester.suggest(["the movie was [MASK] and i loved it ."], top_k=10)
    words = [w for w, _ in slots[0]]
    assert {"good", "great", "fun", "funny", "wonderful", "excellent", "beautiful", "amazing"} & set(words), words
