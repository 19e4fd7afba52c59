"""LC specs: schema, YAML loading with located errors, predicate evaluation."""

from alict_core.lcspec.loader import (
    SpecValidationError,
    get_spec,
    load_spec,
    load_task_specs,
    parse_spec_text,
    spec_dir,
    spec_dirs,
    spec_files,
    spec_path,
    specs_in,
    workspace_spec_dir,
    workspace_spec_file,
)
from alict_core.lcspec.schema import SCHEMA_VERSION, LCSpec
from alict_core.tasks import TASK_NAMES

SPEC_DIRS = {task: spec_dir(task) for task in TASK_NAMES}

__all__ = [
    "LCSpec", "SCHEMA_VERSION", "SPEC_DIRS", "SpecValidationError", "get_spec", "load_spec",
    "load_task_specs", "parse_spec_text", "spec_dir", "spec_dirs", "spec_files", "spec_path", "specs_in",
    "workspace_spec_dir", "workspace_spec_file",
]
