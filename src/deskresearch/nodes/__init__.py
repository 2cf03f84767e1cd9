"""One module per step of the research graph; this package re-exports the node functions.

(``branch_state.py`` is the one module that is not a step: what the map steps' branches carry.)

Nodes may import report, grounding, services (through their Protocols), prompts, config and
below; only graph.py imports them.
"""

from deskresearch.nodes.check_citations import (
    check_citations,
    judge_citations,
    judge_failed,
    judge_tasks,
)
from deskresearch.nodes.claim_pages import claim_pages
from deskresearch.nodes.collect_sources import collect_sources
from deskresearch.nodes.dedup_urls import dedup_urls
from deskresearch.nodes.finish_report import finish_report
from deskresearch.nodes.insufficient import insufficient_evidence
from deskresearch.nodes.keywords import generate_keywords, keywords_fallback
from deskresearch.nodes.plan_queries import plan_queries
from deskresearch.nodes.plan_report import plan_failed, plan_report
from deskresearch.nodes.rank_urls import rank_failed, rank_urls
from deskresearch.nodes.read_page import read_failed, read_page
from deskresearch.nodes.recheck_citations import needs_recheck, recheck_citations, recheck_failed
from deskresearch.nodes.reflect import reflect, reflect_failed
from deskresearch.nodes.repair_report import repair_failed, repair_report
from deskresearch.nodes.review_plan import review_plan
from deskresearch.nodes.search import search_failed, search_keyword, search_query
from deskresearch.nodes.settle_citations import settle_citations
from deskresearch.nodes.start_run import start_run
from deskresearch.nodes.summarise import (
    reduce_failed,
    reduce_page,
    summarise_chunk,
    summarise_failed,
)
from deskresearch.nodes.weigh_evidence import brief_writers, weigh_evidence, weigh_failed
from deskresearch.nodes.write_report import write_report
from deskresearch.nodes.write_sections import (
    assemble_report,
    section_failed,
    section_tasks,
    write_section,
)

__all__ = [
    "assemble_report",
    "brief_writers",
    "check_citations",
    "claim_pages",
    "collect_sources",
    "dedup_urls",
    "finish_report",
    "generate_keywords",
    "insufficient_evidence",
    "judge_citations",
    "judge_failed",
    "judge_tasks",
    "keywords_fallback",
    "plan_queries",
    "plan_failed",
    "plan_report",
    "rank_failed",
    "rank_urls",
    "read_failed",
    "read_page",
    "needs_recheck",
    "recheck_citations",
    "recheck_failed",
    "reduce_failed",
    "reduce_page",
    "reflect",
    "reflect_failed",
    "repair_failed",
    "repair_report",
    "review_plan",
    "search_failed",
    "search_keyword",
    "search_query",
    "section_failed",
    "section_tasks",
    "settle_citations",
    "start_run",
    "summarise_chunk",
    "summarise_failed",
    "weigh_evidence",
    "weigh_failed",
    "write_report",
    "write_section",
]
