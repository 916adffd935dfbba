"""Custom authentication and authorization for ``stategraph serve``, in the style of
LangGraph's ``Auth`` (port an auth module by importing ``Auth`` from here).

::

    from stategraph.server.auth import Auth

    auth = Auth()

    @auth.authenticate
    async def authenticate(authorization: str | None) -> Auth.types.MinimalUserDict:
        user = USERS.get((authorization or "").removeprefix("Bearer "))
        if user is None:
            raise Auth.exceptions.HTTPException(status_code=401, detail="Unknown token")
        return {"identity": user}

    @auth.on
    async def owner_only(ctx: Auth.types.AuthContext, value: dict):
        value.setdefault("metadata", {})["owner"] = ctx.user.identity
        return {"owner": ctx.user.identity}

Point ``langgraph.json`` at it: ``"auth": {"path": "./auth.py:auth"}``.

*Authenticate*: the handler receives what its parameters name (``request``,
``authorization``, ``headers``, ``path``, ``method``, ``query_params``, ``scope``)
and returns a user: a string identity, or a mapping with ``identity`` (and
``permissions``, ``display_name``, anything else); it raises
:class:`HTTPException` to refuse (401 by default).

*Authorize*: handlers registered with ``@auth.on`` (every request),
``@auth.on.threads`` (a resource), ``@auth.on.threads.create`` (a resource and an
action) or ``@auth.on.store`` run before the action; the most specific one wins. A
handler gets the :class:`AuthContext` and the request's value (a mutable dict: the
thread's metadata, the store item's namespace, ...). It returns ``None`` or ``True``
(allowed), ``False`` (403), or a *filter* dict: objects whose metadata does not match
it are invisible (a read gets 404; a search leaves them out). A filter value is a
plain value (equality), ``{"$eq": v}`` or ``{"$contains": v}`` (a list containing
``v``).

Resources and actions: ``assistants``, ``threads``, ``crons`` with ``create``,
``read``, ``update``, ``delete``, ``search`` (``threads`` also ``create_run``), and
``store`` (``put``, ``get``, ``search``, ``delete``, ``list_namespaces``).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict

__all__ = ["Auth", "AuthContext", "BaseUser", "HTTPException", "MinimalUserDict", "matches_filter"]

RESOURCES = ("assistants", "threads", "crons", "store")
ACTIONS = {
    "assistants": ("create", "read", "update", "delete", "search"),
    "threads": ("create", "read", "update", "delete", "search", "create_run"),
    "crons": ("create", "read", "update", "delete", "search"),
    "store": ("put", "get", "search", "delete", "list_namespaces"),
}

Handler = Callable[..., Awaitable[Any]]


class HTTPException(Exception):
    """Refuse a request from an auth handler (``status_code`` 401 unless given)."""

    def __init__(
        self,
        status_code: int = 401,
        detail: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self.status_code = status_code
        self.detail = detail or ("Unauthorized" if status_code == 401 else "Forbidden")
        self.headers = dict(headers or {})
        super().__init__(self.detail)


class MinimalUserDict(TypedDict, total=False):
    """What an authenticate handler may return (``identity`` required)."""

    identity: str
    display_name: str
    is_authenticated: bool
    permissions: Sequence[str]


@dataclass
class BaseUser:
    """The authenticated user handlers see as ``ctx.user``."""

    identity: str
    display_name: str = ""
    is_authenticated: bool = True
    permissions: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    def __getitem__(self, key: str) -> Any:
        if key in ("identity", "display_name", "is_authenticated", "permissions"):
            return getattr(self, key)
        return self.extra[key]

    def __getattr__(self, key: str) -> Any:
        extra = self.__dict__.get("extra") or {}
        if key in extra:
            return extra[key]
        raise AttributeError(key)

    def to_json(self) -> dict[str, Any]:
        """The user as JSON (what graphs see in ``config["configurable"]``)."""
        return {
            **self.extra,
            "identity": self.identity,
            "display_name": self.display_name or self.identity,
            "is_authenticated": self.is_authenticated,
            "permissions": list(self.permissions),
        }


@dataclass
class AuthContext:
    """What an authorization handler learns about the request."""

    user: BaseUser
    permissions: list[str]
    resource: str
    action: str


class _Types:
    MinimalUserDict = MinimalUserDict
    AuthContext = AuthContext
    BaseUser = BaseUser


class _Exceptions:
    HTTPException = HTTPException


class _Resource:
    def __init__(self, auth: Auth, resource: str) -> None:
        self._auth = auth
        self._resource = resource

    def __call__(self, fn: Handler | None = None) -> Any:
        if fn is None:  # @auth.on.store()
            return lambda f: self._auth._register(self._resource, "*", f)
        return self._auth._register(self._resource, "*", fn)

    def __getattr__(self, action: str) -> Callable[[Handler], Handler]:
        if action.startswith("_"):
            raise AttributeError(action)
        if action not in ACTIONS[self._resource]:
            raise AttributeError(
                f"auth.on.{self._resource} has no action '{action}': use one of "
                f"{', '.join(ACTIONS[self._resource])}."
            )
        return lambda fn: self._auth._register(self._resource, action, fn)


class _On:
    def __init__(self, auth: Auth) -> None:
        self._auth = auth

    def __call__(
        self, fn: Handler | None = None, *, resources: Any = None, actions: Any = None
    ) -> Any:
        def register(f: Handler) -> Handler:
            res = [resources] if isinstance(resources, str) else list(resources or ["*"])
            acts = [actions] if isinstance(actions, str) else list(actions or ["*"])
            for r in res:
                for a in acts:
                    self._auth._register(r, a, f)
            return f

        return register if fn is None else register(fn)

    def __getattr__(self, resource: str) -> _Resource:
        if resource.startswith("_"):
            raise AttributeError(resource)
        if resource not in RESOURCES:
            raise AttributeError(
                f"auth.on has no resource '{resource}': use one of {', '.join(RESOURCES)}."
            )
        return _Resource(self._auth, resource)


class Auth:
    """Authentication and authorization handlers (see the module docstring)."""

    types = _Types
    exceptions = _Exceptions

    def __init__(self) -> None:
        self._authenticate: Handler | None = None
        self._handlers: dict[tuple[str, str], Handler] = {}
        self.on = _On(self)

    def authenticate(self, fn: Handler) -> Handler:
        """Register the authenticate handler (one per Auth)."""
        if self._authenticate is not None:
            raise ValueError("An Auth has one authenticate handler; this one is the second.")
        self._authenticate = fn
        return fn

    def _register(self, resource: str, action: str, fn: Handler) -> Handler:
        if resource != "*" and resource not in RESOURCES:
            raise ValueError(
                f"Unknown auth resource '{resource}': use one of {', '.join(RESOURCES)}."
            )
        self._handlers[(resource, action)] = fn
        return fn

    # -- used by the server ----------------------------------------------------------
    @property
    def has_authenticate(self) -> bool:
        """Whether an authenticate handler is registered."""
        return self._authenticate is not None

    async def authenticate_request(self, available: Mapping[str, Any]) -> BaseUser:
        """Run the authenticate handler with the arguments it names; the user."""
        fn = self._authenticate
        if fn is None:
            return BaseUser("anonymous", is_authenticated=False)
        params = inspect.signature(fn).parameters
        kwargs = {name: available.get(name) for name in params}
        result = fn(**kwargs)
        if inspect.isawaitable(result):
            result = await result
        return _user(result)

    def _handler(self, resource: str, action: str) -> Handler | None:
        for key in ((resource, action), (resource, "*"), ("*", action), ("*", "*")):
            if key in self._handlers:
                return self._handlers[key]
        return None

    async def authorize(
        self, user: BaseUser | None, permissions: list[str], resource: str, action: str, value: Any
    ) -> dict[str, Any] | None:
        """Run the handler for ``resource``/``action``; the filter it returned, ``None``
        for none. Raises :class:`HTTPException` (403) when it refuses."""
        fn = self._handler(resource, action)
        if fn is None:
            return None
        ctx = AuthContext(
            user or BaseUser("anonymous", is_authenticated=False), permissions, resource, action
        )
        result = fn(ctx, value)
        if inspect.isawaitable(result):
            result = await result
        if result is None or result is True:
            return None
        if result is False:
            raise HTTPException(403, f"Not allowed to {action} {resource}.")
        if isinstance(result, Mapping):
            return dict(result)
        raise TypeError(
            f"The auth handler {getattr(fn, '__name__', fn)!r} returned {result!r}: return "
            "None/True (allow), False (refuse) or a filter dict."
        )


def _user(result: Any) -> BaseUser:
    if isinstance(result, BaseUser):
        return result
    if isinstance(result, str):
        return BaseUser(result)
    if isinstance(result, Mapping):
        if not result.get("identity"):
            raise TypeError("The authenticate handler returned a user without 'identity'.")
        extra = {
            k: v
            for k, v in result.items()
            if k not in ("identity", "display_name", "is_authenticated", "permissions")
        }
        return BaseUser(
            str(result["identity"]),
            str(result.get("display_name") or ""),
            bool(result.get("is_authenticated", True)),
            list(result.get("permissions") or []),
            extra,
        )
    identity = getattr(result, "identity", None)
    if identity:
        return BaseUser(
            str(identity),
            str(getattr(result, "display_name", "") or ""),
            bool(getattr(result, "is_authenticated", True)),
            list(getattr(result, "permissions", []) or []),
        )
    raise TypeError(
        f"The authenticate handler returned {result!r}: return a string identity or a dict "
        "with 'identity'."
    )


def matches_filter(metadata: Mapping[str, Any] | None, filters: Mapping[str, Any] | None) -> bool:
    """Whether ``metadata`` passes an auth filter (equality, ``$eq``, ``$contains``)."""
    if not filters:
        return True
    metadata = metadata or {}
    for key, want in filters.items():
        have = metadata.get(key)
        if isinstance(want, Mapping) and ("$eq" in want or "$contains" in want):
            if "$eq" in want and have != want["$eq"]:
                return False
            if "$contains" in want:
                needle = want["$contains"]
                items = needle if isinstance(needle, list) else [needle]
                if not isinstance(have, list) or not all(i in have for i in items):
                    return False
        elif have != want:
            return False
    return True
