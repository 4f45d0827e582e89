"""The jinja2 environment for the file-shape templates beside this module (shimgen/generate/templates/*.j2)."""

from __future__ import annotations

import functools
import os

import jinja2

from shimgen.base import cache


class _BytecodeCache(jinja2.BytecodeCache):
    """Compiled templates in shimgen's cache folder (shimgen.base.cache): compiling the templates costs about a quarter
    of a second per run, loading them a few milliseconds. jinja2 keys each entry by the template's name and checks
    its source's checksum on load; the file name adds jinja2's version and shimgen's code, entries are written
    atomically (concurrent runs read a whole entry or none) and an unreadable one is recompiled."""

    def __init__(self, folder: str) -> None:
        self.folder = folder
        self.salt = f"{jinja2.__version__}\0".encode() + cache.code()

    def _path(self, bucket: jinja2.bccache.Bucket) -> str:
        import hashlib

        name = hashlib.sha256(self.salt + bucket.key.encode()).hexdigest()[:40]
        return os.path.join(self.folder, f"template-{name}.jinja2")

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        data = cache.read(self._path(bucket))
        if data is not None:
            try:
                bucket.bytecode_from_string(data)  # resets the bucket on a bad magic header or a stale checksum
            except Exception:  # a corrupt entry is no entry
                bucket.reset()

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        cache.write_atomically(self._path(bucket), bucket.bytecode_to_string())


@functools.cache
def env() -> jinja2.Environment:
    folder = cache.directory()
    return jinja2.Environment(
        loader=jinja2.PackageLoader("shimgen.generate", "templates"),
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        bytecode_cache=_BytecodeCache(folder) if folder else None,
    )


def render(name: str, **context: object) -> str:
    return env().get_template(name).render(**context)
