"""Human review of generated test cases: store, sampling plans, validity metrics, write-back, interchange."""

from alict_core.review.metrics import cohen_kappa, human_label, krippendorff_alpha, task_stats, validity_metrics
from alict_core.review.sampling import SamplingPlan, cochran_size, draw_sample
from alict_core.review.store import ReviewError, ReviewStore
from alict_core.review.tasks import create_review_task, load_cases, reviewer_queue
from alict_core.review.writeback import drop_rejected, lc_validity, rejected_case_ids

__all__ = ["ReviewError", "ReviewStore", "SamplingPlan", "cochran_size", "cohen_kappa", "create_review_task",
           "draw_sample", "drop_rejected", "human_label", "krippendorff_alpha", "lc_validity", "load_cases",
           "rejected_case_ids", "reviewer_queue", "task_stats", "validity_metrics"]
