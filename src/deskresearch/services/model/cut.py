"""A prompt the server cut to fit its context, told by how few tokens it says it read.

Ollama, on a prompt longer than the context it loaded the model with, keeps the first few
tokens and the end, about half its context in all, and answers without a word (its log says
"truncating input prompt"). The answer then comes from a prompt that lost its instructions.
The server's own count of the prompt tokens gives it away: far fewer than the prompt's size
allows. Hosted APIs answer HTTP 400 instead (``call_errors``); both become ContextLengthError,
which a page piece answers by being asked in halves.
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import BaseMessage

from deskresearch.errors import ContextLengthError

# Characters per token: about 4 for English and most European languages, 1-1.5 for CJK, lower
# for JSON and code. A prompt cut to half or less of itself reads as twice English's.
MAX_CHARS_PER_TOKEN = 8
# A smaller count may be an older server leaving cached tokens out of it (a retry), not a cut;
# a cut keeps about half a context of at least 2,048 tokens.
MIN_READ = 768
CONTEXT_FIX = (
    "start the server with a larger context (Ollama: OLLAMA_CONTEXT_LENGTH=32768 ollama serve; "
    "llama.cpp: -c 32768) and pass --summary-context-window with that number"
)


def prompt_chars(messages: Sequence[BaseMessage]) -> int:
    """The prompt's size in characters (its text; a tool schema sent beside it is not counted)."""
    return sum(len(str(m.content)) for m in messages)


def check_read(messages: Sequence[BaseMessage], read: int, *, model: str, base: str) -> None:
    """Raise ContextLengthError when the server read plainly less of the prompt than it holds."""
    size = prompt_chars(messages)
    if read >= MIN_READ and size > MAX_CHARS_PER_TOKEN * read:
        raise ContextLengthError(
            f"{model} at {base} read {read:,} tokens of a prompt of about {size // 4:,}: the "
            f"server cut it to fit its context window. To read whole prompts, {CONTEXT_FIX}",
            status=400,
        )
