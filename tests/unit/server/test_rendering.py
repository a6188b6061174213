"""server/rendering.py: the pages' one template engine: autoescape on, a misspelt name an error,
the templates' layout whitespace kept off the page, and the headers every page is sent with."""

from __future__ import annotations

import jinja2
import pytest
from markupsafe import Markup

from ape_contract_verify.server import rendering

pytestmark = pytest.mark.unit


def test_values_are_escaped_in_text_and_in_attributes():
    template = rendering.templates().env.from_string("<p title='{{ v }}'>{{ v }}</p>")
    assert (
        template.render(v="'><script>\"") == "<p title='&#39;&gt;&lt;script&gt;&#34;'>&#39;&gt;&lt;script&gt;&#34;</p>"
    )


def test_a_rendered_fragment_is_placed_as_it_is():
    part = rendering.fragment("unverified.html", read_error="<b>")
    assert isinstance(part, Markup) and "(&lt;b&gt;)" in part
    outer = rendering.templates().env.from_string("<div>{{ part }}</div>").render(part=part)
    assert outer == f"<div>{part}</div>"


def test_a_name_a_template_lacks_is_an_error_not_an_empty_cell():
    with pytest.raises(jinja2.UndefinedError):
        rendering.fragment("unverified.html", read_error=None)  # code_size missing


def test_layout_whitespace_is_dropped_and_spaces_inside_lines_kept():
    joined = rendering.JoinedLines(rendering.templates().env).preprocess("<p>\n    <a>x</a> <a>y</a>\n</p>\n", "t")
    assert joined == "<p><a>x</a> <a>y</a></p>"


def test_every_page_is_sent_with_the_content_security_policy():
    assert "script-src 'self'" in rendering.HEADERS["Content-Security-Policy"]
    assert rendering.HEADERS["X-Content-Type-Options"] == "nosniff"
    assert sorted(p.name for p in rendering.TEMPLATES.glob("*.html"))[:2] == ["address.html", "base.html"]
