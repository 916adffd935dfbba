"""Two users; each sees only what their metadata or namespace names (test app)."""

from __future__ import annotations

from typing import Any

from stategraph.server.auth import Auth

auth = Auth()

TOKENS = {"alice-token": "alice", "bob-token": "bob"}


@auth.authenticate
async def authenticate(authorization: str | None) -> Auth.types.MinimalUserDict:
    token = (authorization or "").removeprefix("Bearer ").strip()
    user = TOKENS.get(token)
    if user is None:
        raise Auth.exceptions.HTTPException(status_code=401, detail="Unknown or missing token")
    return {"identity": user, "permissions": ["read", "write"]}


@auth.on
async def owner_only(ctx: Auth.types.AuthContext, value: dict[str, Any]) -> dict[str, Any]:
    metadata = value.setdefault("metadata", {})
    if isinstance(metadata, dict):
        metadata["owner"] = ctx.user.identity
    return {"owner": ctx.user.identity}


@auth.on.store()
async def own_namespace(ctx: Auth.types.AuthContext, value: dict[str, Any]) -> None:
    value["namespace"] = [ctx.user.identity, *value["namespace"]]


@auth.on.assistants.delete
async def no_deletes(ctx: Auth.types.AuthContext, value: dict[str, Any]) -> bool:
    return False
