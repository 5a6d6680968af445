"""The shape of a version's registry: per method, its params and result models and checks.

A version module (``v2026_07_28``, ``v2025_11_25``) builds one :class:`Version`
at import; :mod:`mcpeek.rules.models` wraps it with cached decoders. ``check_*`` hooks
run on the decoded object for what a model cannot say alone; ``strict`` is off
when another rule of the catalog already reports that part (see
``mcpeek.rules.families.schema``), on in the differential test.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from mcpeek.rules.models._base import Model, Problem

Check = Callable[[Any, bool], Problem | None]


class Method(NamedTuple):
    params: type[Model]
    result: type[Model] | None = None
    params_required: bool = True
    check_params: Check | None = None
    check_result: Check | None = None
    #: May answer ``resultType: input_required`` (2026-07-28 multi round-trip requests).
    retryable: bool = False
    #: May answer a task-augmented request with ``CreateTaskResult`` (2025-11-25).
    task: bool = False


class ErrorData(NamedTuple):
    """A defined error code whose ``data`` has a schema."""

    name: str
    model: type[Model]
    check: Check | None = None


class Version(NamedTuple):
    name: str
    requests: dict[str, Method]
    notifications: dict[str, Method]
    errors: dict[int, ErrorData]
    input_required: Method | None = None
    task_result: type[Model] | None = None


def without(version: Version, name: str, *methods: str, **changes: Any) -> Version:
    """An older version: this one minus some methods, with some entries replaced."""
    requests = {m: v for m, v in version.requests.items() if m not in methods}
    notifications = {m: v for m, v in version.notifications.items() if m not in methods}
    requests.update(changes.pop("requests", {}))
    notifications.update(changes.pop("notifications", {}))
    return version._replace(name=name, requests=requests, notifications=notifications, **changes)
