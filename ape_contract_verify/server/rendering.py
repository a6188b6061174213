"""The pages' template engine: jinja2 with autoescape over `server/templates/`, and the page response.

It holds the filters the templates share and the headers every page goes out with (its
Content-Security-Policy).

Autoescape is on for every template: a value from a submission is escaped wherever it lands. The one
HTML that passes unescaped is Pygments' highlighted source (`code_tab.py`), which escapes as it
highlights, and fragments this module rendered itself (`fragment`, a `Markup`).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from pathlib import Path

import jinja2
from jinja2.ext import Extension
from markupsafe import Markup
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.templating import Jinja2Templates

from ape_contract_verify.protocol.values import checksum
from ape_contract_verify.server.page_text import short_name, text, when

TEMPLATES = Path(__file__).with_name("templates")
STATIC = Path(__file__).with_name("static")
HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
        "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


class JoinedLines(Extension):
    """Templates are written an element a line; the page gets none of that layout's whitespace (a
    newline between two links is a space on the page). Each line's indentation and its end are
    dropped, so a space the page needs is written inside a line."""

    def preprocess(self, source: str, name: str | None, filename: str | None = None) -> str:
        return "".join(line.lstrip() for line in source.splitlines())


@cache
def templates() -> Jinja2Templates:
    """Made on the first page served: jinja2 is never imported with the plugin."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=True,
        auto_reload=False,  # the templates are package data: read once
        undefined=jinja2.StrictUndefined,  # a misspelt name is an error, not an empty cell
        extensions=[JoinedLines],
    )
    env.filters.update(checksum=checksum, short_name=short_name, when=when, json_text=text)
    return Jinja2Templates(env=env)


def page(request: Request, template: str, context: Mapping[str, object], status: int = 200) -> HTMLResponse:
    """A whole page: `template` extends base.html, whose <title> is `context["title"]`."""
    return templates().TemplateResponse(request, template, dict(context), status_code=status, headers=HEADERS)


def fragment(template: str, **context: object) -> Markup:
    """Part of a page (a tab's panel), rendered escaped and marked safe to place in another template."""
    return Markup(templates().get_template(template).render(context))
