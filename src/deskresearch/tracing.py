"""How a run appears in LangSmith: a readable name, tags and the settings as metadata.

Tracing is LangChain's own: it is on only with ``LANGSMITH_TRACING=true`` (and a key); unset, it
is a no-op that opens no connection. Model calls carry ``stage:<name>`` tags, and structured
ones ``langsmith:nostream`` (see services/llm.py).
"""

from __future__ import annotations

from langchain_core.runnables import RunnableConfig

from deskresearch.config.context import Context

MAX_NAME_CHARS = 80


def run_config(topic: str, ctx: Context, *, thread_id: str = "") -> RunnableConfig:
    """Return the config that names, tags and describes one research run.

    Pass it to ``ainvoke``/``astream`` (merge ``configurable`` for a checkpointer's thread id).
    The metadata holds settings only: API keys are not settings and never appear.
    """
    name = " ".join(topic.split())
    if len(name) > MAX_NAME_CHARS:
        name = name[: MAX_NAME_CHARS - 1] + "…"
    search = ",".join(ctx.search_settings().backends)
    metadata = {
        "summary_model": ctx.summary_model,
        "report_model": ctx.report_model,
        "search_backend": search,
        "settings": ctx.public_settings(),
    }
    if thread_id:
        metadata["thread_id"] = thread_id
    return {
        "run_name": f"deskresearch: {name}",
        "tags": ["deskresearch", f"search:{search}"],
        "metadata": metadata,
    }
