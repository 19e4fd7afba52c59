"""``review``: human review of generated cases — sample a review task, export / import, validity statistics."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

from alict_core.commands.args import DefaultInt, float_range, int_range
from alict_core.common.errors import AlictError
from alict_core.common.textsafe import printable
from alict_core.tasks import add_task_arg


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "review", help="human review of test cases: sample, export, import, stats",
        description="Sample cases of a run for people to judge (LC relevance, label, expansion validity), "
        "exchange them as CSV/JSONL and compute LabelCons / LCRel / ExpValidity with agreement. "
        "Database: $ALICT_REVIEW_DB_URL or a SQLite file under the cache directory.",
    )
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--db", default=None, help="SQLAlchemy URL of the review database "
                        "(default: $ALICT_REVIEW_DB_URL or <cache>/review/review.sqlite)")
    sub = parser.add_subparsers(dest="review_command", metavar="SUBCOMMAND", required=True)

    sample = sub.add_parser("sample", parents=[common],
                            help="draw a stratified, seeded sample of a run's cases into a new review task")
    sample.add_argument("--name", required=True, help="name of the new review task")
    add_task_arg(sample, required=True)
    sample.add_argument("--cases", default=None,
                        help="run directory, run id or cases .jsonl (default: the most recent run of --task)")
    sample.add_argument("--confidence", type=float_range(0.0, 1.0, open_interval=True), default=0.95)
    sample.add_argument("--margin", type=float_range(0.001, 0.999), default=0.05,  # 1e-300 divided by zero
                        help="margin of error of the sample size (0.001 to 0.999; default 0.05)")
    sample.add_argument("--size", type=int_range(1, 1_000_000), default=None,
                        help="fixed number of seeds instead of the size rule")
    sample.add_argument("--sets", type=int_range(1, 10_000), default=DefaultInt(10),
                        help="number of sets the sample is split into")
    sample.add_argument("--k", type=int_range(1, 1_000), default=2, help="reviewers per case")
    sample.add_argument("--seed", type=int_range(0, 2**32 - 1), default=0)
    sample.add_argument("--reviewers", default=None, help="comma-separated reviewer names to assign sets to now")
    sample.set_defaults(handler=_foreign_schema(run_sample))

    export = sub.add_parser("export", parents=[common], help="write a task's cases (or its judgements) as CSV/JSONL")
    export.add_argument("name", help="review task")
    export.add_argument("--out", required=True, help="file to write (.csv or .jsonl)")
    export.add_argument("--format", choices=["csv", "jsonl"], default=None)
    export.add_argument("--judgements", action="store_true", help="export saved judgements instead of empty forms")
    export.set_defaults(handler=_foreign_schema(run_export))

    imp = sub.add_parser("import", parents=[common],
                         help="read judgements from CSV/JSONL (columns as written by export)")
    imp.add_argument("file")
    imp.add_argument("--task", dest="name", default=None, help="review task (default: the file's task column)")
    imp.add_argument("--format", choices=["csv", "jsonl"], default=None)
    imp.set_defaults(handler=_foreign_schema(run_import))

    stats = sub.add_parser("stats", parents=[common],
                           help="LabelCons, LCRel, ExpValidity (95 %% intervals) and agreement of a task")
    stats.add_argument("name", nargs="?", default=None, help="review task (default: every task)")
    stats.add_argument("--json", action="store_true", help="print JSON")
    stats.set_defaults(handler=_foreign_schema(run_stats))

    writeback = sub.add_parser(
        "writeback", parents=[common],
        help="show which cases later runs will leave out; --confirm turns the write-back on",
        description="A case is rejected when at least --min-agreeing reviewers (default 2), a strict majority of "
        "its reviewers, give a label that disagrees with its expectation or a relevance of 2 or less; the "
        "expansions of a rejected seed go with it. Runs exclude nothing until the write-back is confirmed.")
    add_task_arg(writeback, required=True)
    writeback.add_argument("--min-agreeing", type=int_range(1, 100), default=None,  # store.MAX_MIN_AGREEING
                           help="reviewers who must agree to reject a case (default: the confirmed rule's, else 2)")
    action = writeback.add_mutually_exclusive_group()
    action.add_argument("--confirm", action="store_true", help="turn the write-back on with this rule")
    action.add_argument("--revoke", action="store_true", help="turn the write-back off (runs exclude nothing)")
    writeback.add_argument("--by", default=None, help="who confirms (recorded; with --confirm)")
    writeback.add_argument("--json", action="store_true", help="print JSON")
    writeback.set_defaults(handler=_foreign_schema(run_writeback))


DB_SUFFIXES = (".sqlite", ".sqlite3", ".db")  # an empty file of another name is a user's file, not a database
RUN_ID_FORM = re.compile(r"[0-9a-f]{8,64}")  # a run id of the run store (as `report`, `compare` take one)


def _store(args: argparse.Namespace, read_only: bool = False):
    """The review store of ``--db``; ``read_only`` for commands that only read (they never write to it)."""
    from alict_core.review import ReviewStore
    from alict_core.review.store import ReviewError, default_url, safe_url, sqlite_path

    url = args.db or default_url()  # $ALICT_REVIEW_DB_URL is guarded like --db (it got around the pass-25 check)
    what = "--db" if args.db else "$ALICT_REVIEW_DB_URL"
    path = sqlite_path(url) if url else None
    if read_only and path is not None and not path.exists() and args.db:  # a mistyped --db read as an empty store
        raise ReviewError(f"--db {safe_url(args.db)}: no such SQLite file ({str(path)!r}); give the review "
                          "database's path (`review sample` creates one)")
    if not read_only and path is not None and not path.exists():  # a new database is an output like any other
        from alict_core.common.manifest import check_new_database

        check_new_database(path, what)
    if path is not None and path.is_file() and path.stat().st_size == 0 and path.suffix.lower() not in DB_SUFFIXES:
        raise ReviewError(f"{what} {safe_url(url)}: {path.name!r} is an empty file, not a review database (SQLite "
                          "would take it over); give a database file (.sqlite, .db) or a new name")
    return ReviewStore(args.db, read_only=read_only)


def _foreign_schema(handler):
    """A database error while using the review database is that database's fault: one clear line, exit 2."""
    import functools

    @functools.wraps(handler)
    def checked(args: argparse.Namespace) -> int:
        from sqlalchemy.exc import DataError, SQLAlchemyError

        from alict_core.review.store import ReviewError, check_sqlite_url, default_url, safe_url

        check_sqlite_url(args.db or default_url())  # before any use of its file name (a '%00' in it: exit 3)
        try:
            return handler(args)
        except DataError as exc:  # a value the database refused: the input's fault, not the database's
            reason = str(getattr(exc, "orig", None) or exc).splitlines()[0][:160]
            raise ReviewError(f"review database {safe_url(args.db or default_url())} refused a value ({reason}); "
                              "check the file's texts and notes") from None
        except SQLAlchemyError as exc:
            reason = str(getattr(exc, "orig", None) or exc).splitlines()[0][:160]
            if "readonly database" in reason:  # the file (or its -wal/-shm) is not writable: not a foreign database
                raise ReviewError(f"review database {safe_url(args.db or default_url())} is read-only ({reason}); "
                                  "make the file (and its -wal/-shm files) writable or give --db another "
                                  "database") from None
            if "malformed" in reason:  # a damaged page: the database's own damage, not another application's
                raise ReviewError(f"review database {safe_url(args.db or default_url())} is damaged ({reason}); "
                                  "restore it from a backup, or pass --db with another review database") from None
            raise ReviewError(f"review database {safe_url(args.db or default_url())} cannot be used ({reason}); "
                              "if it is another application's database or another version's, pass --db with a new "
                              "or own review database") from None

    return checked


def _refuse_missing_database(args: argparse.Namespace, empty_too: bool = False) -> None:
    """A command that needs a review task refuses a SQLite database that does not exist (a mistyped --db was
    created and migrated; a failed command's new database is never removed again: another may use it meanwhile);
    ``empty_too``: an empty (zero-byte) file alike (it holds no task; a refused import wrote the schema into it)."""
    from alict_core.review.store import default_url, safe_url, sqlite_path

    url = args.db or default_url()
    path = sqlite_path(url)
    if path is not None and not path.exists():
        raise AlictError(f"no review database at {safe_url(url)} (nothing was created); check --db, or create "
                         "one with `review sample`")
    if empty_too and path is not None and path.is_file() and path.stat().st_size == 0:
        raise AlictError(f"no review database at {safe_url(url)}: {path.name!r} is an empty file, with no review "
                         "task in it (it was left as it is); check --db, or create a task in it with `review sample`")


def reviewer_list(text: str | None) -> list[str]:
    """``--reviewers a,b``: every entry a reviewer name, none blank, none twice (checked before any work)."""
    from alict_core.review.store import check_reviewers

    if text is None:  # not given: nobody assigned now
        return []
    if not text:  # `--reviewers ''` was a task with nobody assigned, without a word (a blank name: said below)
        raise AlictError("--reviewers is empty; give reviewer names (--reviewers ann,bob), or leave --reviewers out "
                         "to assign the sets later")
    return check_reviewers(text.split(","), "--reviewers")


def _cases_source(given: str | None, task: str) -> Path:
    """``--cases``: a run folder, a cases .jsonl, or a run id of the run store (as `report` and `compare` take it);
    the newest saved run of ``task`` when not given (the newest of any task was taken: pass 39)."""
    from alict_core.runner.store import saved_run_dir

    if not given:
        from alict_core.review.tasks import recorded_task
        from alict_core.runner.store import list_runs

        runs = list_runs()
        found = next((run for run in reversed(runs) if recorded_task(run) in (task, None)), None)
        if found is None:
            raise AlictError(f"no saved run of task {task}" + (f" (the saved runs are of task "
                             f"{', '.join(sorted({str(recorded_task(run)) for run in runs}))})" if runs else "")
                             + f"; run `python -m alict_core run --task {task} ...` first or give --cases")
        return found
    path = Path(given)
    if not path.exists() and RUN_ID_FORM.fullmatch(given):
        return saved_run_dir(given, "--cases")
    return path


def _say_lowered(args: argparse.Namespace, summary: dict[str, Any]) -> None:
    """Warn when the sample is smaller than asked: ``--size`` above the seeds there are, ``--sets`` above the seeds
    sampled (each set holds one seed at least); both were lowered without a word."""
    import sys

    if args.size is not None and args.size > summary["n_seeds"]:
        print(f"warning: --size {args.size}: the cases hold {summary['population']} seed(s); all "
              f"{summary['n_seeds']} are sampled", file=sys.stderr)
    if args.sets > summary["n_sets"] and not isinstance(args.sets, DefaultInt):  # the default: lowered quietly
        print(f"warning: --sets {args.sets}: {summary['n_seeds']} seed(s) sampled make {summary['n_sets']} set(s) "
              "(a set holds one seed at least)", file=sys.stderr)


def run_sample(args: argparse.Namespace) -> int:
    from alict_core.review import SamplingPlan, create_review_task, load_cases
    from alict_core.review.store import check_task_name

    check_task_name(args.name)  # the name is said first, then the reviewers, all before the cases are read
    reviewer_list(args.reviewers)
    source = _cases_source(args.cases, args.task)
    cases = load_cases(source)
    plan = SamplingPlan(confidence=args.confidence, margin=args.margin, size=args.size, n_sets=args.sets, k=args.k,
                        seed=args.seed)
    reviewers = reviewer_list(args.reviewers)
    # the database is opened (a new one created) once every input is checked: a refused task writes nothing
    task, summary = create_review_task(lambda: _store(args), args.name, args.task, cases, plan, reviewers)
    print(f"review task {task.name!r}: {summary['n_seeds']} seeds + {summary['n_expansions']} expansions "
          f"from {summary['population']} seeds of {source}, {summary['n_sets']} sets × {args.k} reviewers")
    _say_lowered(args, summary)
    return 0


def run_export(args: argparse.Namespace) -> int:
    from alict_core.common.manifest import check_output_file
    from alict_core.review.interchange import export_task
    from alict_core.review.store import default_url, sqlite_path

    database = sqlite_path(args.db or default_url())
    if database is not None:  # the export would replace the review database itself (or its journal)
        out = Path(args.out).resolve()
        if out.parent == database.resolve().parent and out.name.startswith(database.name):
            raise AlictError(f"--out {args.out!r} is the review database (or its journal); write the export "
                              "elsewhere")
    check_output_file(args.out, "--out")  # after: the message naming this command's own database comes first
    n = export_task(_store(args, read_only=True), args.name, args.out, args.format, judgements=args.judgements)
    print(f"wrote {n} rows to {args.out}")
    return 0


def run_import(args: argparse.Namespace) -> int:
    from alict_core.review.interchange import import_judgements, read_judgements

    rows = read_judgements(args.file, args.format)  # the file is checked before the database is opened
    _refuse_missing_database(args, empty_too=True)  # judgements belong to a task of an existing database
    n = import_judgements(_store(args), args.file, task_name=args.name, rows=rows)
    print(f"imported {n} judgements from {args.file}")
    return 0


def _fmt(metric: dict[str, Any]) -> str:
    if metric["value"] is None:
        return "–"
    return f"{metric['value']:.3f} [{metric['ci_low']:.3f}, {metric['ci_high']:.3f}] n={metric['n']}"


def _num(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def run_stats(args: argparse.Namespace) -> int:
    from alict_core.review import task_stats
    from alict_core.review.metrics import describe_kappa

    store = _store(args, read_only=True)
    tasks = [store.task(args.name)] if args.name else store.tasks()
    if not tasks:
        raise AlictError("no review tasks yet; create one with `review sample`")
    out = {t.name: {"suite_task": t.suite_task, "n_sampled": store.count_items(t.id),
                    **task_stats(store.judgements(t.id), t.suite_task)} for t in tasks}
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    for name, stats in out.items():
        agree = stats["agreement"]
        print(f"{name} ({stats['suite_task']}): {stats['n_sampled']} cases sampled, {stats['n_cases']} of them judged "
              f"({stats['n_judgements']} judgements by {len(stats['reviewers'])} reviewer(s)); metrics per judged "
              "case (n = cases), 95 % Wilson intervals")
        for part in ("seed", "expansion", "overall"):
            m = stats[part]
            print(f"  {part:<9} LabelCons {_fmt(m['label_cons'])} | LCRel {_fmt(m['lc_rel'])} | "
                  f"ExpValidity {_fmt(m['exp_validity'])}")
        print(f"  agreement on {agree['n_shared']} shared cases: {describe_kappa(agree)}, "
              f"Krippendorff's alpha (label) {_num(agree['krippendorff_alpha_label'])}")
        for lc, m in stats["per_lc"].items():
            print(f"  {lc:<22} LabelCons {_fmt(m['all']['label_cons'])} | LCRel {_fmt(m['all']['lc_rel'])}")
    return 0


def run_writeback(args: argparse.Namespace) -> int:
    from alict_core.review.writeback import check_min_agreeing, writeback_status

    if args.min_agreeing is not None:
        check_min_agreeing(args.min_agreeing)
    if args.by is not None:
        from alict_core.review.store import check_name

        if not args.confirm:  # else given and silently not recorded
            raise AlictError("--by names who confirms the write-back: give it with --confirm")
        check_name(args.by, "--by (who confirms)", 100)
    # a write-back rule belongs to a database that holds judgements: a mistyped --db is refused, never created (and
    # migrated) as a new database, whether the status is shown, confirmed or revoked
    showing = not (args.confirm or args.revoke)
    _refuse_missing_database(args, empty_too=not showing)  # a rule is never the first thing in an empty file
    store = _store(args, read_only=showing)
    if args.revoke:
        store.revoke_writeback(args.task)
    if args.confirm:
        current = store.writeback_rule(args.task)
        rule = args.min_agreeing or (current.min_agreeing if current else None)
        from alict_core.review.writeback import DEFAULT_MIN_AGREEING

        store.confirm_writeback(args.task, rule or DEFAULT_MIN_AGREEING, args.by)
    status = writeback_status(args.task, url=store.url, min_agreeing=args.min_agreeing)
    if args.json:
        print(json.dumps(status, indent=2))
        return 0
    in_force = status["rule_in_force"]
    preview = in_force is not None and in_force != status["min_agreeing"]  # a rule shown, not the one runs use
    state = "ON" if status["confirmed"] else "OFF (not confirmed: runs exclude nothing; --confirm turns it on)"
    verb = "are left out of" if status["confirmed"] and not preview else "would be left out of"
    rule = f"at least {status['min_agreeing']} agreeing reviewers, a strict majority"
    print(f"write-back for {args.task}: {state}; " + (
        f"rule in force: at least {in_force} agreeing reviewers; previewing {rule} (--confirm puts it in force)"
        if preview else f"rule: {rule}"))
    print(f"{len(status['rejected'])} rejected case(s) {verb} later {args.task} runs"
          + (f", with every expansion of the {len(status['rejected_seeds'])} rejected seed(s)"
             if status["rejected_seeds"] else "") + (":" if status["rejected"] else "."))
    for row in status["rejected"]:
        print(printable(f"  {row['case_id']} ({row['lc_id']}, {row['kind']}): {row['label_rejections']} of "
                        f"{row['reviewers']} reviewers reject the label, {row['low_relevance_votes']} score relevance "
                        f"<= 2 — {row['text'][:80]}"))  # a text's terminal escapes and bidi characters, escaped
    return 0
