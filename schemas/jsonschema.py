"""JSON Schema files for outside consumers of `strata.events` and `strata.commands`.

One file per kind and version, `schemas/json/<family>s/<Type>.v<N>.json`, describing the whole
envelope with that kind's payload. `python -m schemas.jsonschema` rewrites them; a test fails
when the committed files differ from what the models generate.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from schemas.envelope import CommandEnvelope, EventEnvelope
from schemas.registry import kinds

SCHEMA_DIR = Path(__file__).resolve().parent / "json"
_ENVELOPES: dict[str, type[BaseModel]] = {"event": EventEnvelope, "command": CommandEnvelope}


def _schema_for(family: str, type_name: str) -> dict[str, Any]:
    cls = kinds(family)[type_name]
    envelope = _ENVELOPES[family].model_json_schema()
    payload = cls.model_json_schema(ref_template="#/$defs/{model}")
    defs = {**envelope.pop("$defs", {}), **payload.pop("$defs", {})}
    defs[type_name] = payload
    envelope["properties"]["payload"] = {"$ref": f"#/$defs/{type_name}"}
    envelope["properties"]["type"] = {"const": type_name, "type": "string"}
    envelope["properties"]["schema_version"] = {"const": cls.SCHEMA_VERSION, "type": "integer"}
    envelope.pop("title", None)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": f"{type_name} v{cls.SCHEMA_VERSION}",
        **envelope,
        "$defs": dict(sorted(defs.items())),
    }


def generate() -> dict[str, str]:
    """Relative path → file text, for every registered kind."""
    files: dict[str, str] = {}
    for family in _ENVELOPES:
        for type_name, cls in sorted(kinds(family).items()):
            rel = f"{family}s/{type_name}.v{cls.SCHEMA_VERSION}.json"
            files[rel] = json.dumps(_schema_for(family, type_name), indent=2, sort_keys=True) + "\n"
    return files


def stale_files(directory: Path = SCHEMA_DIR) -> list[str]:
    """Files that are missing, different, or no longer generated."""
    expected = generate()
    problems = [rel for rel, text in expected.items()
                if not (directory / rel).is_file() or (directory / rel).read_text() != text]
    present = {str(p.relative_to(directory)) for p in directory.rglob("*.json")} if directory.exists() else set()
    problems += sorted(present - expected.keys())
    return sorted(problems)


def write(directory: Path = SCHEMA_DIR) -> int:
    expected = generate()
    for old in directory.rglob("*.json") if directory.exists() else []:
        if str(old.relative_to(directory)) not in expected:
            old.unlink()
    for rel, text in expected.items():
        path = directory / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return len(expected)


if __name__ == "__main__":
    count = write()
    print(f"wrote {count} schema files under {SCHEMA_DIR}", file=sys.stderr)
