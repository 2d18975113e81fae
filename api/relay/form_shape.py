"""What a route's multipart form may carry (read and held to it by api/relay/forms.py), and the
audio routes' forms; the image edit's is api/relay/image_edit_form.py's, the video's
api/relay/tasks/video_shape.py's. A module of its own: the routes' modules and api/relay/modes.py
name their shapes without importing the reader (which imports the pipeline's job)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class FormShape:
    """The names of a form's text fields and of its file parts, and how many parts it may have in
    all (a name sent more than once counts each time)."""

    fields: frozenset[str]
    files: frozenset[str]
    max_parts: int
    file_required: bool = True  # at least one file part (audio, image edits; not a video)


# The playground's `group` (api/relay/handler.py takes it out of the fields) may come in any form.
PLAYGROUND_FIELDS = frozenset({"group"})
# OpenAI's translation and transcription parameters (openai-python types/audio/translation_create_params.py,
# transcription_create_params.py); the SDK sends a list as one `name[]` field a value, others send `name`.
TRANSLATION = FormShape(frozenset({"model", "prompt", "response_format", "temperature"}) | PLAYGROUND_FIELDS,
                        frozenset({"file"}), max_parts=16)
TRANSCRIPTION = FormShape(
    TRANSLATION.fields | {"language", "stream", "include", "include[]", "timestamp_granularities",
                          "timestamp_granularities[]", "chunking_strategy", "chunking_strategy[type]",
                          "chunking_strategy[prefix_padding_ms]", "chunking_strategy[silence_duration_ms]",
                          "chunking_strategy[threshold]", "known_speaker_names[]", "known_speaker_references[]"},
    frozenset({"file"}), max_parts=32)
