import re
from datetime import date

from deskresearch.prompts import (
    judge_citations,
    keywords,
    plan_queries,
    rank_urls,
    repair_report,
    summarise,
    write_report,
)
from tests.support.fakes import hit

LEFTOVER = re.compile(r"\{[a-z_]+\}")
TODAY = date(2026, 11, 21)


def text(messages: list) -> str:  # type: ignore[type-arg]
    return "\n".join(str(m.content) for m in messages)


def test_every_prompt_renders_without_leftover_placeholders_and_braces_survive() -> None:
    topic = "What is {x} in C++ {templates}?"
    rendered = [
        keywords.render(topic=topic, max_keywords=2, today=TODAY),
        plan_queries.render(topic=topic, results="r", max_queries=4, today=TODAY),
        rank_urls.render(topic=topic, query=topic, hits=[hit(0)], today=TODAY),
        summarise.render_chunk(
            topic=topic, queries=[topic], url="u", title="t", chunk="{chunk}", language="German"
        ),
        summarise.render_reduce(
            topic=topic,
            queries=[topic],
            url="u",
            title="t",
            facts=[{"claim": "a", "quote": "b"}],
            max_facts=12,
            language="German",
        ),
        judge_citations.render(sentences=[(1, topic, [1])], sources={}),
        repair_report.render(
            sentences=[(1, topic, "why")], paragraphs=["p"], sources={}, language="German"
        ),
        write_report.render(
            topic=topic, sources=[], words=2000, language="German", today=TODAY, retry=True
        ),
    ]
    for messages in rendered:
        body = text(messages)
        assert topic in body
        assert not LEFTOVER.sub(
            "", body.replace("{x}", "").replace("{templates}", "").replace("{chunk}", "")
        ).count("{")


def test_writing_prompts_carry_the_language_and_dates_reach_ranking() -> None:
    assert "Write in <language>German</language>" in text(
        summarise.render_chunk(
            topic="t", queries=["q"], url="u", title="t", chunk="c", language="German"
        )
    )
    assert "Write in <language>zh-cn</language>" in text(
        write_report.render(
            topic="t", sources=[], words=10, language="zh-cn", today=TODAY, retry=False
        )
    )
    assert "2026-11-21" in text(rank_urls.render(topic="t", query="q", hits=[hit(0)], today=TODAY))
