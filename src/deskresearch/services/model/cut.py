"""A prompt a local server cut to fit its context, told by how few tokens it says it read.

Ollama, on a prompt longer than the context it loaded the model with, keeps the first few
tokens and the end (about half its context, or all of it, by runner) and answers without a word
(its log says "truncating input prompt"). The answer then comes from a prompt that lost its
instructions. The server's own count of the prompt tokens gives it away: well under what the
prompt holds. Hosted APIs answer HTTP 400 instead (``call_errors``), so only local servers are
checked. Both become ContextLengthError, which a page piece answers by being asked in halves.
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import BaseMessage

from deskresearch.config.providers import local_window
from deskresearch.errors import ContextLengthError
from deskresearch.records import Usage
from deskresearch.safety.masking import mask_secrets
from deskresearch.services.model.usage import prompt_text

# Characters per token: about 4-5 for English and most European languages, 1-1.5 for CJK, 2-3
# for JSON and URLs. Past this the prompt is counted with our tokenizer (milliseconds; rare).
SUSPECT_CHARS_PER_TOKEN = 5
# A server that read under this share of our count cut the prompt: tokenizers differ by less.
MIN_SHARE = 0.6
# A smaller count may be an older server leaving cached tokens out of it (a retry), not a cut;
# a cut keeps at least half a context of 2,048 tokens.
MIN_READ = 768
CONTEXT_FIX = (
    "start the server with a larger context (Ollama: OLLAMA_CONTEXT_LENGTH=32768 ollama serve; "
    "llama.cpp: -c 32768) and pass --summary-context-window with that number"
)


def suspect(messages: Sequence[BaseMessage], usage: Usage, base: str) -> bool:
    """A local server read few enough tokens of a long enough prompt to count it (cheap)."""
    read = usage["input_tokens"]
    if read < MIN_READ or local_window(base) is None:
        return False
    return len(prompt_text(messages)) > SUSPECT_CHARS_PER_TOKEN * read


def check_read(messages: Sequence[BaseMessage], usage: Usage, *, model: str, base: str) -> None:
    """Raise ContextLengthError when a local server read plainly less of the prompt than it holds.

    ``base`` is the endpoint's URL; ``usage`` the call's, carried by the error so its tokens
    still count.
    """
    if not suspect(messages, usage, base):
        return
    from deskresearch.services.model.tokens import count_tokens  # loads the tokenizer

    read, held = usage["input_tokens"], count_tokens(prompt_text(messages))
    if read < MIN_SHARE * held:
        raise ContextLengthError(
            f"{model} at {mask_secrets(base)} read {read:,} tokens of a prompt of {held:,}: the "
            f"server cut it to fit its context window. To read whole prompts, {CONTEXT_FIX}",
            status=400,
            usage=usage,
        )
