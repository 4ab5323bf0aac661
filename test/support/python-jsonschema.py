"""Validates JSON values against schemas of the OpenAPI document with Python's jsonschema.

An independent implementation of JSON Schema (and of regular expressions: Python's `re`),
as a client written in another language would use. Reads from standard input:
{"document": "<path of openapi.json>", "cases": [{"pointer": "/paths/...", "value": ..., "label": "..."}]}
and prints one JSON object: {"patterns": <how many compiled>, "failures": ["<label>: <message>", ...]}.
Every `pattern` of the document is compiled first; one that `re` cannot compile is a failure.
"""
import json
import re
import sys

import jsonschema


def patterns_of(node, path=""):
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "pattern" and isinstance(value, str):
                yield path + "/pattern", value
            yield from patterns_of(value, path + "/" + key)
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from patterns_of(value, path + "/" + str(index))


def main():
    request = json.load(sys.stdin)
    with open(request["document"], encoding="utf-8") as file:
        document = json.load(file)
    failures = []
    compiled = 0
    for where, pattern in patterns_of(document):
        try:
            re.compile(pattern)
            compiled += 1
        except re.error as error:
            failures.append(f"pattern at {where}: {error}")
    # Local $refs ("#/components/...") resolve against the whole document.
    resolver = jsonschema.RefResolver.from_schema(document)
    validators = {}
    for case in request["cases"]:
        pointer = case["pointer"]
        if pointer not in validators:
            validators[pointer] = jsonschema.Draft202012Validator({"$ref": "#" + pointer}, resolver=resolver)
        for error in validators[pointer].iter_errors(case["value"]):
            failures.append(f"{case['label']}: {error.message}")
    print(json.dumps({"patterns": compiled, "failures": failures}))


main()
