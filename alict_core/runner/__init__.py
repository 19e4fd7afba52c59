"""The test runner: cases as data, cached batched predictions, per-LC × model results."""

from alict_core.cases.testcases import TestCase, build_cases, expected_passes
from alict_core.metrics.intervals import wilson_interval
from alict_core.runner.run import RunCancelled, RunResult, evaluate_case, predict_cached, run_suite
from alict_core.runner.stream import run_streaming

__all__ = ["RunCancelled", "RunResult", "TestCase", "build_cases", "evaluate_case", "expected_passes",
           "predict_cached", "run_streaming", "run_suite", "wilson_interval"]
