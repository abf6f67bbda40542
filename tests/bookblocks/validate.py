""" "Run" a configuration block: parse YAML or JSON and check it against its schema where it has one.

A Kubernetes manifest (``apiVersion`` and ``kind`` of a built-in type) is validated offline against the
Kubernetes API schemas with kubernetes-validate; a row of a spec-data file against the book's pydantic
schema (mlbook.data.specdata); other YAML and JSON are parsed.  A Dockerfile cannot be built here (its base
image comes from a registry), so it must carry ``.needs-network``.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from bookblocks.markers import Block

KUBERNETES_VERSION = "1.33.0"  # the API version the manifests are checked against (schemas ship with the package)


def check(block: Block, root: Path):
    """The Result of validating one ``yaml``, ``json`` or ``dockerfile`` block."""
    from bookblocks.runner import Result, fail

    if block.runner == "dockerfile":
        return fail(block, "unmarked Dockerfile", "building needs a registry: mark it {.dockerfile .needs-network}")
    try:
        documents = [json.loads(block.source)] if block.runner == "json" else list(yaml.safe_load_all(block.source))
    except (ValueError, yaml.YAMLError) as exc:
        return fail(block, f"invalid {block.runner}", str(exc))
    for data in documents:
        problem = _schema_problem(data)
        if problem:
            return fail(block, "schema", problem)
    return Result(block, "passed")


def _schema_problem(data) -> str | None:
    """A schema violation in one parsed document, or None."""
    if isinstance(data, dict) and "apiVersion" in data and "kind" in data:
        return _kubernetes_problem(data)
    if isinstance(data, list) and data and isinstance(data[0], dict) and "dense_tflops" in data[0]:
        return _specdata_problem(data)
    return None


def _kubernetes_problem(data: dict) -> str | None:
    import kubernetes_validate

    try:
        kubernetes_validate.validate(data, KUBERNETES_VERSION, strict=True)
    except kubernetes_validate.SchemaNotFoundError:
        return None  # a custom resource (JobSet, TrainJob): no offline schema, parsing is the check
    except kubernetes_validate.ValidationError as exc:
        return f"{data['kind']}: {exc.message} at {'.'.join(str(p) for p in exc.path)}"
    return None


def _specdata_problem(rows: list) -> str | None:
    from pydantic import ValidationError

    from mlbook.data import specdata

    schema = specdata.SCHEMAS["accelerators"]
    for row in rows:
        try:
            schema.model_validate(row)
        except ValidationError as exc:
            return f"accelerators row {row.get('name')!r}: {exc.errors()[0]['msg']}"
    return None
