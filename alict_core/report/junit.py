"""A run as JUnit XML for CI systems: one ``<testsuite>`` per model, one ``<testcase>`` per LC × model.

A test case fails (``<failure>``) when its fail rate exceeds the LC's threshold (or the ``"*"`` one);
every pair's figures are listed in its suite's ``<system-out>``. A model some of whose answers could not
be parsed (a chat model: those cases were scored as its fallback label) gets a property ``unparsed_answers``,
a line in ``<system-err>`` and one more test case, in error: "Answers that could not be parsed" (its LCs'
passes are the fallback label's; a CI reader of the file alone was told that all passed). The layout is
valid under the strict common JUnit schema (windyroad ``JUnit.xsd``: ``testsuites > testsuite(package, id) >
properties, testcase*(error|failure)?, system-out, system-err``) and so under the laxer Jenkins/GitLab readers.
"""

from __future__ import annotations

import socket
import xml.etree.ElementTree as ET
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Mapping

from alict_core.common.jsonl import atomic_path
from alict_core.common.textsafe import xml_text
from alict_core.report.summary import lc_results
from alict_core.runner.summary import unparsed_answers, unparsed_sentence


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def _testcase(row: dict[str, Any]) -> ET.Element:
    case = ET.Element("testcase", {
        "name": f"{row['title']} [{row['lc_id']}]", "classname": f"alict.{row['model']}.{row['capability']}",
        "time": "0",
    })
    if row["failed"]:
        failure = ET.SubElement(case, "failure", {
            "message": f"fail rate {_pct(row['fail_rate'])} > threshold {_pct(row['threshold'])}",
            "type": "FailRateAboveThreshold",
        })
        failure.text = _figures(row)
    return case


def _figures(row: dict[str, Any]) -> str:
    limit = "no threshold" if row["threshold"] is None else f"threshold {_pct(row['threshold'])}"
    return (f"{row['lc_id']} ({row['capability']}: {row['title']}) × {row['model']}: "
            f"fail rate {_pct(row['fail_rate'])} "
            f"(95% CI {_pct(row['ci_low'])}–{_pct(row['ci_high'])}, clustered by seed), "
            f"{row['n_fail']} of {row['n_cases']} cases; {limit}")


def _unparsed_testcase(model: str, count: int, rows: list[dict[str, Any]]) -> ET.Element:
    """The test case in error of a model with unparsed answers (which LCs held them is not recorded: all are named)."""
    case = ET.Element("testcase", {"name": "Answers that could not be parsed",
                                   "classname": f"alict.{model}.unparsed_answers", "time": "0"})
    error = ET.SubElement(case, "error", {"message": f"{count} answer(s) of model {model} could not be parsed",
                                          "type": "UnparsedAnswers"})
    error.text = (unparsed_sentence(model, count) + ". The LCs of this model (any of them may hold those cases): "
                  + ", ".join(f"{r['lc_id']} ({r['n_fail']} of {r['n_cases']} failing)" for r in rows))
    return case


def junit_xml(result, thresholds: Mapping[str, float] | None = None, name: str = "ALiCT") -> str:
    """The JUnit XML text of a run (UTF-8, with an XML declaration)."""
    results = lc_results(result.summary(), thresholds)
    extra = getattr(result, "extra", None) or {}
    unparsed = unparsed_answers(extra)
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
    root = ET.Element("testsuites")  # no attributes: the strict common schema allows none here
    for index, model in enumerate(result.models):
        rows = [r for r in results if r["model"] == model]
        suite = ET.SubElement(root, "testsuite", {
            "name": f"{name}.{model}", "package": name.lower(), "id": str(index),
            "hostname": socket.gethostname() or "localhost",
            "timestamp": stamp, "tests": str(len(rows) + (model in unparsed)),
            "failures": str(sum(r["failed"] for r in rows)), "errors": str(int(model in unparsed)), "skipped": "0",
            "time": "0",
        })
        properties = ET.SubElement(suite, "properties")
        ET.SubElement(properties, "property", {"name": "run_id", "value": result.run_id})
        ET.SubElement(properties, "property", {"name": "model", "value": model})
        if model in unparsed:  # scored as the fallback label, not by the model (pass 38)
            ET.SubElement(properties, "property", {"name": "unparsed_answers", "value": str(unparsed[model])})
        for item in extra.get("skipped_tests") or []:  # --suite tests not run
            ET.SubElement(properties, "property", {
                "name": "skipped_test",
                "value": f"{item.get('suite', '')}: {item['test']}: {item['reason']} ({item['items']} items)"})
        for row in rows:
            suite.append(_testcase(row))
        if model in unparsed:
            suite.append(_unparsed_testcase(model, unparsed[model], rows))
        ET.SubElement(suite, "system-out").text = "\n".join(_figures(r) for r in rows)
        system_err = ET.SubElement(suite, "system-err")
        if model in unparsed:
            system_err.text = unparsed_sentence(model, unparsed[model])
    _xml_legal_tree(root)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _xml_legal_tree(root: ET.Element) -> None:
    """Escape, in every text and attribute, the characters XML 1.0 does not allow (a suite's names and texts may
    hold C0 controls or U+FFFF): ElementTree writes them raw and the document would not be well-formed."""
    for element in root.iter():
        element.text = xml_text(element.text) if element.text else element.text
        element.tail = xml_text(element.tail) if element.tail else element.tail
        for key, value in element.attrib.items():
            element.attrib[key] = xml_text(value)


def write_junit(result, path: Path | str, thresholds: Mapping[str, float] | None = None) -> Path:
    """Write the JUnit XML atomically; return the path."""
    path = Path(path)
    with atomic_path(path) as tmp:
        tmp.write_text(junit_xml(result, thresholds), encoding="utf-8")
    return path
