"""The typed models agree with the official JSON Schemas, message by message.

Every official example of 2026-07-28 (``examples/``), and some six thousand
generated instances of 2026-07-28 and 2025-11-25 (valid ones drawn from
``schema.json`` itself, then mutated: members dropped, types swapped, enums and
bounds broken, members added), are validated twice: by :mod:`mcpeek.rules.models`
(``strict``, so nothing is left to other rules) and by ``jsonschema`` (Draft
2020-12, ``$ref`` resolved only inside the local file). The verdicts must agree.
Each method's params, each result (and its ``InputRequiredResult`` /
``CreateTaskResult`` alternative) and each defined error's ``data`` is a target.

Known, deliberate differences are kept out of the comparison, each listed in
``FROZEN`` / the generator with the reason:

- ``JSONObject``/``JSONValue`` contents: ``schema.json`` allows only string,
  integer, boolean, object and array values; the TypeScript source of truth
  (``JSONValue = string | number | boolean | null | …``) also floats and null,
  and the models follow it. Nothing is mutated inside them.
- ``ElicitResult.content`` values: ``integer`` in ``schema.json``, ``number`` in
  the TypeScript (a NumberSchema field answers 2.5); likewise.
- Integral floats (``3.0``) where an integer is expected: JSON Schema counts
  them as integers, msgspec does not. Never generated there.
- ``resultType``: ``schema.json`` has ``CallToolResult | InputRequiredResult``
  (and the same for prompts/get, resources/read) undiscriminated, so anything
  with a string ``resultType`` passes as an ``InputRequiredResult``. The models
  read the result by its ``resultType`` as the spec says ("clients can use [it]
  to determine how to parse and handle the result object"), so each branch is
  compared on its own, with ``resultType`` fixed to ``complete`` or
  ``input_required`` (it may still be dropped or given another type).
- Defined errors: only ``data`` is the models' business (``code`` and
  ``message`` are the envelope rules'), so only ``data`` is mutated.
- One official example fails its own schema (``INVALID_EXAMPLES``); the models
  reject it too.
"""

from __future__ import annotations

import copy
import functools
import json
from pathlib import Path
from typing import Any, NamedTuple

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from mcpeek.rules.models import spec_for
from tests.conftest import VENDORED_SPEC

SPEC_ROOT = VENDORED_SPEC
MODERN, LEGACY = "2026-07-28", "2025-11-25"


def spec_dir() -> Path:
    if not (SPEC_ROOT / MODERN / "schema.json").is_file():
        pytest.fail(
            f"the official MCP schemas are not at {SPEC_ROOT} (tests/vendor/spec/<version>/"
            "schema.json in the repository); the differential test needs them",
            pytrace=False,
        )
    return SPEC_ROOT


@functools.cache
def schema(version: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((spec_dir() / version / "schema.json").read_text())
    return data


@functools.cache
def registry(version: str) -> Registry:
    """The one local document; no retrieval, so a non-local ``$ref`` fails."""
    resource: Resource[Any] = Resource.from_contents(schema(version), DRAFT202012)
    return Registry().with_resource(f"urn:mcp:{version}", resource)


@functools.cache
def validator(version: str, pointer: str) -> Draft202012Validator:
    return Draft202012Validator(
        {"$ref": f"urn:mcp:{version}#{pointer}"}, registry=registry(version)
    )


def official(version: str, pointer: str, instance: Any) -> bool:
    return validator(version, pointer).is_valid(instance)


# -- the targets: what a method's params, result or error data are ----------------------------
class Target(NamedTuple):
    kind: str  # params, notification, result, input_required, task, error
    method: str  # or the error code
    pointer: str  # what schema.json says it is

    def ours(self, version: str, instance: Any) -> bool:
        spec = spec_for(version)
        raw = msgspec.json.encode(instance)
        if self.kind in ("params", "notification"):
            notification = self.kind == "notification"
            return spec.check_params(self.method, raw, notification=notification) is None
        if self.kind in ("result", "input_required", "task"):
            return spec.check_result(self.method, raw) is None
        return spec.check_error(raw) is None


RESULTS = {
    MODERN: {
        "server/discover": "DiscoverResult",
        "resources/list": "ListResourcesResult",
        "resources/templates/list": "ListResourceTemplatesResult",
        "resources/read": "ReadResourceResult",
        "subscriptions/listen": "SubscriptionsListenResult",
        "prompts/list": "ListPromptsResult",
        "prompts/get": "GetPromptResult",
        "tools/list": "ListToolsResult",
        "tools/call": "CallToolResult",
        "completion/complete": "CompleteResult",
        "sampling/createMessage": "CreateMessageResult",
        "roots/list": "ListRootsResult",
        "elicitation/create": "ElicitResult",
    },
    LEGACY: {
        "initialize": "InitializeResult",
        "ping": "EmptyResult",
        "resources/list": "ListResourcesResult",
        "resources/templates/list": "ListResourceTemplatesResult",
        "resources/read": "ReadResourceResult",
        "resources/subscribe": "EmptyResult",
        "resources/unsubscribe": "EmptyResult",
        "prompts/list": "ListPromptsResult",
        "prompts/get": "GetPromptResult",
        "tools/list": "ListToolsResult",
        "tools/call": "CallToolResult",
        "tasks/get": "GetTaskResult",
        "tasks/result": "GetTaskPayloadResult",
        "tasks/cancel": "CancelTaskResult",
        "tasks/list": "ListTasksResult",
        "logging/setLevel": "EmptyResult",
        "completion/complete": "CompleteResult",
        "sampling/createMessage": "CreateMessageResult",
        "roots/list": "ListRootsResult",
        "elicitation/create": "ElicitResult",
    },
}
ERRORS = {
    MODERN: {
        -32021: "MissingRequiredClientCapabilityError",
        -32022: "UnsupportedProtocolVersionError",
    },
    LEGACY: {-32042: "URLElicitationRequiredError"},
}


@functools.cache
def message_defs(version: str) -> dict[str, str]:
    """method → the definition of its request or notification (``Request`` → ``params``)."""
    found: dict[str, str] = {}
    for name, definition in schema(version)["$defs"].items():
        method = definition.get("properties", {}).get("method", {}).get("const")
        if method is not None and name not in ("ClientNotification",):
            found[method] = name
    return found


@functools.cache
def targets(version: str) -> list[Target]:
    spec = spec_for(version)
    defs = message_defs(version)
    out: list[Target] = []
    for table, kind in (
        (spec.version.requests, "params"),
        (spec.version.notifications, "notification"),
    ):
        for method in table:
            out.append(Target(kind, method, f"/$defs/{defs[method]}/properties/params"))
    out += [Target("result", m, f"/$defs/{d}") for m, d in RESULTS[version].items()]
    if version == MODERN:
        out += [
            Target("input_required", m, "/$defs/InputRequiredResult")
            for m in ("tools/call", "prompts/get", "resources/read")
        ]
    if version == LEGACY:  # a task-augmented request may be answered with a task
        out += [
            Target("task", m, "/$defs/CreateTaskResult")
            for m in ("tools/call", "sampling/createMessage", "elicitation/create")
        ]
    out += [
        Target("error", str(c), f"/$defs/{d}/properties/error") for c, d in ERRORS[version].items()
    ]
    return out


def test_every_method_has_a_target_both_ways() -> None:
    for version in (MODERN, LEGACY):
        spec = spec_for(version)
        assert set(RESULTS[version]) == set(spec.version.requests)
        assert set(defs := message_defs(version)) >= set(spec.version.requests) | set(
            spec.version.notifications
        ), defs
        assert {str(c) for c in spec.version.errors} == {str(c) for c in ERRORS[version]}


@pytest.mark.parametrize("version", [MODERN, LEGACY])
def test_absent_params_required_exactly_when_the_schema_says(version: str) -> None:
    spec = spec_for(version)
    for method, name in message_defs(version).items():
        definition = schema(version)["$defs"][name]
        if "jsonrpc" not in definition["properties"]:
            continue  # 2026-07-28 input requests: never a message of their own
        notification = method in spec.version.notifications
        if spec.method(method, notification=notification) is None:
            continue
        required = "params" in definition.get("required", [])
        assert (spec.check_params(method, None, notification=notification) is not None) == required


# -- every official example -----------------------------------------------------------------
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
}
CACHE = {"resultType": "complete", "ttlMs": 0, "cacheScope": "public"}
PARAMS = {  # examples of a method's params, by type name
    "CallToolRequestParams": "tools/call",
    "GetPromptRequestParams": "prompts/get",
    "CompleteRequestParams": "completion/complete",
    "CreateMessageRequestParams": "sampling/createMessage",
    "ElicitRequestFormParams": "elicitation/create",
    "ElicitRequestURLParams": "elicitation/create",
    "PaginatedRequestParams": "tools/list",
    "CancelledNotificationParams": "notifications/cancelled",
    "ProgressNotificationParams": "notifications/progress",
    "LoggingMessageNotificationParams": "notifications/message",
    "ResourceUpdatedNotificationParams": "notifications/resources/updated",
}
WRAPPED = {  # other types: placed where a message carries them
    "Tool": ("tools/list", lambda x: {**CACHE, "tools": [x]}),
    "Resource": ("resources/list", lambda x: {**CACHE, "resources": [x]}),
    "TextResourceContents": ("resources/read", lambda x: {**CACHE, "contents": [x]}),
    "BlobResourceContents": ("resources/read", lambda x: {**CACHE, "contents": [x]}),
    "ServerCapabilities": (
        "server/discover",
        lambda x: {**CACHE, "supportedVersions": [MODERN], "capabilities": x},
    ),
    "Root": ("roots/list", lambda x: {"roots": [x]}),
    "ToolUseContent": (
        "sampling/createMessage",
        lambda x: {"role": "user", "model": "m", "content": x},
    ),
    "ToolResultContent": (
        "sampling/createMessage",
        lambda x: {"role": "user", "model": "m", "content": x},
    ),
    "InputRequests": ("tools/call", lambda x: {"resultType": "input_required", "inputRequests": x}),
    **{
        name: ("tools/call", lambda x: {"resultType": "complete", "content": [x]})
        for name in (
            "TextContent",
            "ImageContent",
            "AudioContent",
            "ResourceLink",
            "EmbeddedResource",
        )
    },
}
WRAPPED_PARAMS = {
    "ClientCapabilities": (
        "tools/list",
        lambda x: {"_meta": {**META, "io.modelcontextprotocol/clientCapabilities": x}},
    ),
    "InputResponses": ("tools/call", lambda x: {"_meta": META, "name": "t", "inputResponses": x}),
    "SamplingMessage": ("sampling/createMessage", lambda x: {"maxTokens": 1, "messages": [x]}),
    "ModelPreferences": (
        "sampling/createMessage",
        lambda x: {"maxTokens": 1, "messages": [], "modelPreferences": x},
    ),
    **{
        name: (
            "elicitation/create",
            lambda x: {
                "message": "m",
                "requestedSchema": {"type": "object", "properties": {"f": x}},
            },
        )
        for name in (
            "StringSchema",
            "NumberSchema",
            "BooleanSchema",
            "UntitledSingleSelectEnumSchema",
            "TitledSingleSelectEnumSchema",
            "UntitledMultiSelectEnumSchema",
            "TitledMultiSelectEnumSchema",
        )
    },
}


#: Official examples that their own schema rejects (the models reject them too).
INVALID_EXAMPLES = {
    # no ttlMs / cacheScope, which ReadResourceResult requires (the -with-ttl one has them)
    "ReadResourceResultResponse/read-resource-result-response.json",
}


def examples() -> list[Path]:
    return sorted((spec_dir() / MODERN / "examples").glob("*/*.json"))


def classify(path: Path) -> tuple[Target, Any]:
    """What an example is, as a (target, instance) pair to validate both ways."""
    name, value = path.parent.name, json.loads(path.read_text())
    targets_by = {(t.kind, t.method): t for t in targets(MODERN)}
    results = {d: m for m, d in RESULTS[MODERN].items()}
    if "jsonrpc" in value and "error" in value:
        code = value["error"]["code"]
        pointer = f"/$defs/{name}/properties/error"
        return Target("error", str(code), pointer), value["error"]
    if "code" in value and "message" in value:  # an error object (InternalError…)
        return Target("error", str(value["code"]), f"/$defs/{name}"), value
    if "method" in value:  # a request, a notification, or a 2026-07-28 input request
        kind = "notification" if value["method"].startswith("notifications/") else "params"
        return targets_by[(kind, value["method"])], value.get("params")
    if "jsonrpc" in value:  # a result response
        method = results[name.removesuffix("Response")]
        kind = (
            "input_required" if value["result"].get("resultType") == "input_required" else "result"
        )
        return targets_by[(kind, method)], value["result"]
    if name in PARAMS:
        kind = "notification" if PARAMS[name].startswith("notifications/") else "params"
        return targets_by[(kind, PARAMS[name])], value
    if name in results:
        return targets_by[("result", results[name])], value
    if name == "InputRequiredResult":
        return targets_by[("input_required", "tools/call")], value
    if name in WRAPPED:
        method, wrap = WRAPPED[name]
        kind = "input_required" if name == "InputRequests" else "result"
        return targets_by[(kind, method)], wrap(value)
    if name in WRAPPED_PARAMS:
        method, wrap = WRAPPED_PARAMS[name]
        return targets_by[("params", method)], wrap(value)
    raise AssertionError(f"example {path.parent.name}/{path.name} is not classified")


def test_there_are_official_examples() -> None:
    assert len(examples()) >= 100


def example_paths() -> list[Path]:
    """At collection time; without the spec texts, one case that fails (never a skip)."""
    return examples() if (SPEC_ROOT / MODERN).is_dir() else [SPEC_ROOT / MODERN / "missing"]


@pytest.mark.parametrize("path", example_paths(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_official_example(path: Path) -> None:
    spec_dir()
    target, instance = classify(path)
    if instance is None:  # a message without params: required or not, both ways
        spec = spec_for(MODERN)
        ours = spec.check_params(target.method, None, notification=target.kind == "notification")
        theirs = official(MODERN, f"/$defs/{path.parent.name}", json.loads(path.read_text()))
        assert (ours is None) == theirs
        return
    theirs = official(MODERN, target.pointer, instance)
    assert target.ours(MODERN, instance) == theirs
    shown = f"{path.parent.name}/{path.name}"
    assert theirs != (shown in INVALID_EXAMPLES), f"{shown} against {target.pointer}"


# -- generated instances ------------------------------------------------------------------
#: Definitions whose inside is never mutated: the models follow the TypeScript there.
FROZEN = {
    "/$defs/JSONObject",
    "/$defs/JSONValue",
    "/$defs/JSONArray",
    "/$defs/ElicitResult/properties/content",
}
#: What a member may become: null, bool, a non-integral float (never 3.0: see the module
#: doc), an integer, a string, an empty array or object. Flat on purpose: a nested null
#: or float would land inside a JSONObject.
POOL: list[Any] = [None, True, 1.5, 7, "s", [], {}]
EXTRA_KEYS = ["x-extra", "com.example/extra", "zz"]
ALPHABET = "abcXYZ09_-/. é"
MAX_DEPTH = 6
#: Every choice the generator makes comes from this tape: one draw per example, which
#: hypothesis shrinks towards zeros (the first option, the shortest string…).
TAPE = st.lists(st.integers(0, 2**16 - 1), max_size=300)


class Tape:
    def __init__(self, values: list[int]) -> None:
        self.values = values
        self.at = 0

    def next(self) -> int:
        self.at += 1
        return self.values[self.at - 1] if self.at <= len(self.values) else 0

    def below(self, n: int) -> int:
        return self.next() % n if n > 0 else 0

    def pick(self, options: list[Any]) -> Any:
        return options[self.below(len(options))]

    def flip(self) -> bool:
        return self.below(2) == 1

    def integer(self, low: int, high: int) -> int:
        span = high - low + 1
        raw = self.next() * 65_536 + self.next()
        return low + raw % span if span < 2**32 else low + raw

    def number(self, low: float | None, high: float | None) -> float | int:
        lo = -1000.0 if low is None else float(low)
        hi = 1000.0 if high is None else float(high)
        if self.flip():
            return self.integer(int(-(-lo // 1)), int(hi // 1))
        value = lo + (hi - lo) * self.next() / 65_535
        return value if value != int(value) else value + (0.25 if value + 0.25 <= hi else -0.25)

    def text(self) -> str:
        return "".join(self.pick(list(ALPHABET)) for _ in range(self.below(7)))

    def anything(self, depth: int = 0) -> Any:
        """Any JSON value (an empty schema)."""
        kind = self.below(7 if depth < 2 else 5)
        if kind == 0:
            return None
        if kind == 1:
            return self.flip()
        if kind == 2:
            return self.integer(-(10**6), 10**6)
        if kind == 3:
            return self.text()
        if kind == 4:
            return 2.5
        if kind == 5:
            return [self.anything(depth + 1) for _ in range(self.below(3))]
        return {self.text(): self.anything(depth + 1) for _ in range(self.below(3))}


class Node(NamedTuple):
    path: tuple[str | int, ...]
    schema: dict[str, Any]
    frozen: bool


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    return {float: "number", str: "string", list: "array", dict: "object"}[type(value)]


Path_ = tuple[str | int, ...]


class Generator:
    """Valid instances of a schema.json definition, remembering every node for mutation."""

    def __init__(self, version: str, tape: Tape) -> None:
        self.root = schema(version)
        self.tape = tape
        self.nodes: list[Node] = []

    def resolve(self, sch: dict[str, Any], pointer: str) -> tuple[dict[str, Any], str]:
        while "$ref" in sch:
            pointer = sch["$ref"].removeprefix("#")
            sch = self.root
            for part in pointer.strip("/").split("/"):
                sch = sch[part.replace("~1", "/").replace("~0", "~")]
        return sch, pointer

    def gen(self, sch: Any, pointer: str, path: Path_, depth: int, record: bool) -> Any:
        sch, pointer = self.resolve(sch, pointer)
        frozen = pointer in FROZEN
        if record:
            self.nodes.append(Node(path, sch, frozen))
        record = record and not frozen
        tape = self.tape
        if "const" in sch:
            return sch["const"]
        if "enum" in sch:
            return tape.pick(sch["enum"])
        if "anyOf" in sch:
            options = list(enumerate(sch["anyOf"]))
            if depth > MAX_DEPTH:  # the JSONValue recursion: end on a scalar
                scalars = [o for o in options if "$ref" not in o[1] and "items" not in o[1]]
                options = scalars or options
            i, option = tape.pick(options)
            return self.gen(option, f"{pointer}/anyOf/{i}", path, depth, record)
        if "allOf" in sch:
            return self.gen(self.merged(sch["allOf"], pointer), pointer, path, depth, False)
        kind = sch.get("type")
        if isinstance(kind, list):
            kind = tape.pick(kind)
        if kind is None and "properties" in sch:
            kind = "object"
        if kind == "object":
            return self.object(sch, pointer, path, depth, record)
        if kind == "array":
            limit = 0 if depth > MAX_DEPTH else min(sch.get("maxItems", 3), 3)
            item = sch.get("items", {})
            return [
                self.gen(item, f"{pointer}/items", (*path, i), depth + 1, record)
                for i in range(tape.below(limit + 1))
            ]
        if kind == "string":
            return tape.text()
        if kind == "integer":
            return tape.integer(sch.get("minimum", -(2**40)), sch.get("maximum", 2**40))
        if kind == "number":
            return tape.number(sch.get("minimum"), sch.get("maximum"))
        if kind == "boolean":
            return tape.flip()
        if kind == "null":
            return None
        return tape.anything()  # an empty schema

    def object(
        self, sch: dict[str, Any], pointer: str, path: Path_, depth: int, record: bool
    ) -> Any:
        props: dict[str, Any] = sch.get("properties", {})
        required = set(sch.get("required", []))
        out: dict[str, Any] = {}
        for key, sub in props.items():
            if key in required or (depth <= MAX_DEPTH and self.tape.flip()):
                child = f"{pointer}/properties/{key.replace('~', '~0').replace('/', '~1')}"
                out[key] = self.gen(sub, child, (*path, key), depth + 1, record)
        extra = sch.get("additionalProperties", True)
        if extra is not False and depth <= MAX_DEPTH:
            for _ in range(self.tape.below(3 if not props else 2)):
                key = self.tape.pick(EXTRA_KEYS)
                if key not in props and key not in out:
                    child = f"{pointer}/additionalProperties"
                    value_schema = extra if isinstance(extra, dict) else {}
                    out[key] = self.gen(value_schema, child, (*path, key), depth + 1, record)
        return out

    def merged(self, members: list[Any], pointer: str) -> dict[str, Any]:
        """``allOf`` of object schemas: their members and requirements together."""
        out: dict[str, Any] = {"type": "object", "properties": {}, "required": []}
        for member in members:
            sch, _ = self.resolve(member, pointer)
            for key, sub in sch.get("properties", {}).items():
                if key not in out["properties"] or "const" in sub:
                    out["properties"][key] = sub
            out["required"] += sch.get("required", [])
        return out


def instance_of(version: str, target: Target, gen: Generator) -> Any:
    if target.kind == "error":
        error, _ = gen.resolve({"$ref": f"#{target.pointer}"}, "")
        data = gen.merged(error["allOf"], "")["properties"]["data"]
        return {
            "code": int(target.method),
            "message": "m",
            "data": gen.gen(data, "", ("data",), 1, True),
        }
    value = gen.gen({"$ref": f"#{target.pointer}"}, "", (), 0, True)
    if (
        version == MODERN
        and target.kind in ("result", "input_required")
        and isinstance(value, dict)
    ):
        value["resultType"] = "input_required" if target.kind == "input_required" else "complete"
        gen.nodes = [n for n in gen.nodes if n.path != ("resultType",)]  # fixed: see the doc
    return value


def mutations(node: Node, current: Any) -> list[tuple[str, Any]]:
    """(what, new value or key) pairs that may break ``current`` at ``node``."""
    sch = node.schema
    kinds: set[str] | None = None
    if "const" in sch or "enum" in sch:
        kinds = {json_type(v) for v in (sch["enum"] if "enum" in sch else [sch["const"]])}
    elif "type" in sch:
        kinds = set(sch["type"]) if isinstance(sch["type"], list) else {sch["type"]}
        if "number" in kinds:
            kinds.add("integer")
    out: list[tuple[str, Any]] = [
        ("retype", v) for v in POOL if kinds is None or json_type(v) not in kinds
    ]
    if "const" in sch or "enum" in sch:
        out.append(("retype", "zz-not-a-value"))
    integral = kinds == {"integer"}
    if isinstance(sch.get("minimum"), int | float):
        out.append(("retype", sch["minimum"] - (1 if integral else 0.5)))
    if isinstance(sch.get("maximum"), int | float):
        out.append(("retype", sch["maximum"] + (1 if integral else 0.5)))
    if isinstance(sch.get("maxItems"), int) and isinstance(current, list):
        out.append(("retype", (current or ["x"]) * (sch["maxItems"] + 1)))
    if isinstance(current, dict):
        out += [("delete", key) for key in current]
        if not node.frozen:
            out += [("extra", v) for v in POOL]
    return out


def apply(value: Any, path: Path_, what: str, change: Any) -> Any:
    if not path and what == "retype":
        return change
    value = copy.deepcopy(value)
    holder = value
    for step in path if what != "retype" else path[:-1]:
        holder = holder[step]
    if what == "delete":
        del holder[change]
    elif what == "extra":
        holder["x-added"] = change
    else:
        holder[path[-1]] = change
    return value


def compare(version: str, target: Target, value: Any, note: str) -> bool:
    theirs = official(version, target.pointer, value)
    if target.ours(version, value) != theirs:
        raise AssertionError(
            f"{version} {target.kind} {target.method} ({note}): schema.json says "
            f"{'valid' if theirs else 'invalid'}, the models disagree, for "
            f"{json.dumps(value)[:800]}"
        )
    return theirs


SETTINGS = settings(
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@pytest.mark.e2e  # thousands of generated instances, each validated twice
@pytest.mark.parametrize(("version", "count"), [(MODERN, 1500), (LEGACY, 600)])
def test_generated_valid_instances_agree(version: str, count: int) -> None:
    seen = {"all": 0, "valid": 0}

    @settings(SETTINGS, max_examples=count)
    @given(st.sampled_from(targets(version)), TAPE)
    def check(target: Target, tape: list[int]) -> None:
        value = instance_of(version, target, Generator(version, Tape(tape)))
        seen["all"] += 1
        seen["valid"] += compare(version, target, value, "generated")

    check()
    assert seen["valid"] >= 0.9 * seen["all"], seen  # the generator makes valid instances


@pytest.mark.e2e
@pytest.mark.parametrize(("version", "count"), [(MODERN, 3000), (LEGACY, 1000)])
def test_mutated_instances_agree(version: str, count: int) -> None:
    seen = {"all": 0, "invalid": 0}

    @settings(SETTINGS, max_examples=count)
    @given(st.sampled_from(targets(version)), TAPE, st.integers(0, 2**16), st.integers(0, 2**16))
    def check(target: Target, tape: list[int], where: int, how: int) -> None:
        gen = Generator(version, Tape(tape))
        value = instance_of(version, target, gen)
        node = gen.nodes[where % len(gen.nodes)]
        current = value
        for step in node.path:
            current = current[step]
        options = mutations(node, current)
        if options:
            what, change = options[how % len(options)]
            seen["all"] += 1
            seen["invalid"] += not compare(
                version,
                target,
                apply(value, node.path, what, change),
                f"{what} {change!r} at {node.path}",
            )

    check()
    assert 0.3 * seen["all"] <= seen["invalid"] <= 0.98 * seen["all"], seen
