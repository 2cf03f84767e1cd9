"""Whether a report language is a language: a tag (de, pt-BR, zh-Hans-CN) or a name of one.

The report language goes into every writing prompt; a value that names no language would be
accepted and written with, silently. Babel's CLDR data decides (already installed with
trafilatura): a tag it can parse for a language it knows, a language's English name (German,
Brazilian Portuguese, Swiss German), or its own name (Deutsch, español, 中文). Each answer is
cached; the own names (a few hundred locale files) are read only when the first two fail.
"""

from __future__ import annotations

from functools import cache


@cache
def _english() -> frozenset[str]:
    from babel import Locale

    return frozenset(name.casefold() for name in Locale("en").languages.values())


@cache
def _own_names() -> frozenset[str]:
    from babel import Locale, localedata

    names = set()
    for code in localedata.locale_identifiers():
        if "_" not in code:  # a language, not one of its regions
            names.add(str(Locale.parse(code).get_display_name(code) or "").casefold())
    return frozenset(names - {""})


@cache
def is_language(text: str) -> bool:
    """Whether ``text`` is a language tag or a language's name (English or its own)."""
    from babel import Locale, UnknownLocaleError

    try:
        locale = Locale.parse(text.replace("-", "_"))
    except (UnknownLocaleError, ValueError):
        pass
    else:
        return locale.language in Locale("en").languages
    folded = text.casefold()
    return folded in _english() or folded in _own_names()
