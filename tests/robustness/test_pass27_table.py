"""Pass 27 rows: the pass-26 leftovers taken up, and what the pass-27 helpers found (fixed by the lead); each failed
before its fix."""

from __future__ import annotations

import json

import pytest


def test_p27_left_1_a_repeated_item_in_a_link_filter_is_one_chip():
    """Was: `?kind=seed,seed` drew two equal "seeds" chips in the Failures filter."""
    from alict_app.view_state import decode_list

    assert decode_list("seed,seed,expansion,seed") == ["seed", "expansion"]
    assert decode_list(["vader", "vader"]) == ["vader"]


@pytest.mark.parametrize("control", ["\x1b[31m", "\x07", "\u202e", "\x85"])
def test_p27_left_2_a_control_character_in_an_error_is_shown_escaped(control):
    """Was: a typed server path holding a control character (a terminal escape, a bidi override) was echoed raw in
    the page's error ("baseline suite …a\\x1b[31mb.json not found")."""
    from streamlit.testing.v1 import AppTest

    def page(control: str) -> None:
        from alict_app.guard import guarded
        from alict_core.common.errors import AlictError

        with guarded("importing the baseline suite"):
            raise AlictError(f"baseline suite a{control}b.json not found\nsecond line")

    app = AppTest.from_function(page, kwargs={"control": control}, default_timeout=60).run()
    shown = app.error[0].value
    escape = control.encode("unicode_escape").decode("ascii")  # as Markdown source: the backslash escaped
    assert control not in shown and escape.replace("\\", "\\\\").replace("[", "\\[") in shown
    assert "second line" in shown


def test_p27_left_3_a_killed_request_json_write_leaves_no_temporary_file(tmp_path, own_cache):
    """Was: a run killed while writing request.json after its seal left `.request.json.<token>.tmp` in the run
    folder for good: the next press found the run finished and never wrote request.json again."""
    from alict_core.common.jsonl import is_own_temp_file, new_temp_file
    from alict_core.runner.stream import run_streaming
    from tests.robustness.support import small_cases

    cases = small_cases(3)
    folder = run_streaming(cases, ["vader"], root=tmp_path / "runs", extra_files={"request.json": {"who": "a"}})
    left = new_temp_file(folder / "request.json")  # what the killed write left
    left.write_text('{"who": "a"')
    assert is_own_temp_file(left)
    again = run_streaming(cases, ["vader"], root=tmp_path / "runs", extra_files={"request.json": {"who": "b"}})
    assert again == folder and not left.exists()
    assert json.loads((folder / "request.json").read_text()) == {"who": "a"}  # the run's own record is kept
