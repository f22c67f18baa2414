"""No page of podium needs ``style-src 'unsafe-inline'``: every style is in a stylesheet the policy names.

The service's policy allows styles from the site only (``style-src 'self'``);
a static report allows its one ``<style>`` element by its SHA-256. So no
template may carry a ``style=`` attribute or a ``<style>`` element (the report's
hashed one aside), and htmx is told not to insert its indicator styles. The
browser tests check the same in Chromium, page by page (``page_policy``).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from importlib import resources
from pathlib import Path

import pytest

from podium.publish.report import render_report
from podium.service.headers import CSP

TEMPLATES = [
    Path(str(resources.files("podium.service") / "templates")),
    Path(str(resources.files("podium.publish.report") / "templates")),
]
INLINE = re.compile(r"<style\b|\sstyle\s*=", re.IGNORECASE)
HASHED = {"report.html": "<style>{{ style|safe }}</style>"}  # allowed by its hash in the report's own policy


def inline_styles(text: str) -> list[str]:
    """Each line of ``text`` holding an inline style (an attribute or an element), numbered from 1."""
    return [f"{number}: {line.strip()}" for number, line in enumerate(text.splitlines(), 1) if INLINE.search(line)]


@pytest.mark.parametrize("template", sorted(p for folder in TEMPLATES for p in folder.glob("*.html")), ids=str)
def test_no_template_holds_an_inline_style(template: Path) -> None:
    text = template.read_text(encoding="utf-8").replace(HASHED.get(template.name, "\0"), "")
    assert inline_styles(text) == [], f"{template}: move the style into the stylesheet"


def test_the_check_sees_an_attribute_and_an_element() -> None:
    assert inline_styles('<p>\n<td style="color: red">\n<noscript><STYLE>.x {}</style></noscript>\n<p styles>') == [
        '2: <td style="color: red">',
        "3: <noscript><STYLE>.x {}</style></noscript>",
    ]


def test_the_policies_allow_no_inline_style() -> None:
    styles = CSP.split("style-src ")[1].split(";")[0]
    assert styles == "'self'"
    base = (TEMPLATES[0] / "base.html").read_text(encoding="utf-8")
    assert """<meta name="htmx-config" content='{"includeIndicatorStyles": false""" in base


def test_a_static_report_allows_its_one_style_by_hash(tmp_path: Path) -> None:
    from podium.challenges import get
    from podium.scoring.engine import evaluate

    demo = get("ilsvrc2012-cls").write_demo(tmp_path)
    document = json.loads(evaluate("ilsvrc2012-cls", demo.truth, demo.submission, demo.settings).to_json())
    html = render_report(document, "r.json")
    policy = html.split('http-equiv="Content-Security-Policy" content="')[1].split('"')[0]
    (style,) = re.findall(r"<style>(.*?)</style>", html, re.DOTALL)
    digest = base64.b64encode(hashlib.sha256(style.encode()).digest()).decode()
    assert policy.split("style-src ")[1].split(";")[0] == f"'sha256-{digest}'", policy


def test_an_organizers_markdown_table_aligns_its_columns_by_class(tmp_path: Path) -> None:
    """markdown-it writes ``style="text-align:right"`` for ``| --: |``, which the policy refuses (Chromium then drops
    the alignment and reports a violation: test_content_browser's aligned table)."""
    from podium.service.markdown import render_file

    page = tmp_path / "results.md"
    page.write_text("| team | score |\n| :-: | --: |\n| alpha | 0.91 |\n")
    html = render_file(page, tmp_path, {})
    assert inline_styles(html) == [] and html.count('class="align-right"') == 2, html
