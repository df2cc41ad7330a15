"""The API contract (``tb_plugin/api/openapi.yaml``) as the tests use it: one validator for every answer.

``check_answer(route, status, body)`` validates a JSON answer against the schema the contract gives for that
route and status; ``PluginClient.get`` (conftest.py) calls it on every JSON answer it receives, so every route
test checks the contract without saying so. ``check_schema(body, name)`` validates against one named schema,
for answers built without a request (a view called directly, the writer's manifest path). The document is
loaded and its validators built once per test process.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, Optional

import jsonschema
import yaml

CONTRACT_PATH = Path(__file__).resolve().parents[1] / "tb_plugin" / "api" / "openapi.yaml"


class _StrictLoader(yaml.SafeLoader):
    """A YAML loader that refuses a key given twice in one mapping: PyYAML keeps the last silently, while the
    frontend's type generator refuses the document, so a duplicated route or schema would pass here and break there."""


def _mapping_without_duplicates(loader: _StrictLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    seen: set[Any] = set()
    for key_node, _value in node.value:
        key = loader.construct_object(key_node)
        if key in seen:
            raise yaml.constructor.ConstructorError(None, None, f"key {key!r} given twice", key_node.start_mark)
        seen.add(key)
    return yaml.SafeLoader.construct_mapping(loader, node)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping_without_duplicates)


def load_strict(text: str) -> Any:
    """YAML text parsed with every mapping's keys distinct."""
    return yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - a SafeLoader subclass


@functools.lru_cache(maxsize=1)
def contract() -> dict[str, Any]:
    """The parsed OpenAPI document."""
    return load_strict(CONTRACT_PATH.read_text(encoding="utf-8"))


@functools.lru_cache(maxsize=None)
def _validator(schema_ref: str) -> jsonschema.Draft202012Validator:
    schema = {"$ref": schema_ref, "components": contract()["components"]}
    return jsonschema.Draft202012Validator(schema)


def _resolve(node: dict[str, Any]) -> dict[str, Any]:
    """A response object, following one ``$ref`` into components.responses."""
    ref = node.get("$ref")
    if ref is None:
        return node
    section, name = ref.split("/")[-2:]
    return contract()["components"][section][name]


def route_names() -> list[str]:
    """Every route of the contract, as the client spells it (``overview``, ``trace/slices``)."""
    return [path[1:] for path in contract()["paths"]]


def json_schema_ref(route: str, status: int = 200) -> Optional[str]:
    """The ``$ref`` of the JSON schema the contract gives for ``route`` answering ``status``, or None."""
    operation = contract()["paths"].get("/" + route, {}).get("get")
    if operation is None:
        return None
    response = operation.get("responses", {}).get(str(status))
    if response is None:
        return None
    schema = _resolve(response).get("content", {}).get("application/json", {}).get("schema", {})
    return schema.get("$ref")


def json_routes() -> list[str]:
    """The routes whose 200 answer is JSON with a schema."""
    return [route for route in route_names() if json_schema_ref(route) is not None]


def documented_statuses(route: str) -> set[int]:
    operation = contract()["paths"].get("/" + route, {}).get("get", {})
    return {int(code) for code in operation.get("responses", {}) if str(code).isdigit()}


def check_schema(payload: Any, schema_name: str) -> None:
    """Validates ``payload`` against ``#/components/schemas/<schema_name>``; raises ValidationError."""
    _validator(f"#/components/schemas/{schema_name}").validate(payload)


def check_answer(route: str, status: int, payload: Any) -> None:
    """Validates a JSON answer of ``route`` with ``status`` against the contract.

    A route the contract does not list fails. A status the route does not document is left to the test that
    asked (the hostile-input tests assert their own codes); a documented one is validated against its schema.
    """
    if "/" + route not in contract()["paths"]:
        raise AssertionError(f"route '{route}' answered {status} but tb_plugin/api/openapi.yaml does not describe it")
    ref = json_schema_ref(route, status)
    if ref is not None:
        _validator(ref).validate(payload)
