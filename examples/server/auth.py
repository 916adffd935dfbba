"""Tokens -> users; each user sees only their own threads, runs, crons and store items."""

from __future__ import annotations

import os
from typing import Any

from stategraph.server.auth import Auth

auth = Auth()

# in production: verify a JWT or ask your identity provider
TOKENS = {
    os.environ.get("ALICE_TOKEN", "alice-secret"): "alice",
    os.environ.get("BOB_TOKEN", "bob-secret"): "bob",
}


@auth.authenticate
async def authenticate(authorization: str | None) -> Auth.types.MinimalUserDict:
    user = TOKENS.get((authorization or "").removeprefix("Bearer ").strip())
    if user is None:
        raise Auth.exceptions.HTTPException(status_code=401, detail="Unknown token")
    return {"identity": user}


@auth.on
async def owner_only(ctx: Auth.types.AuthContext, value: dict[str, Any]) -> dict[str, Any]:
    """Stamp the owner on what a user creates; show each user only what they own."""
    metadata = value.setdefault("metadata", {})
    if isinstance(metadata, dict):
        metadata["owner"] = ctx.user.identity
    return {"owner": ctx.user.identity}


@auth.on.store()
async def own_namespace(ctx: Auth.types.AuthContext, value: dict[str, Any]) -> None:
    """Every user's store items live under their own namespace."""
    value["namespace"] = [ctx.user.identity, *value["namespace"]]
