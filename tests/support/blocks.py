"""What a prompt has outside its data blocks: where no page-, result- or caller-derived text may be."""

from __future__ import annotations

import re
from typing import Any

# The data blocks prompts may use (prompts.common.DATA_BLOCKS), listed here on their own: a
# block the prompts add without saying so counts as outside.
DATA_BLOCKS = ("topic", "queries", "results", "page", "sources", "facts", "outline", "section",
               "sentences", "paragraphs", "followups_allowed", "language", "weighing")  # fmt: skip
# A whole block: its opening tag with any attributes, its content, its closing tag. Escaped
# content cannot close it early (data() turns "</page>" into "&lt;/page>").
_BLOCK = re.compile(
    r"<(" + "|".join(DATA_BLOCKS) + r')(?:\s+[a-z_]+="[^"]*")*\s*>.*?</\1>', re.DOTALL
)


def block_names(text: str) -> list[str]:
    """The name of each whole data block in ``text``, in order."""
    return [m.group(1) for m in _BLOCK.finditer(text)]


def outside_blocks(text: str) -> str:
    """``text`` with every data block (tag, attributes and content) cut out."""
    return _BLOCK.sub(" ", text)


def message_texts(body: dict[str, Any]) -> list[str]:
    """The text of each message of a chat-completions request body."""
    texts = []
    for m in body["messages"]:
        content = m.get("content") or ""
        if isinstance(content, list):
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        texts.append(str(content))
    return texts
