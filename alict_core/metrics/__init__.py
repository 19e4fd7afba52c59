"""Suite metrics: Self-BLEU, syntactic diversity, neuron coverage (BoundCov / SActCov)."""

from alict_core.metrics.coverage import NeuronBounds, activations, fit_bounds, neuron_coverage, training_split_bounds
from alict_core.metrics.diversity import syntactic_diversity, texts_syntactic_diversity
from alict_core.metrics.selfbleu import self_bleu
from alict_core.metrics.suite import suite_metrics

__all__ = ["NeuronBounds", "activations", "fit_bounds", "neuron_coverage", "self_bleu", "suite_metrics",
           "syntactic_diversity", "texts_syntactic_diversity", "training_split_bounds"]
