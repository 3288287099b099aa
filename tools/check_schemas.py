#!/usr/bin/python3
"""Validates JSON files against dfsim's JSON Schemas (docs/schemas/).

Usage: check_schemas.py FILE...   (the schema is chosen by the file's "format" field;
files without one are configs). Comments (// and /* */) are stripped first, as dfsim does.
Exit 0 if every file validates, 1 otherwise, printing one line per problem; 2 with one line
if a file is missing or is not JSON.
"""
import json
import pathlib
import re
import sys

import jsonschema
from tool_errors import BadInput, guard, parse_json, read_text

ROOT = pathlib.Path(__file__).resolve().parent.parent
SCHEMAS = {
    "dfsim.ops": "dfsim.ops.schema.json",
    "dfsim.kernels": "dfsim.kernels.schema.json",
    "dfsim.suite": "dfsim.suite.schema.json",
    "dfsim.sweep": "dfsim.sweep.schema.json",
    "dfsim.placement": "dfsim.placement.schema.json",
    "dfsim.model": "dfsim.model.schema.json",
    None: "dfsim.config.schema.json",
}


def strip_comments(text):
    # Removes // and /* */ comments outside strings.
    out, i, n, in_str = [], 0, len(text), False
    while i < n:
        c = text[i]
        if in_str:
            out.append(c)
            if c == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 1
            elif c == '"':
                in_str = False
        elif c == '"':
            in_str = True
            out.append(c)
        elif text.startswith("//", i):
            while i < n and text[i] != "\n":
                i += 1
            continue
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
            continue
        else:
            out.append(c)
        i += 1
    return "".join(out)


def schema_store():
    store = {}
    for f in sorted((ROOT / "docs" / "schemas").glob("*.schema.json")):
        schema = json.loads(f.read_text())
        store[schema["$id"]] = schema
    return store


def main(files):
    bad = 0
    cache = {}
    if not files:
        raise BadInput("expected one or more JSON files")
    docs = [parse_json(strip_comments(read_text(f, "a JSON file")), f) for f in files]  # all read before any line
    for f, doc in zip(files, docs):
        name = SCHEMAS.get(doc.get("format") if isinstance(doc, dict) else None)
        if name is None:
            print(f"{f}: unknown format {doc.get('format')!r}")
            bad += 1
            continue
        if name not in cache:
            schema = json.loads((ROOT / "docs" / "schemas" / name).read_text())
            # A schema may refer to another one by file name ("dfsim.sweep.schema.json#/$defs/..."):
            # every schema is in the store under its $id, so nothing is fetched.
            resolver = jsonschema.RefResolver.from_schema(schema, store=schema_store())
            cache[name] = jsonschema.Draft202012Validator(schema, resolver=resolver)
        errors = sorted(cache[name].iter_errors(doc), key=lambda e: list(e.path))
        for e in errors:
            path = "/" + "/".join(str(p) for p in e.path)
            print(f"{f}: {path}: {e.message}")
        bad += bool(errors)
        if not errors:
            print(f"{f}: ok ({name})")
    return 1 if bad else 0


if __name__ == "__main__":
    if any(a in ("-h", "--help") for a in sys.argv[1:]):
        print(__doc__.strip())
        sys.exit(0)
    guard(main, sys.argv[1:])
