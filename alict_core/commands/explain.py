"""``explain``: token contributions and the masking template of a text, or of an LC's pass-to-fail pairs."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from alict_core.commands.args import add_executor_args, executor_options, float_range, int_range
from alict_core.common.errors import AlictError
from alict_core.common.textsafe import printable, printable_frame


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "explain",
        help="explain a prediction (SHAP / LEMNA / LIME contributions + masking template) or an LC's failures",
        description="Either --model NAME --text TEXT (contributions and the Algorithm 2 masking template), "
        "or --results RUN --lc ID (both sides of that LC's pass-to-fail pairs and the recurring template tokens).",
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--text", help="the sentence to explain (needs --model)")
    source.add_argument("--results", help="a saved run: its directory, or a run id under the cache's runs/")
    parser.add_argument("--model", help="with --text: one model written as `run --models` takes it (a registered name, "
                        "or KIND:key=value,... such as http:url=http://127.0.0.1:8000/p,task=sentiment; kinds "
                        "that serve either task need task=...); with --results: the name of the run's model to "
                        "explain (needed when the run has several)")
    parser.add_argument("--trust-pickle", action="store_true",
                        help="with --text: allow a pickle/joblib model (sklearn:path=...): unpickling runs code; "
                        "only for files you created or trust")
    parser.add_argument("--lc", help="LC id whose pass-to-fail pairs to explain (with --results)")
    parser.add_argument("--method", default="lemna", help="explainer: lemna, shap or lime (default lemna)")
    parser.add_argument("--label", default=None, help="label to explain (default: the predicted label)")
    parser.add_argument("--seed", type=int_range(0, 2**32 - 1), default=0, help="random seed (default 0)")
    parser.add_argument("--samples", type=int_range(10, "explain_samples"), default=None,
                        help="perturbations for the explainer (default per method)")
    parser.add_argument("--template-samples", type=int_range(1, "explain_samples"), default=1000,
                        help="N for Algorithm 2 (default 1000)")
    parser.add_argument("--p-thresh", type=float_range(0.0, 1.0), default=0.9,
                        help="fidelity threshold of Algorithm 2 (default 0.9)")
    parser.add_argument("--same-pos", action="store_true", help="G fills a masked word only with words of its POS")
    parser.add_argument("--no-template", action="store_true", help="contributions only")
    parser.add_argument("--max-pairs", type=int_range(1, 10_000), default=10,
                        help="pairs to explain with --results (default 10)")
    add_executor_args(parser, "pairs per shard with --results: the unit of work, progress and resume (default 10)",
                      10)
    parser.add_argument("--json", dest="json_out", default=None, help="also write the full result as JSON here")
    parser.set_defaults(handler=run)


class _ProgressBar:
    """A tqdm bar on stderr, created on the first progress report (nothing is drawn for instant work)."""

    def __init__(self) -> None:
        self.bar: Any = None  # a tqdm bar once work is reported

    def __call__(self, done: int, total: int, stage: str) -> None:
        if self.bar is None:
            from tqdm import tqdm

            self.bar = tqdm(total=total, leave=False, unit="step")
        self.bar.total = total
        self.bar.n = done
        self.bar.set_description(stage[:60])
        self.bar.refresh()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def _say(line: str) -> None:
    """One line of output: texts, tokens and LC ids from a run or a file, control characters escaped."""
    print(printable(line))


def _print_contributions(contrib, template, inserted: set[int] | None = None, title: str = "") -> None:
    probs = ", ".join(f"{label} {p:.3f}" for label, p in zip(contrib.labels, contrib.proba, strict=True))
    _say(f"{title}{contrib.text}")
    _say(f"  predicted {contrib.predicted} ({probs}); {contrib.method} contributions towards {contrib.label}:")
    kept = set(template.kept_positions) if template else set()
    for i, (token, score) in enumerate(zip(contrib.tokens, contrib.scores, strict=True)):
        marks = ("+inserted " if inserted and i in inserted else "") + ("kept" if i in kept else "")
        _say(f"    {i:>3} {token:<20} {score:+.4f}  {marks}")
    if template:
        curve = " ".join(f"{f:.2f}" for f in template.fidelity_curve)
        _say(f"  template: {template.template}")
        _say(f"  fidelity curve: {curve}  (p_thresh {template.p_thresh}, {template.samples_used} samples, "
              f"seed {template.seed})")


def _resolve_run(value: str) -> Path:
    from alict_core.runner.store import is_folder, saved_run_dir

    path = Path(value)
    if is_folder(path):
        return path
    if "/" in value or "\\" in value:
        raise AlictError(f"run folder {value!r} not found (give a saved run's folder or its run id)")

    return saved_run_dir(value)  # a validated run id inside the run store, whose folder holds that run


def text_model(text: str, trust_pickle: bool = False) -> Any:
    """The one model of ``--model`` with ``--text``, in the syntax of ``run --models`` (``ModelRef``): a registered
    name, or ``KIND:key=value,...``; a kind that serves either task needs ``task=`` (explain has no ``--task``)."""
    from alict_core.models.refs import checked_ref, parse_model_refs
    from alict_core.models.registry import model_entry
    from alict_core.tasks import TASK_NAMES

    refs = parse_model_refs(text, "--model")
    if len(refs) != 1:  # the text redacted: it may hold api_key=, headers= or a URL's password (pass 39)
        raise AlictError(f"--model {shown_spec(text)} names {len(refs)} models; explain takes one")
    ref = refs[0]
    if model_entry(ref.name).tags.get("kind") == "static":  # was "no stored prediction for 16 texts" (pass 37)
        raise AlictError(f"--model {ref.name}: stored predictions answer only the texts stored in their file, and an "
                         "explanation asks the model about perturbed copies of the text: explain the model that "
                         "made the predictions instead")
    task = model_entry(ref.name).tags.get("task") or ref.kwargs.get("task")
    if task not in TASK_NAMES:
        raise AlictError(f"--model {ref.name}: this kind serves either task; add task=<{'|'.join(TASK_NAMES)}>, "
                         f"e.g. {ref.name}:task={TASK_NAMES[0]},... (the other arguments as `run --models` takes them)")
    return checked_ref(ref, str(task), trust_pickle=trust_pickle, option="--model").build()


def _explain_text(args: argparse.Namespace, template_options: dict[str, Any], progress: _ProgressBar) -> dict:
    """``--text``: the contributions and masking template of one text, printed; the JSON result. The whole command is
    one run scope, so an endpoint's ``max_requests`` caps the command's requests (it capped each of the explainer's
    many calls: 91 requests were sent under max_requests=60; pass 39)."""
    from alict_core.explain import CachedModel, explain, masking_template
    from alict_core.models.run_scope import run_scope

    if not args.model:
        raise AlictError("--text needs --model NAME (or KIND:key=value,..., as `run --models` takes it)")
    model = CachedModel(text_model(args.model, args.trust_pickle))
    with run_scope():
        contrib = explain(model, args.text, method=args.method, label=args.label, seed=args.seed,
                          n_samples=args.samples, progress=progress)
        template = None if args.no_template else masking_template(model, args.text, contrib, progress=progress,
                                                                  **template_options)
    progress.close()
    _print_contributions(contrib, template)
    return {"contributions": contrib.to_dict(), "template": template.to_dict() if template else None}


def run(args: argparse.Namespace) -> int:
    from alict_core.commands.args import model_input_paths
    from alict_core.common.manifest import check_output_file
    from alict_core.explain import recurring_template_tokens

    check_output_file(args.json_out, "--json", model_input_paths(getattr(args, "model", None), "--model"))
    template_options = {"p_thresh": args.p_thresh, "n_samples": args.template_samples, "seed": args.seed,
                        "same_pos": args.same_pos}
    progress = _ProgressBar()
    try:
        if args.text is not None:
            result: dict[str, Any] = _explain_text(args, template_options, progress)
        else:
            if not args.lc:
                raise AlictError("--results needs --lc ID")
            if args.trust_pickle:  # the run's own models are re-loaded as the run recorded them
                raise AlictError("--trust-pickle applies to --text --model; with --results drop it")
            from alict_core.executors import get_executor
            from alict_core.explain.explainers import EXPLAINERS
            from alict_core.explain.sharded import explain_failures_sharded

            EXPLAINERS.entry(args.method)  # before any shard is written (a bad name left a shard folder behind)
            run_dir = _resolve_run(args.results)
            _check_label(run_dir, args.label)
            _check_model_named(run_dir, args.model)
            pool = get_executor(args.executor, args.workers, **executor_options(args))
            try:
                explained = explain_failures_sharded(
                    run_dir, args.lc, model_name=args.model, max_pairs=args.max_pairs,
                    progress=progress, executor=pool, workers=args.workers, shard_size=args.shard_size,
                    method=args.method, seed=args.seed, n_samples=args.samples, label=args.label,
                    templates=not args.no_template, p_thresh=args.p_thresh, template_samples=args.template_samples,
                    same_pos=args.same_pos,
                )
            finally:
                pool.close()
            progress.close()
            if not explained.pairs:
                _say(f"LC {args.lc}: no pass-to-fail pairs in this run")
            pairs = []
            for number, pair in enumerate(explained.iter_pairs(), 1):
                _say(f"== pair {number}: {pair.meta.get('model')} seed {pair.meta.get('seed_predicted')} → "
                      f"expansion {pair.meta.get('predicted')} (expected {pair.meta.get('expected')})")
                _print_contributions(pair.seed, pair.seed_template, title="  seed:      ")
                _print_contributions(pair.expansion, pair.expansion_template, set(pair.inserted), title="  expansion: ")
                pairs.append(pair)
            templates = [p.expansion_template for p in pairs if p.expansion_template]
            table = recurring_template_tokens(templates)
            if len(table):
                _say(f"== tokens kept in the templates of {len(templates)} failing expansions of {args.lc}")
                print(printable_frame(table[["token", "templates", "share", "occurrences"]]).to_string(index=False))
            result = {"lc_id": args.lc, "pairs": [p.to_dict() for p in pairs],
                      "recurring_tokens": table.drop(columns=["examples"]).to_dict(orient="records")}
    finally:
        progress.close()
    if args.json_out:
        from alict_core.common.jsonl import write_json

        write_json(Path(args.json_out), result)
        print(f"wrote {args.json_out}")
    return 0


def _check_model_named(run_dir: Path, model: str | None) -> None:
    """``--model`` names one of the run's models; a run of several needs it (the first model was explained without
    a word, while the help said "the run's model"; pass 37)."""
    from alict_core.common.jsonl import read_json
    from alict_core.models.registry import model_entry

    try:
        meta = read_json(Path(run_dir) / "meta.json")
        names = [str(m["name"]) for m in meta["models"]]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return  # a damaged run is named by the explanation that reads it
    shown = ", ".join(repr(name[:60]) for name in names[:10])
    if model is None and len(names) > 1:
        raise AlictError(f"the run has {len(names)} models ({shown}); name the one to explain with --model")
    service = [str(m.get("name")) for m in meta["models"] if isinstance(m, dict) and m.get("answers_change")]
    if (model if model is not None else names[0] if len(names) == 1 else None) in service:
        raise AlictError(f"model {(model or names[0])[:60]!r} of the run is a service (an endpoint): its pairs are not "
                         "explained from a run (the service may have changed since); explain one text with `explain "
                         "--text TEXT --model <its endpoint spec>`")
    if model is None or not names or model in names:
        return
    try:
        of_task = model_entry(model).tags.get("task")
    except AlictError:
        of_task = None
    run_task = (meta.get("extra") or {}).get("task") if isinstance(meta.get("extra"), dict) else None
    if of_task is None or of_task == run_task:  # another task's model (or an unknown run task): said with the LC's
        raise AlictError(f"--model {shown_spec(model)} is not a model of the run ({shown})")


def shown_spec(text: str) -> str:
    """A ``--model`` value as a message may show it: ``models.refs.redacted`` (no api_key, header value, URL password
    or query: passes 38, 39), cut after redaction to 120 characters."""
    from alict_core.models.refs import redacted

    said = redacted(text)
    return repr(said if len(said) <= 120 else said[:119] + "…")


def _check_label(run_dir: Path, label: str | None) -> None:
    """``--label`` is one of the run's models' labels (checked before any work)."""
    if label is None:
        return
    from alict_core.common.jsonl import read_json

    try:
        labels = {str(x) for m in read_json(Path(run_dir) / "meta.json")["models"] for x in m.get("labels") or []}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return  # a damaged run is named by the explanation that reads it
    if labels and label not in labels:
        raise AlictError(f"--label {label[:40]!r} is not a label of the run's models ({', '.join(sorted(labels))})")
