"""One settings object for NLPLego generation, read by the CLI, the app page and the benchmark."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class LegoSettings(BaseModel):
    """Budget and knobs of one NLPLego run (every field has the documented default)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    breadth: int = Field(
        default=3, ge=1, le=20, description="children per node and level: the original adjunct + mutations"
    )
    max_nodes: int = Field(default=30, ge=1, le=2000, description="nodes per derivation tree, root included")
    max_adjuncts: int = Field(
        default=6, ge=0, le=20, description="adjuncts removed per seed (later ones stay in the template)"
    )
    synonyms_per_word: int = Field(default=3, ge=0, le=20, description="WordNet synonyms tried per content word")
    mlm_top_k: int = Field(
        default=5, ge=0, le=50, description="masked-LM fills tried per content word (0: no masked LM)"
    )
    threshold: float = Field(
        default=0.1, ge=0.0, le=1.0, description="DIR tolerance on the watched label's probability"
    )
    seed: int = Field(default=0, ge=0, le=2**32 - 1, description="random seed for the choice of mutated words")
    use_constituency: bool = Field(
        default=True, description="also take SBAR clauses from the project's constituency parser"
    )
