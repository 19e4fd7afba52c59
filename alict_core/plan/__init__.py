"""The one conductor: task + LC selection + options → seeds → expansions → validity → test cases.

The CLI (``run``, ``validate``, ``lego``), the app's Run page and NLPLego all plan their cases here; they only
translate their input into ``PlanOptions`` (and, for the app, ``PlanHooks``: its cached seed search, its own
expansion and progress). ``make_plan`` returns a ``Plan``: the cases, in the order every front door runs them,
with the records a run keeps in its metadata (validity checks, suite import, skipped suite tests).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from alict_core.cases.testcases import TestCase
from alict_core.common.errors import AlictError
from alict_core.plan.inputs import (
    SeedFinder,
    check_expansions_used,
    corpus_seed_finder,
    describe_seeds,
    file_seeds,
    lc_seeds,
    read_expansion_rows,
    selected_specs,
    wanted_seeds,
)

__all__ = ["Plan", "PlanHooks", "PlanOptions", "lc_seeds", "make_plan", "read_expansion_rows"]

Expander = Callable[[Any, list[Any], int, int], list[dict[str, Any]]]  # (spec, seeds, LC index, LCs) → rows
LCStep = Callable[[int, int, Any], None]  # (LC index, LCs, spec)


@dataclass(frozen=True)
class PlanOptions:
    """What to test (the CLI's ``run`` options, the app's run request), read once at the front door."""

    task: str
    lcs: tuple[str, ...] | None = None  # LC ids (any accepted spelling); None: every LC of the task
    seed_files: tuple[str, ...] = ()  # seed JSONL files instead of the corpus search
    expansion_files: tuple[str, ...] = ()  # expansions JSONL files or folders (accepted rows become cases)
    suites: tuple[str, ...] = ()  # suite files run beside (or, with ``no_lcs``, instead of) the LCs
    max_seeds: int | str | None = None  # seeds per LC ("spec" or None: the spec's cap)
    max_suite_items: int | None = None  # a seeded random sample of N items per suite test, stratified by label
    no_lcs: bool = False
    strict: bool = False  # refuse a suite with tests that cannot be imported
    inv_threshold: float | None = None  # CheckList INV threshold of the suites (None: CheckList's 0.1)
    sample_per_lc: int | None = None  # about N cases per LC, whole seed groups
    sample_seed: int = 0
    keep_flagged: bool = False  # keep the cases the validity checks flag


@dataclass(frozen=True)
class PlanHooks:
    """How a front door takes part: its seed search (default: the task's corpus), its own expansion of each LC's
    seeds (accepted rows become cases) and its progress / cancellation around each LC."""

    find_seeds: SeedFinder | None = None
    expand: Expander | None = None
    before_lc: LCStep | None = None
    after_lc: LCStep | None = None


@dataclass(frozen=True)
class Plan:
    """The planned cases and what a run records about them."""

    cases: list[TestCase]
    validity: dict[str, Any] | None = None  # the validity checks' record (``cases.validity.apply_validity``)
    suite_import: dict[str, Any] | None = None  # how the suites were imported (files, INV threshold, sampling)
    skipped: list[dict[str, Any]] = field(default_factory=list)  # suite tests that could not be imported
    lc_ids: tuple[str, ...] = ()  # the LCs asked for (ids of the specs run), in run order
    no_cases: dict[str, str] = field(default_factory=dict)  # LC id -> why it has no case in the plan
    task: str | None = None  # the task the cases are of (a run records it: LC ids need not name it)

    def lcs_not_run(self, ran: Iterable[str]) -> dict[str, str]:
        """LC id -> why it is not in the run (LCs asked for whose every case was left out): said, never dropped
        silently. An LC with cases in the plan but none in the run lost them to the reviewers' rejections."""
        ran = set(ran)
        return {lc: self.no_cases.get(lc, "every case was left out as rejected by human reviewers")
                for lc in self.lc_ids if lc not in ran}

    def run_extra(self) -> dict[str, Any]:
        """The records a run keeps in its metadata's ``extra`` (only those that are set)."""
        extra: dict[str, Any] = {"task": self.task} if self.task else {}
        if self.skipped:
            extra["skipped_tests"] = self.skipped
        if self.validity:
            extra["validity"] = self.validity
        if self.suite_import:
            extra["suite_import"] = self.suite_import
        return extra


def make_plan(options: PlanOptions, *, specs: Mapping[str, Any] | None = None,
              hooks: PlanHooks = PlanHooks()) -> Plan:
    """The cases of ``options``: LC seeds and expansions with the validity checks applied, then the suites'
    cases (and their expansions), then the per-LC sample. ``specs`` (LC id → spec, in run order): the LCs to
    run as the caller holds them (the app's edited specs); default the task's shipped LCs of ``options.lcs``."""
    expansions = read_expansion_rows(options.expansion_files, options.task, suite_lcs=bool(options.suites))
    cases: list[TestCase] = []
    validity = None
    lc_ids: tuple[str, ...] = ()
    no_cases: dict[str, str] = {}
    if not options.no_lcs:
        cases, validity, lc_ids, no_cases = _lc_cases(options, specs, hooks, expansions)
    suite_import: dict[str, Any] | None = None
    skipped: list[dict[str, Any]] = []
    if options.suites:
        suite_cases, suite_validity, suite_import, skipped = _suite_cases(options, expansions)
        merged = sorted({c.lc_id for c in cases} & {c.lc_id for c in suite_cases})
        if merged:  # an exported run's cases beside the LC: one rate of both, without the LC's own checks
            raise AlictError(f"--suite: its cases of {merged[0]!r:.60} would be merged with that LC's own seeds into "
                             "one rate; run the suite alone (--no-lcs) or leave that LC out (--lc)")
        cases.extend(suite_cases)
        if suite_validity and not validity:
            validity = suite_validity
    _check_unique_ids(cases)
    if options.sample_per_lc is not None and cases:
        from alict_core.runner.sampling import sample_per_lc

        cases = sample_per_lc(cases, options.sample_per_lc, options.sample_seed)
    return Plan(cases, validity, suite_import, skipped, lc_ids, no_cases, options.task)


def _lc_cases(options: PlanOptions, specs: Mapping[str, Any] | None, hooks: PlanHooks,
              expansions: list[dict[str, Any]]
              ) -> tuple[list[TestCase], dict[str, Any], tuple[str, ...], dict[str, str]]:
    """The LCs' cases with the validity checks applied (flagged ones dropped unless ``keep_flagged``), the LC ids
    run and why an LC has no case (no seed found or given, every case flagged)."""
    from alict_core.cases.testcases import build_cases
    from alict_core.cases.validity import apply_validity
    from alict_core.lcspec import load_task_specs

    wanted = wanted_seeds(expansions)
    file_rows = expansions
    expansions = list(expansions)  # the rows generated here join the LCs' cases, never the suites' expansions
    chosen = dict(specs) if specs is not None else selected_specs(options.task, options.lcs)
    seeds: list[Any] = []
    if options.seed_files:
        max_seeds = options.max_seeds if isinstance(options.max_seeds, int) else None
        seeds = file_seeds(options.task, chosen, options.seed_files, max_seeds, wanted)
    else:
        find = hooks.find_seeds or corpus_seed_finder(options.task)
        for index, spec in enumerate(chosen.values()):
            if hooks.before_lc:
                hooks.before_lc(index, len(chosen), spec)
            found = find(spec, options.max_seeds, wanted.get(spec.id, set()))
            seeds.extend(found)
            if hooks.expand and found:  # generated here: only the accepted rows take part
                expansions.extend(r for r in hooks.expand(spec, found, index, len(chosen)) if r.get("accepted"))
            if hooks.after_lc:
                hooks.after_lc(index, len(chosen), spec)
    seeds = describe_seeds(seeds, chosen)
    task_lcs = {s.id for s in load_task_specs(options.task)} | set(chosen)
    lc_rows = [r for r in file_rows if str(r.get("lc_id")) in task_lcs] if options.suites \
        else file_rows  # beside suites, the rows of their tests are the suites' (checked there; a suite group
    # `sentiment-extra:t1` is a suite's, not an LC's)
    check_expansions_used(lc_rows, seeds, chosen)
    checked = dict(specs) if specs is not None else {s.id: s for s in load_task_specs(options.task)}
    cases, validity = apply_validity(seeds, expansions, build_cases(seeds, expansions), task=options.task,
                                     specs=checked, keep_flagged=options.keep_flagged)
    seeded = {seed["lc_id"] for seed in seeds}
    kept = {case.lc_id for case in cases}
    no_seed = "no seed in the --seeds files" if options.seed_files else "found no seeds in the corpus"
    no_cases = {lc: no_seed if lc not in seeded else "every case was flagged by the validity checks (keep them with "
                "--keep-flagged)" for lc in chosen if lc not in kept}
    return cases, validity, tuple(chosen), no_cases


def _check_unique_ids(cases: list[TestCase]) -> None:
    """One case per id over every source: a suite given twice under two names, or an exported run's cases beside
    the LC seeds they came from, ran each case twice and counted it twice."""
    seen: set[str] = set()
    for case in cases:
        if case.case_id in seen:
            raise AlictError(f"case {case.case_id!r} ({case.lc_id}) comes twice: the same cases were given twice (a "
                             "suite under two names, or a run's exported cases beside the LC seeds they came from); "
                             "give each case once")
        seen.add(case.case_id)


def _suite_cases(options: PlanOptions, expansions: list[dict[str, Any]]
                 ) -> tuple[list[TestCase], dict[str, Any] | None, dict[str, Any], list[dict[str, Any]]]:
    """(cases of the suites and of their expansions, the expansions' validity record, the import record,
    the suite tests that could not be imported)."""
    from alict_core.suites import CHECKLIST_INV_THRESHOLD, read_suite
    from alict_core.suites.checklist import check_inv_threshold
    from alict_core.suites.subsample import SAMPLING, subsample_suite

    given = options.inv_threshold
    inv_threshold = CHECKLIST_INV_THRESHOLD if given is None else check_inv_threshold(given)
    cap = options.max_suite_items
    record = {"files": [Path(s).name for s in options.suites], "inv_threshold": inv_threshold,
              **({"max_items_per_test": cap, "sampling": SAMPLING, "sample_seed": options.sample_seed}
                 if cap is not None else {})}
    cases: list[TestCase] = []
    skipped: list[dict[str, Any]] = []
    validity = None
    lc_of: dict[str, str] = {}  # LC id of a suite test -> the suite file it came from
    ids_of: dict[str, set[str]] = {}  # LC id -> its case ids read so far (the same cases twice: said below)
    for suite in options.suites:
        suite_import = read_suite(suite, options.task, strict=options.strict, inv_threshold=inv_threshold)
        skipped.extend({"suite": Path(suite).name, **item.to_dict()} for item in suite_import.skipped)
        imported = suite_import.cases
        _check_suite_lc_ids(suite, imported, options.task)
        for lc_id in dict.fromkeys(c.lc_id for c in imported):  # a/s.json and b/s.json: both tests were `s:t1`,
            first = lc_of.setdefault(lc_id, str(suite))  # one LC with the two suites' cases and one rate
            own = {c.case_id for c in imported if c.lc_id == lc_id}
            twice = bool(own & ids_of.get(lc_id, set()))  # one suite given twice: "comes twice" (_check_unique_ids)
            ids_of.setdefault(lc_id, set()).update(own)
            if first != str(suite) and not twice:
                raise AlictError(f"--suite {suite}: its test {lc_id!r:.80} is also a test of --suite {first}: its "
                                 "cases would be merged into one rate (a CheckList suite's tests are named after its "
                                 "file name: rename one file; a HateCheck functionality: give it once)")
        if cap is not None:
            imported = subsample_suite(imported, cap, options.sample_seed)
        cases.extend(imported)
        if expansions:  # expansions of the suite's cases (`expand --suite`)
            from alict_core.expansion.suite import suite_expansion_cases

            grown, grown_record = suite_expansion_cases(imported, expansions, options.task, options.keep_flagged)
            cases.extend(grown)
            if grown_record and not validity:
                validity = grown_record
    _check_suite_expansions_used(options, expansions, cases)
    return cases, validity, record, skipped


def _check_suite_lc_ids(suite: str, cases: list[TestCase], task: str) -> None:
    """A suite case that names a shipped LC is that LC's: its capability and test type (a hand-made Vocabulary case
    under `sentiment-lc04` was reported as a Negation result); one naming another task's LC, or one that only looks
    like an LC id (`Sentiment-LC01`, a trailing space), is refused."""
    from alict_core.lcspec import load_task_specs
    from alict_core.tasks import TASK_NAMES

    specs = {spec.id: spec for spec in load_task_specs(task)}
    looks = {" ".join(lc.casefold().split()): lc for lc in specs}
    named: set[str] = set()  # group ids checked already (a suite may hold 500,000 cases of a few groups)
    for case in cases:
        lc_id, where = case.lc_id, f"--suite {suite}: case {case.case_id!r:.60}"
        spec = specs.get(lc_id)
        if spec is not None and (case.capability, case.test_type) != (spec.capability, spec.test_type):
            raise AlictError(f"{where} names the LC {lc_id!r} ({spec.capability}, {spec.test_type}) but is a "
                             f"{case.capability or '(no capability)'} {case.test_type} case; give it another group "
                             "name")
        if lc_id in named:
            continue
        named.add(lc_id)
        other = next((name for name in TASK_NAMES if name != task and ":" not in lc_id  # (a suite file's test:
                      and lc_id.casefold().startswith(f"{name}-")), None)  # `<file stem>:<test>`)
        if other is not None:
            raise AlictError(f"{where} names {lc_id!r:.60}, an LC id of the {other} task, in a {task} run; give it "
                             "another group name")
        if spec is None and " ".join(lc_id.casefold().split()) in looks:
            raise AlictError(f"{where} names {lc_id!r:.60}, which only looks like the LC "
                             f"{looks[' '.join(lc_id.casefold().split())]!r}; write the LC id as it is, or another "
                             "group name")
        if spec is None and (lc_id == "*" or (":" not in lc_id and lc_id.casefold().startswith(f"{task}-"))):
            raise AlictError(f"{where} names {lc_id!r:.60}, which is " + ("the wildcard of --fail-threshold"
                             if lc_id == "*" else f"no LC of the {task} task") + "; give it another group name")
        short = _short_lc_name(task, lc_id) if spec is None else None
        if short is not None:  # `4` was LC4 to --fail-threshold in `run`, the suite group to `report`
            raise AlictError(f"{where} names {lc_id!r:.60}, a short name of the LC {short!r}; give it another "
                             "group name")


def _short_lc_name(task: str, name: str) -> str | None:
    """The LC id ``name`` is a short name of (``4``, ``lc04``, ``LC4``), else None."""
    from alict_core.lcspec import get_spec

    try:
        found = get_spec(task, name).id
    except (AlictError, ValueError):
        return None
    return found if found != name else None


def _check_suite_expansions_used(options: PlanOptions, expansions: list[dict[str, Any]],
                                 suite_cases: list[TestCase]) -> None:
    """Say which accepted expansion rows of the suites' tests no suite case takes (a seed id of no case, or a case
    that cannot be expanded: an INV or DIR one): they were dropped without a word; none taken is an error."""
    import logging

    from alict_core.lcspec import load_task_specs

    task_lcs = {s.id for s in load_task_specs(options.task)}
    rows = [r for r in expansions if r.get("accepted", True) is True
            and str(r.get("lc_id")) not in task_lcs]
    if not rows:
        return
    parents = {c.case_id for c in suite_cases if c.kind == "seed" and c.test_type == "MFT" and not c.variants}
    left = [r for r in rows if str(r.get("seed_id")) not in parents]
    if len(left) == len(rows) and options.no_lcs:
        raise AlictError(f"--expansions: none of the {len(rows):,} accepted row(s) of the suites' tests hangs on an "
                         f"MFT case of the --suite files (e.g. seed_id {str(left[0].get('seed_id'))[:60]!r}); give "
                         "the expansions `expand --suite` wrote for these suites")
    if left:
        logging.getLogger(__name__).warning("--expansions: %d of %d accepted row(s) of the suites' tests left out: "
                                            "their seed is no MFT case of the --suite files (e.g. seed_id %r)",
                                            len(left), len(rows), str(left[0].get("seed_id"))[:60])
