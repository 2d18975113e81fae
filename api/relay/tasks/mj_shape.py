"""Midjourney's routes as the clients know them (midjourney-proxy's API, relayed by api/relay/tasks/routes.py):
the priced model of an action, the actions a change or a button names, the prompt's mode flags, and a
drawing row answered as midjourney-proxy answers a fetch. The protocol itself is
api/upstream/providers/midjourney.py."""
from __future__ import annotations

import re
from typing import Any

import orjson

from api.services.task_callbacks import public_properties

MODE_FLAGS = re.compile(r"\s*--(?:fast|relax|turbo)\b")
CHANGE_ACTIONS = frozenset({"UPSCALE", "VARIATION", "REROLL"})


def model_of(action: str) -> str:
    """The priced model of an action: mj_imagine, mj_upscale, …; face swap is swap_face."""
    return "swap_face" if action == "SWAP_FACE" else f"mj_{action.lower()}"


def simple_change(content: Any) -> tuple[str, str, int] | None:
    """"<task id> U2" → (task id, UPSCALE, 2); "<id> V1" → VARIATION; "<id> R" → REROLL."""
    if not isinstance(content, str):
        return None
    parts = content.split()
    if len(parts) != 2:
        return None
    task_id, code = parts[0], parts[1].lower()
    if code == "r":
        return task_id, "REROLL", 0
    if len(code) == 2 and code[0] in "uv" and code[1] in "1234":
        return task_id, "UPSCALE" if code[0] == "u" else "VARIATION", int(code[1])
    return None


def action_of_custom_id(custom_id: Any) -> str | None:
    """A Plus button's customId ("MJ::JOB::upsample::2::<hash>") → the action it performs."""
    if not isinstance(custom_id, str) or not custom_id.startswith("MJ::"):
        return None
    parts = custom_id.split("::")
    name = parts[2] if len(parts) > 2 and parts[1] == "JOB" else parts[1] if len(parts) > 1 else ""
    table = {"upsample": "UPSCALE", "variation": "VARIATION", "low_variation": "LOW_VARIATION",
             "high_variation": "HIGH_VARIATION", "reroll": "REROLL", "Outpaint": "ZOOM", "CustomZoom": "CUSTOM_ZOOM",
             "Inpaint": "INPAINT"}
    if name in table:
        return table[name]
    if name.startswith("pan_"):
        return "PAN"
    if name.startswith("upsample_"):  # upsample_v6_2x_subtle and the like
        return "UPSCALE"
    return None


def clear_mode(prompt: Any) -> Any:
    """The prompt without --fast/--relax/--turbo (option MjModeClearEnabled)."""
    return MODE_FLAGS.sub("", prompt) if isinstance(prompt, str) else prompt


def task_answer(row: Any, image_url: str) -> dict[str, Any]:
    """A task row as midjourney-proxy answers a fetch (camelCase, times in milliseconds)."""
    def parsed(text: str, empty: Any) -> Any:
        try:
            return orjson.loads(text) if text else empty
        except orjson.JSONDecodeError:
            return empty

    return {"id": row.mj_id, "action": row.action, "prompt": row.prompt, "promptEn": row.prompt_en,
            "description": row.description, "state": row.state, "submitTime": row.submit_time,
            "startTime": row.start_time, "finishTime": row.finish_time, "imageUrl": image_url,
            "status": row.status, "progress": row.progress, "failReason": row.fail_reason,
            "buttons": parsed(row.buttons, []), "properties": parsed(public_properties(row.properties), {})}
