"""Hostile pass 12 table (notes: attack_pass12_kill.md, findings A-D): kills during re-writes, the review store on
PostgreSQL, `build --report` with hardened versions. One row per finding, each failing on the code before its fix."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.robustness.test_pass9_table import PG_URL, _db_url, _form_rows

pytestmark = [pytest.mark.timeout(240), pytest.mark.usefixtures("fresh_engines")]

HOUR = 3600.0
ROOT = Path(__file__).resolve().parents[2]


def _age(path, seconds: float) -> None:
    """Date ``path`` back by ``seconds`` (a killed writer's file or folder of long ago, what it holds too: a folder
    counts as stale only when nothing in it is recent, pass 37; no waiting)."""
    then = time.time() - seconds
    for root, dirs, files in os.walk(path):
        for name in (*dirs, *files):
            os.utime(os.path.join(root, name), (then, then))
    os.utime(path, (then, then))


# A: a refused write on PostgreSQL printed the driver's own clean-up line beside the command's message ------------

@pytest.mark.skipif(not PG_URL, reason="set ALICT_TEST_REVIEW_PG_URL (scripts/with_postgres.sh)")
def test_a_an_import_refused_by_a_read_only_role_prints_one_message(cli, tmp_path):
    """Was: `review import` as a role that may only read printed "error ignored terminating <psycopg.Pipeline
    [INERROR, pipeline=ON] (port=… user=ro …) at 0x…>: pipeline aborted" (the driver's log record, printed raw by
    logging's last resort) before the one exit-2 message. Now the command's message is the only line."""
    import csv

    import sqlalchemy as sa

    url = _db_url(tmp_path, "postgresql")
    rows = _form_rows(cli, tmp_path, url)
    filled = [{**row, "reviewer": f"r{k}", "relevance": "4", "label_score": "4"} for k in range(100) for row in rows]
    form = tmp_path / "filled.csv"
    with open(form, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(filled)
    assert cli("review", "import", str(form), "--db", url).code == 0  # the reviewers exist: the role's write that
    # fails is the judgements' upsert, many rows sent at once (the driver's pipeline, whose clean-up logs)
    role = "alict_p12_reader"
    engine = sa.create_engine(url)
    try:
        with engine.begin() as conn:
            if conn.execute(sa.text("SELECT 1 FROM pg_roles WHERE rolname = :r"), {"r": role}).first():
                conn.execute(sa.text(f"DROP OWNED BY {role}"))  # left by an interrupted earlier run
                conn.execute(sa.text(f"DROP ROLE {role}"))
            conn.execute(sa.text(f"CREATE ROLE {role} LOGIN"))
            conn.execute(sa.text(f"GRANT USAGE ON SCHEMA public TO {role}"))
            conn.execute(sa.text(f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {role}"))
    except sa.exc.DBAPIError as exc:  # a server whose test user may not make roles
        engine.dispose()
        pytest.skip(f"cannot make a read-only role: {exc.orig}")
    try:
        # a process of its own: pytest's log capture gives the driver's record a handler, so in-process the last
        # resort (what printed it on a terminal) never runs
        done = subprocess.run([sys.executable, "-m", "alict_core", "review", "import", str(form), "--db",
                               sa.make_url(url).set(username=role).render_as_string(hide_password=False)],
                              capture_output=True, text=True, cwd=ROOT, timeout=180,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert done.returncode == 2, done.stderr
        assert done.stderr.startswith("error:") and "permission denied" in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    finally:
        with engine.begin() as conn:
            conn.execute(sa.text(f"DROP OWNED BY {role}"))
            conn.execute(sa.text(f"DROP ROLE {role}"))
        engine.dispose()


# B: the temporary file of a killed single-file write was never removed -----------------------------------------

def test_b_a_killed_exports_temporary_file_is_removed_by_the_next_write_of_that_file(cli, tmp_path):
    """Was: a write killed before its rename (`report --out r.html`, JUnit, summary JSON, CSV/JSONL exports, a review
    export) left `.<name>.<12 hex>.tmp` beside the file for ever: only workspace spec saves removed such files. Now
    every atomic write of a file removes those of its own killed writes once an hour old (sealed names only: a
    younger one, another writer's, and a user's look-alike stay)."""
    from alict_core.common.jsonl import new_temp_file

    url = _db_url(tmp_path, "sqlite")
    _form_rows(cli, tmp_path, url)
    form = tmp_path / "form.csv"
    killed = new_temp_file(form)
    killed.write_text("half a form")
    _age(killed, 2 * HOUR)
    young = new_temp_file(form)
    users = tmp_path / ".form.csv.0123456789ab.tmp"
    users.write_text("mine")
    _age(users, 2 * HOUR)
    assert cli("review", "export", "--db", url, "t", "--out", str(form)).code == 0
    assert not killed.exists()
    assert young.exists() and users.read_text() == "mine"


# C: hardened versions were staged by mkdtemp: private (0700) folders, unsealed names never cleaned ---------------

from tests.robustness.test_pass11_cli_table import version  # noqa: E402,F401  (fixture: a retrained toy version)
from tests.test_harden import saved_run, tiny_parent  # noqa: E402,F401  (fixtures: a toy run and its parent model)


def test_c_a_version_folder_has_the_usual_permissions(version):  # noqa: F811
    """Was: every version folder was drwx------ (tempfile.mkdtemp), against "staging folders keep the usual
    permissions" (docs/ROBUSTNESS.md): an app server or a teammate sharing the cache could not read it."""
    from alict_core.harden.versions import version_dir

    name, _ = version
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(version_dir(name).stat().st_mode) == 0o777 & ~umask


def test_c_a_killed_trainings_staging_folder_is_removed_by_the_next_training(version, tiny_parent):  # noqa: F811
    """Was: a training killed before its swap left `.<name>.<random>` (mkdtemp, not a sealed name) in
    models/versions for ever. Now it is a sealed `.<name>.tmp-*` that the next training beside it removes once an hour
    old."""
    from alict_core.common.manifest import staging_dir
    from alict_core.harden.versions import version_dir
    from alict_core.training.retrain import RetrainSettings, retrain_embedded
    from tests.harden_toy import HELDOUT, ORIGINAL

    name, export = version
    folder = version_dir(name)
    killed = staging_dir(folder.parent, f".{folder.name}.tmp-")
    (killed / "head.npz").write_bytes(b"half")
    _age(killed, 2 * HOUR)
    other = retrain_embedded(tiny_parent, export, settings=RetrainSettings(seed=6), original=ORIGINAL,
                             heldout=HELDOUT)  # another version: the same one is found made and not trained again
    assert not killed.exists()
    assert sorted(p.name for p in folder.parent.iterdir()) == sorted([folder.name, version_dir(other).name])


# D: `build --report` said nothing about hardened versions, broken or not ------------------------------------------

def test_d_build_report_lists_each_version_and_names_a_broken_one(cli, version):  # noqa: F811
    """Was: with a version whose head.npz was cut short (or meta.json edited), `build --report` listed the base
    models only, exit 0: the damage showed first when a run used the version. Now each version is listed, checked
    as a run would check it (without loading a model), a broken one with the file at fault."""
    import json

    from alict_core.harden.versions import version_dir

    name, _ = version
    outcome = cli("build", "--report")
    assert outcome.code == 0, outcome.err
    assert f"{name}  sentiment" in outcome.out and ": OK" in outcome.out, outcome.out
    head = version_dir(name) / "head.npz"
    head.write_bytes(head.read_bytes()[:100])
    outcome = cli("build", "--report")
    line = next((x for x in outcome.out.splitlines() if name in x), "")
    assert "BROKEN" in line and "head.npz" in line, outcome.out
    outcome = cli("build", "--report", "--json")
    (row,) = [r for r in json.loads(outcome.out) if r.get("target") == "version"]
    assert row["name"] == name and "head.npz" in row["error"]


# E (left by p12kill, fixed by the lead): a NUL in a judgement file's task column reached the database -------------

@pytest.mark.parametrize("backend", ["sqlite", pytest.param("postgresql", marks=pytest.mark.skipif(
    not PG_URL, reason="set ALICT_TEST_REVIEW_PG_URL (scripts/with_postgres.sh)"))])
def test_e_a_control_character_in_the_task_column_is_named_with_its_line(cli, tmp_path, backend):
    """Was (PostgreSQL): exit 2 "refused a value (PostgreSQL text fields cannot contain NUL …)" naming no file or
    line. Now the row is refused before any query, with the file and line, on every database."""
    import csv

    url = _db_url(tmp_path, backend)
    rows = _form_rows(cli, tmp_path, url)
    form = tmp_path / "filled.csv"
    with open(form, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerow({**rows[0], "task": "study\x00x", "reviewer": "ann", "relevance": "4", "label_score": "4"})
    result = cli("review", "import", str(form), "--db", url)
    assert result.code == 2 and "filled.csv:2" in result.err and "task name" in result.err, result.err
