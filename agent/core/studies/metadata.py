"""What a study needs to know about the agent that produced a transcript.

``session_start`` records carry :func:`study_metadata`: the agent's version (and the checkout's
commit when run from one), the game, the player kind, the model, a hash of the effective config
with secrets removed, a hash of the prompt templates, and the study's free tags. Two sessions with
the same config hash ran with the same settings (tags aside: they label participants and
conditions and are recorded on their own), and the same template hash means the same prompts.
A game of a study (agent/core/studies/) adds the study's name, its plan's hash and its analysis
plan's hash (:func:`with_study`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

from agent.core.config import GameConfig
from agent.core.redact import MASK, Secrets
from agent.core.resources import PROJECT_DIR

DISTRIBUTION = "tangram-agent"
SECRET_FIELD_WORDS = ("token", "api_key", "password", "secret")
"""Config fields whose values never enter the hash (an api_key_env *name* is no secret)."""
MAX_TEMPLATE_FILES = 200


def agent_version() -> str:
    """The installed distribution's version (a checkout run without installing says so)."""
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return "0+unknown"


def source_revision(project: Path = PROJECT_DIR) -> str | None:
    """The commit a checkout is at (read from .git, no subprocess); None when installed."""
    git = project / ".git"
    try:
        head = (git / "HEAD").read_text(encoding="utf-8").strip()
        if not head.startswith("ref: "):
            return head[:40] or None
        ref = head[5:]
        ref_file = git / ref
        if ref_file.is_file():
            return ref_file.read_text(encoding="utf-8").strip()[:40] or None
        for line in (git / "packed-refs").read_text(encoding="utf-8").splitlines():
            if line.endswith(f" {ref}"):
                return line.split(" ", 1)[0][:40]
    except OSError:
        return None
    return None


def _scrub(value: Any, secrets: Secrets, key: str = "") -> Any:
    if isinstance(value, dict):
        return {k: _scrub(v, secrets, str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub(v, secrets) for v in value]
    lowered = key.lower()
    if value is not None and any(w in lowered for w in SECRET_FIELD_WORDS) and not lowered.endswith("_env"):
        return MASK
    if isinstance(value, str):
        return secrets.mask(value)
    return value


def effective_config(config: GameConfig) -> dict[str, Any]:
    """The config as it runs, every secret replaced by ``***``, without tags and its file's path."""
    data = config.model_dump(mode="json", exclude={"source", "tags"})
    scrubbed: dict[str, Any] = _scrub(data, Secrets(config.secret_values()))
    return scrubbed


def config_hash(config: GameConfig) -> str:
    """16 hex digits of the SHA-256 of :func:`effective_config` (canonical JSON)."""
    canonical = json.dumps(effective_config(config), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


def templates_hash(directory: Path | None) -> str | None:
    """16 hex digits over every ``*.j2`` file below ``directory`` (names and contents); None if none."""
    if directory is None or not directory.is_dir():
        return None
    files = sorted(directory.rglob("*.j2"))[:MAX_TEMPLATE_FILES]
    if not files:
        return None
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.relative_to(directory).as_posix().encode("utf-8") + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def study_metadata(config: GameConfig, templates: Path | None = None) -> dict[str, Any]:
    """The fields every game puts in its ``session_start`` records. Reads the template files: call
    it once at start-up, not per session."""
    return {
        "agent_version": agent_version(),
        "revision": source_revision(),
        "game": config.game,
        "player_kind": config.player,
        "model": config.llm.model if config.uses_llm() else None,
        "config_sha256": config_hash(config),
        "templates_sha256": templates_hash(templates) if config.uses_llm() else None,
        "tags": dict(config.tags),
    }


def with_study(metadata: Mapping[str, Any], study: str, plan_sha256: str, tags: Mapping[str, str],
               analysis_sha256: str | None = None) -> dict[str, Any]:
    """``metadata`` (from :func:`study_metadata`) for a game of a study: the study's name, its plan's
    hash, its analysis plan's hash (None: the study file declares none), and ``tags`` (participant,
    condition, order) over the config's own tags."""
    own = metadata.get("tags")
    return {**metadata, "study": study, "plan_sha256": plan_sha256, "analysis_sha256": analysis_sha256,
            "tags": {**(own if isinstance(own, Mapping) else {}), **tags}}
