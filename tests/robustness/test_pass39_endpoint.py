"""Pass-38 findings on endpoint runs (fixed after pass 38): each ask of an endpoint is a run of its own, and a
request cap is the whole run's. Each row failed before its fix (see docs/ROBUSTNESS.md "Pass 38")."""

from __future__ import annotations

import json

import pytest

from tests.robustness.support import LoopbackService
from tests.robustness.test_pass37_table import _predicted, _Redeployable


def _seeds(tmp_path, n: int):
    seeds = tmp_path / "seeds.jsonl"
    seeds.write_text("".join(json.dumps({"id": f"s{i}", "lc_id": "sentiment-lc01", "text": f"a fine film {i}",
                                         "test_type": "MFT", "expected": {"kind": "label", "labels": ["positive"]}})
                             + "\n" for i in range(n)))
    return seeds


def _store_runs(cache):
    return sorted(folder for folder in (cache / "runs").iterdir() if not folder.name.startswith("."))


def test_p38_pages_2_a_second_ask_of_an_endpoint_never_rewrites_the_first_run(cli, tmp_path, own_cache):
    """Was (p38pages, low-medium): runs of one endpoint's settings shared one run id, so another visitor's press of
    the same settings re-wrote the first visitor's run under its id (its Failures page changed without a word), and
    the Run page called the fresh ask "loaded from cache" (the id existed before the press). Each ask is now a run of
    its own; the first keeps its answers."""
    service = _Redeployable("positive")
    seeds = _seeds(tmp_path, 3)
    model = f"http:url={service.url},name=svc"
    try:
        first = cli("run", "--task", "sentiment", "--models", model, "--seeds", str(seeds), "--quiet")
        assert first.code == 0, first.err[-400:]
        [first_run] = _store_runs(own_cache)
        service.label = "negative"  # redeployed
        again = cli("run", "--task", "sentiment", "--models", model, "--seeds", str(seeds), "--quiet")
        assert again.code in (0, 1), again.err[-400:]
    finally:
        service.close()
    runs = _store_runs(own_cache)
    assert len(runs) == 2 and first_run in runs
    [second_run] = [run for run in runs if run != first_run]
    assert _predicted(first_run) == {"positive"} and _predicted(second_run) == {"negative"}
    for run in runs:
        assert json.loads((run / "meta.json").read_text())["run_id"] == run.name
    shown = cli("report", first_run.name, "--out", str(tmp_path / "r.html"), "--summary-json", str(tmp_path / "s.json"))
    assert shown.code in (0, 1), shown.err[-400:]
    assert json.loads((tmp_path / "s.json").read_text())["run_id"] == first_run.name  # the saved id, not the inputs'


def test_p38_cli_6_compare_of_two_asks_of_one_endpoint_says_the_service_may_have_changed(cli, tmp_path, own_cache):
    """Was (p38cli, low-medium): `compare` of two runs of one endpoint said "A and B are the same run … every case
    agrees, so nothing can differ" beside the cases that differed (both runs had the id of the settings). The runs
    have ids of their own, and the note says the service's answers may have changed between them."""
    service = _Redeployable("positive")
    seeds = _seeds(tmp_path, 3)
    model = f"http:url={service.url},name=ep"
    try:
        assert cli("run", "--task", "sentiment", "--models", model, "--seeds", str(seeds), "--quiet", "--out",
                   str(tmp_path / "c1"), "--no-story").code == 0
        service.label = "negative"
        assert cli("run", "--task", "sentiment", "--models", model, "--seeds", str(seeds), "--quiet", "--out",
                   str(tmp_path / "c2"), "--no-story").code in (0, 1)
    finally:
        service.close()
    ids = {json.loads((tmp_path / name / "meta.json").read_text())["run_id"] for name in ("c1", "c2")}
    assert len(ids) == 2
    compared = cli("compare", str(tmp_path / "c1"), str(tmp_path / "c2"), "--json", str(tmp_path / "cmp.json"))
    assert compared.code in (0, 1), compared.err[-400:]
    note = json.loads((tmp_path / "cmp.json").read_text())["note"]
    assert "nothing can differ" not in note and "same service" in note
    assert "nothing can differ" not in compared.out


def test_p38_cli_12_a_request_cap_is_the_whole_runs_across_its_shards(cli, tmp_path, own_cache):
    """Was (p38cli, medium-low): `max_requests`, documented as a cap per run, was a cap per shard: a run of two
    shards sent twice the cap to a (paid) service and ended with exit 0. The shards of a run share one budget."""
    service = _Redeployable("positive")
    seeds = _seeds(tmp_path, 6)
    model = f"http:url={service.url},name=capped,batch_size=1,max_requests=3"
    try:
        outcome = cli("run", "--task", "sentiment", "--models", model, "--seeds", str(seeds), "--quiet", "--out",
                      str(tmp_path / "run"), "--batch-size", "1", "--shard-size", "3", "--no-story")
        sent = len(service.texts_asked)
    finally:
        service.close()
    assert outcome.code == 2, outcome.err[-400:]
    assert sent == 3
    assert "request cap of 3 per command reached" in outcome.err and "finished shards" in outcome.err
    assert not list((tmp_path / "run").glob(".requests-*"))  # the count is the command's: not left behind


def test_p38_cli_8_an_endpoint_run_stopped_by_its_cap_resumes_after_its_finished_shards(cli, tmp_path, own_cache):
    """Was (p38cli, low): an endpoint run stopped by its cap promised "a re-run resumes", and the re-run asked every
    text again. The run keeps its finished shards: a re-run of the same settings (with a higher cap) resumes that run
    under its id and asks only the texts of the unfinished shards."""
    service = _Redeployable("positive")
    seeds = _seeds(tmp_path, 6)
    base = f"http:url={service.url},name=capped,batch_size=1"
    try:
        stopped = cli("run", "--task", "sentiment", "--models", f"{base},max_requests=4", "--seeds", str(seeds),
                      "--quiet", "--batch-size", "1", "--shard-size", "3", "--no-story")
        assert stopped.code == 2, stopped.err[-400:]
        [unfinished] = _store_runs(own_cache)
        assert not (unfinished / "meta.json").exists() and len(service.texts_asked) == 4
        resumed = cli("run", "--task", "sentiment", "--models", f"{base},max_requests=100", "--seeds", str(seeds),
                      "--quiet", "--batch-size", "1", "--shard-size", "3", "--no-story")
        assert resumed.code in (0, 1), resumed.err[-400:]
    finally:
        service.close()
    assert _store_runs(own_cache) == [unfinished] and (unfinished / "meta.json").is_file()
    assert len(service.texts_asked) == 4 + 3  # the finished shard's three texts were not asked again
    assert json.loads((unfinished / "meta.json").read_text())["run_id"] == unfinished.name


def test_p38_cli_8b_a_finished_endpoint_run_is_not_resumed_but_asked_again(cli, tmp_path, own_cache):
    """Control: only an unfinished ask is resumed; a finished one stays as it is and the next ask is a new run."""
    service = _Redeployable("positive")
    seeds = _seeds(tmp_path, 2)
    model = f"http:url={service.url},name=ep"
    try:
        for _ in range(2):
            assert cli("run", "--task", "sentiment", "--models", model, "--seeds", str(seeds), "--quiet",
                       "--no-story").code == 0
    finally:
        service.close()
    assert len(_store_runs(own_cache)) == 2 and len(service.texts_asked) == 4


def test_p38_cli_12b_a_model_without_answers_that_change_keeps_its_content_id(cli, tmp_path, own_cache):
    """Control: a local model's run is still named by its inputs: the same run again is found finished."""
    seeds = _seeds(tmp_path, 2)
    for _ in range(2):
        assert cli("run", "--task", "sentiment", "--models", "vader", "--seeds", str(seeds), "--quiet",
                   "--no-story").code in (0, 1)
    assert len(_store_runs(own_cache)) == 1


@pytest.mark.slow
@pytest.mark.no_models
def test_p38_cli_12c_a_request_cap_holds_across_worker_processes(cli, tmp_path, own_cache):
    """The same with two worker processes (each predicting its own shards): together they send the cap, no more."""
    service = _Redeployable("positive")
    seeds = _seeds(tmp_path, 6)
    try:
        outcome = cli("run", "--task", "sentiment", "--models",
                      f"http:url={service.url},name=capped,batch_size=1,max_requests=3", "--seeds", str(seeds),
                      "--quiet", "--batch-size", "1", "--shard-size", "2", "--executor", "processes", "--workers", "2",
                      "--no-story")
        sent = len(service.texts_asked)
    finally:
        service.close()
    assert outcome.code == 2 and "request cap of 3 per command reached" in outcome.err, outcome.err[-400:]
    assert sent == 3


class _ByHeader(LoopbackService):
    """A JSON endpoint on loopback whose answer depends on the deployment named by the header ``X-Model``."""

    def __init__(self, labels: dict[str, str]) -> None:
        self.labels, self.texts_asked = labels, []
        super().__init__()
        self.url = f"{self.base}/predict"

    def respond(self, path, headers, request, number):
        texts = request["texts"]
        label = self.labels.get(headers.get("X-Model") or "")
        self.texts_asked += texts if label else []
        return (200, {"labels": [label] * len(texts)}) if label else (401, {"error": "no model"})


def test_p39_kill_5_an_unfinished_ask_is_resumed_only_with_the_same_headers(cli, tmp_path, own_cache):
    """Was (p39kill/p39cli, medium-low): an unfinished ask was matched by the endpoint's fingerprint, which leaves
    headers and keys out, so a run with another deployment header (or another key, or none) resumed it: one run held
    two deployments' answers, exit 0. An ask is resumed only with the same request settings (a salted digest)."""
    service = _ByHeader({"v1": "positive", "v2": "negative"})
    seeds = str(_seeds(tmp_path, 6))
    base = f"http:url={service.url},name=svm,batch_size=1"
    options = ("--task", "sentiment", "--seeds", seeds, "--quiet", "--batch-size", "1", "--shard-size", "3",
               "--no-story")
    try:
        capped = cli("run", *options, "--models", f"{base},headers=X-Model:v1,max_requests=3")
        assert capped.code == 2, capped.err[-400:]
        [unfinished] = _store_runs(own_cache)
        other = cli("run", *options, "--models", f"{base},headers=X-Model:v2")
        assert other.code in (0, 1), other.err[-400:]
        runs = _store_runs(own_cache)
        assert len(runs) == 2 and not (unfinished / "meta.json").exists()
        [finished] = [run for run in runs if run != unfinished]
        assert _predicted(finished) == {"negative"}  # all v2's: nothing of v1 mixed in
        same = cli("run", *options, "--models", f"{base},headers=X-Model:v1")
        assert same.code in (0, 1), same.err[-400:]
    finally:
        service.close()
    assert (unfinished / "meta.json").is_file() and _predicted(unfinished) == {"positive"}
    assert "sekret" not in (unfinished / "progress.json").read_text() and "v1" not in (
        unfinished / "progress.json").read_text()
    assert len(service.texts_asked) == 3 + 6 + 3  # the resume asked only its unfinished shard


@pytest.mark.parametrize("out", [False, True], ids=["store", "out"])
def test_p39_kill_9_an_ask_killed_before_its_manifest_is_resumed(cli, tmp_path, own_cache, out):
    """Was (p39kill, low-medium): an ask killed between its meta.json and its manifest was never resumed (`report`
    said to run the same inputs again, which made a new, fully paid ask). It is resumed from its verified shards and
    sealed, with no request."""
    service = _Redeployable("positive")
    where = ("--out", str(tmp_path / "run")) if out else ()
    options = ("run", "--task", "sentiment", "--models", f"http:url={service.url},name=ep", "--seeds",
               str(_seeds(tmp_path, 3)), "--quiet", "--no-story", *where)
    try:
        assert cli(*options).code == 0
        [folder] = [tmp_path / "run"] if out else _store_runs(own_cache)
        run_id = json.loads((folder / "meta.json").read_text())["run_id"]
        (folder / "manifest.json").unlink()  # the state a kill before the manifest's rename leaves
        asked = len(service.texts_asked)
        again = cli(*options)
        assert again.code == 0, again.err[-400:]
    finally:
        service.close()
    assert len(service.texts_asked) == asked
    assert (folder / "manifest.json").is_file() and json.loads((folder / "meta.json").read_text())["run_id"] == run_id
    assert out or _store_runs(own_cache) == [folder]


def test_p39_kill_10_ctrl_c_while_a_saved_run_writes_its_outputs_points_to_report(cli, tmp_path, own_cache,
                                                                                   monkeypatch):
    """Was (p39kill, low): Ctrl-C while `run` wrote its --junit (the run already saved) advised a re-run, which asks
    an endpoint for every text again. It says the run is saved and that `report` writes the outputs."""
    import alict_core.report.junit as junit

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(junit, "write_junit", interrupted)
    outcome = cli("run", "--task", "sentiment", "--models", "vader", "--seeds", str(_seeds(tmp_path, 2)), "--quiet",
                  "--no-story", "--out", str(tmp_path / "run"), "--junit", str(tmp_path / "j.xml"))
    assert outcome.code == 130 and "the run is saved" in outcome.err and "`report" in outcome.err
    assert "re-run resumes" not in outcome.err and (tmp_path / "run" / "manifest.json").is_file()


def test_p39_cli_15_two_models_of_one_run_on_one_service_are_not_two_runs(cli, tmp_path, own_cache):
    """Was (p39cli, low): `compare RUN --model-a x --model-b y` of two models of one run on one URL said "asked the
    same service (x) in two runs"."""
    service = _Redeployable("positive")
    try:
        assert cli("run", "--task", "sentiment", "--models", f"http:url={service.url},name=x,http:url={service.url},"
                   "name=y", "--seeds", str(_seeds(tmp_path, 2)), "--quiet", "--no-story", "--out",
                   str(tmp_path / "run")).code in (0, 1)
    finally:
        service.close()
    outcome = cli("compare", str(tmp_path / "run"), "--model-a", "x", "--model-b", "y", "--json",
                  str(tmp_path / "c.json"))
    assert outcome.code in (0, 1), outcome.err[-400:]
    note = json.loads((tmp_path / "c.json").read_text())["note"]
    assert "in one run" in note and "two runs" not in note


def test_p40_cli_2_a_kept_finished_ask_is_swapped_in_not_asked_again(cli, tmp_path, own_cache):
    """Was (p40cli, low-medium): a re-write whose swap was refused (the folder got a user's file meanwhile) kept the
    finished ask in `.X.pending` and said that the same command puts it in place; the next command removed it as a
    displaced old run and asked the endpoint again. The kept ask is swapped in, with no request."""
    import shutil

    service = _Redeployable("positive")
    options = ("run", "--task", "sentiment", "--models", f"http:url={service.url},name=ep", "--seeds",
               str(_seeds(tmp_path, 2)), "--quiet", "--no-story")
    try:
        assert cli(*options, "--out", str(tmp_path / "sw")).code == 0
        assert cli(*options, "--out", str(tmp_path / "later")).code == 0  # the ask a refused swap kept
        kept = json.loads((tmp_path / "later" / "meta.json").read_text())["run_id"]
        shutil.move(tmp_path / "later", tmp_path / ".sw.pending")
        asked = len(service.texts_asked)
        again = cli(*options, "--out", str(tmp_path / "sw"))
    finally:
        service.close()
    assert again.code == 0, again.err[-400:]
    assert len(service.texts_asked) == asked
    assert json.loads((tmp_path / "sw" / "meta.json").read_text())["run_id"] == kept
    assert not (tmp_path / ".sw.pending").exists()


def test_p40_cli_8_the_same_headers_written_otherwise_resume_the_ask(cli, tmp_path, own_cache):
    """Was (p40cli, low): an unfinished ask was not resumed when the same headers were written in another order or
    with a space after the colon: its finished shards were asked (and paid for) again."""
    service = _ByHeader({"v1": "positive"})
    options = ("run", "--task", "sentiment", "--seeds", str(_seeds(tmp_path, 6)), "--quiet", "--batch-size", "1",
               "--shard-size", "3", "--no-story")
    base = f"http:url={service.url},name=svm,batch_size=1"
    try:
        assert cli(*options, "--models", f"{base},headers=X-Model:v1;X-Other:a,max_requests=3").code == 2
        again = cli(*options, "--models", f"{base},headers=x-other: a;X-Model: v1")
    finally:
        service.close()
    assert again.code in (0, 1), again.err[-400:]
    assert len(_store_runs(own_cache)) == 1 and len(service.texts_asked) == 6
