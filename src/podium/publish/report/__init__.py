"""Reports: one result document shown as HTML, with Vega-Lite charts and the worst items drawn.

``render_report`` writes a self-contained page (the vendored Vega,
vega-interpreter and Vega-Lite inlined, no CDN, works offline) whose own
Content-Security-Policy lets only those scripts run, never ``eval``;
``report_context`` gives the template values that the service's report page
renders with the same body.
"""

from __future__ import annotations

import base64
import hashlib
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2

from podium.challenges import get
from podium.core.provenance import short as short_signature
from podium.publish.report.charts import Chart, charts_of
from podium.publish.report.gallery import Thumbnail, thumbnails

SHOWN_SCORES = 24  # scores listed in the table; the per-class rest are in the charts
LEGENDS = {
    "glas": "Outlines: green a true positive, orange a false positive, blue a missed truth object.",
    "fuzzy-jaccard": "The image's worst class: red the predicted probability, green the truth, yellow both.",
}
TEMPLATES = resources.files("podium.publish.report") / "templates"
VENDOR = resources.files("podium.publish.report") / "vendor"
SCRIPTS = ("vega.min.js", "vega-interpreter.js", "vega-lite.min.js")  # inlined in this order, then render.js


def environment(*more: jinja2.BaseLoader) -> jinja2.Environment:
    """A Jinja2 environment that finds the report's templates (after ``more`` loaders)."""
    loader = jinja2.ChoiceLoader([*more, jinja2.FileSystemLoader(str(TEMPLATES))])
    return jinja2.Environment(loader=loader, autoescape=True, undefined=jinja2.StrictUndefined)


def _score_rows(document: dict[str, Any]) -> tuple[list[dict[str, str]], int]:
    challenge = get(document["challenge"])
    rows = []
    for name, value in list(document.get("scores", {}).items())[:SHOWN_SCORES]:
        try:
            better = {True: "higher", False: "lower", None: ""}[challenge.score_spec(name).higher_is_better]
        except KeyError:
            better = ""
        rows.append(
            {
                "name": name,
                "value": "null" if value is None else (f"{value:.6f}" if isinstance(value, float) else str(value)),
                "better": better,
            }
        )
    return rows, max(0, len(document.get("scores", {})) - SHOWN_SCORES)


def shown_part(document: dict[str, Any]) -> dict[str, Any]:
    """The document as a report shows it: a public view's scores and details are its public split's."""
    public = (document.get("splits") or {}).get("public")
    if document.get("view") == "public" and public:
        return document | {"scores": public["scores"], "details": public["details"]}
    return document


def report_context(document: dict[str, Any], gallery: list[Thumbnail] | None = None) -> dict[str, Any]:
    """The values ``report_body.html`` needs."""
    document = shown_part(document)
    scores, hidden = _score_rows(document)
    signature = document.get("signature") or {}
    return {
        "document": document,
        "scores": scores,
        "hidden_scores": hidden,
        "charts": charts_of(document),
        "gallery": gallery or [],
        "legend": LEGENDS.get(document["challenge"], ""),
        "signature": short_signature(signature) if signature else "",
    }


def _csp_hash(script: str) -> str:
    """The Content-Security-Policy source that allows the inline ``script`` and nothing else."""
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    return f"'sha256-{digest}'"


def render_report(
    document: dict[str, Any], source: str, truth: Path | None = None, submission: Path | None = None
) -> str:
    """The self-contained HTML report of ``document``; the worst items are drawn when ``truth`` and ``submission`` are given."""
    gallery = thumbnails(document, truth, submission) if truth is not None and submission is not None else []
    scripts = [(VENDOR / name).read_text(encoding="utf-8") for name in SCRIPTS]
    scripts.append((TEMPLATES / "render.js").read_text(encoding="utf-8"))
    style = (TEMPLATES / "report.css").read_text(encoding="utf-8")
    context = report_context(document, gallery) | {
        "source": source,
        "style": style,
        "style_hash": _csp_hash(style),
        "scripts": scripts,
        "script_hashes": " ".join(_csp_hash(script) for script in scripts),
    }
    return environment().get_template("report.html").render(context)


__all__ = ["Chart", "Thumbnail", "charts_of", "environment", "render_report", "report_context", "thumbnails"]
