"""The jinja2 environment for the file-shape templates in shimgen/templates/."""

from __future__ import annotations

import functools

import jinja2


@functools.cache
def env() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("shimgen", "templates"),
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
        autoescape=False,
    )


def render(name: str, **context: object) -> str:
    return env().get_template(name).render(**context)
