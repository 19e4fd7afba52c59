"""The task registry (alict_core.tasks) and ``--task`` of every command."""

from __future__ import annotations

import argparse
import ast
from pathlib import Path

import pytest

from alict_core.cli import build_parser
from alict_core.data.records import TASK_LABELS
from alict_core.tasks import HATE_SPEECH, SENTIMENT, TASK_NAMES, TASKS, add_task_arg, task_list

COMMANDS = Path(__file__).resolve().parent.parent / "alict_core" / "commands"


def task_actions(parser: argparse.ArgumentParser, path: str = "") -> dict[str, argparse.Action]:
    """Command path → its ``--task`` action, over every (sub)command of ``parser``."""
    found: dict[str, argparse.Action] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found.update(task_actions(sub, f"{path} {name}".strip()))
        elif "--task" in action.option_strings and action.dest == "task":
            found[path] = action
    return found


def test_registry_holds_both_tasks_with_their_labels_and_corpora() -> None:
    assert TASK_NAMES == ("sentiment", "hate_speech")
    assert TASKS["sentiment"] is SENTIMENT and TASKS["hate_speech"] is HATE_SPEECH
    assert SENTIMENT.labels == ("negative", "neutral", "positive")
    assert HATE_SPEECH.labels == ("non-hateful", "hateful")
    assert (SENTIMENT.corpus, HATE_SPEECH.corpus) == ("sst", "hatexplain")
    for task in TASKS.values():
        assert task.default_label in task.labels
        assert TASK_LABELS[task.name] == task.labels
    assert task_list() == "sentiment, hate_speech"
    with pytest.raises(AttributeError):
        SENTIMENT.name = "other"  # type: ignore[misc]


def test_add_task_arg_offers_the_task_names(capsys: pytest.CaptureFixture[str]) -> None:
    parser = argparse.ArgumentParser(prog="p", exit_on_error=False)
    add_task_arg(parser, help="which task")
    assert parser.parse_args([]).task is None
    assert parser.parse_args(["--task", "hate_speech"]).task == "hate_speech"
    assert "{sentiment,hate_speech}" in parser.format_help() and "which task" in parser.format_help()
    with pytest.raises(argparse.ArgumentError, match="invalid choice: 'topic'"):
        parser.parse_args(["--task", "topic"])
    required = argparse.ArgumentParser(prog="q")
    add_task_arg(required, required=True)
    with pytest.raises(SystemExit):
        required.parse_args([])
    assert "the following arguments are required: --task" in capsys.readouterr().err


def test_every_command_with_a_task_option_declares_it_with_add_task_arg() -> None:
    actions = task_actions(build_parser())
    assert {"run", "seeds", "expand", "validate", "fidelity", "lego", "report", "review sample",
            "review writeback", "harden versions"} <= set(actions)
    for path, action in actions.items():
        assert action.choices == list(TASK_NAMES), path
    for source in sorted(COMMANDS.glob("*.py")):
        for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr == "add_argument" and node.args \
                    and isinstance(node.args[0], ast.Constant) and node.args[0].value == "--task":
                dests = [k.value.value for k in node.keywords if k.arg == "dest" and isinstance(k.value, ast.Constant)]
                assert dests and dests[0] != "task", f"{source.name}:{node.lineno} declares --task by hand"


def test_a_task_outside_the_registry_is_refused_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        build_parser().parse_args(["seeds", "--task", "topic"])
    assert exit_info.value.code == 2
    assert "invalid choice: 'topic' (choose from 'sentiment', 'hate_speech')" in capsys.readouterr().err
