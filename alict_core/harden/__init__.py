"""Close the loop: export generated cases as training data, register retrained versions, prove the fix per LC.

Runtime side only (export, versions, evaluation); the fitting itself lives in ``alict_core.training.retrain``.
"""

from alict_core.harden.split import SplitRatios, split_cases, training_label, training_labels

__all__ = ["SplitRatios", "split_cases", "training_label", "training_labels"]
