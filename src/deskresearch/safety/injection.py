"""Text that addresses the model instead of the reader: found however it is spelled, then removed.

Matching runs on a normalised copy, so spelling tricks do not hide a phrase: Unicode compatibility
form (NFKC: full-width letters, ligatures, no-break spaces), markdown's backslash escapes undone
(trafilatura's markdown puts a backslash before the ``<`` and ``_`` of a chat token: it is still
the token), invisible characters removed (zero-width
spaces and joiners, bidi controls, soft hyphens, variation selectors, tag characters), control
characters and every run of whitespace (double spaces, line breaks) folded to one space, case
folded, accents dropped, and look-alike letters from other scripts (Cyrillic ``о``, Greek ``ο``,
mathematical ``𝐨``) folded to the Latin letter they imitate, with the Unicode confusables table
that ``confusable-homoglyphs`` ships. Patterns cover English, German, French, Spanish, Italian,
Portuguese, Dutch, Russian, Chinese and Japanese, and common paraphrases ("disregard the earlier
directions", "forget everything above").

This filter is a first line only: a paraphrase it does not know gets through. The decisive
defence is structural (page text is delimited and escaped as data in every prompt; references
and links in the report come from the source ledger, never from the model).
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache

import regex
from confusable_homoglyphs import utils as confusable_data

# Invisible characters: format characters (zero-width, bidi, soft hyphen, tags), the combining
# grapheme joiner, Hangul fillers, variation selectors; and control characters except \t\n\r.
_INVISIBLE = regex.compile(
    r"[\p{Cf}\u034f\u115f\u1160\u3164\uffa0\ufe00-\ufe0f\U000e0100-\U000e01ef]"
    r"|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]"
)
_SPACE = re.compile(r"\s+")
# A markdown backslash escape of ASCII punctuation (trafilatura's markdown escapes the "<" and
# "_" of "<|im_end|>"): undone before matching, so the escaped token is the token.
_MD_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")


@cache
def _confusables() -> dict[int, str]:
    """Map each letter that imitates one ASCII letter or digit to it (Unicode confusables)."""
    table: dict[int, str] = {}
    for char, glyphs in confusable_data.load("confusables.json").items():
        if len(char) != 1 or char.isascii():
            continue
        for glyph in glyphs:
            c = glyph.get("c", "")
            if len(c) == 1 and c.isascii() and c.isalnum():
                table[ord(char)] = c.lower()
                break
    return table


def plain(text: str) -> str:
    """Return ``text`` in NFKC, invisible characters and markdown escapes removed, folded."""
    visible = unicodedata.normalize("NFKC", _INVISIBLE.sub("", text))
    return _SPACE.sub(" ", _MD_ESCAPE.sub(r"\1", visible).casefold()).strip()


def skeleton(text: str) -> str:
    """Return ``plain(text)`` with accents dropped and look-alike letters folded to ASCII."""
    decomposed = unicodedata.normalize("NFKD", plain(text))
    bare = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return bare.translate(_confusables())


_GAP = r"(?: [^ ]+){0,3}?"  # up to three words between the parts of a phrase
_VERB_EN = r"(?:ignore|disregard|forget|override|bypass|discard|abandon|drop|skip)"
_WHICH_EN = (
    r"(?:previous|prior|above|earlier|preceding|foregoing|former|original|initial|all|any"
    r"|every|your|these|those|system|developer|given)"
)
_WHAT_EN = (
    r"(?:instructions?|directions|directives|prompts?|rules|guidelines|guidance|orders"
    r"|commands|context|messages?)"
)

# Matched against skeleton(): lower case, no accents, Latin look-alikes folded, single spaces.
_LATIN = re.compile(
    "|".join(
        [
            # English
            rf"\b{_VERB_EN}\b{_GAP} {_WHICH_EN}\b{_GAP} {_WHAT_EN}\b",
            r"\bforget (?:everything|all)\b(?: [^ ]+){0,4}? (?:before|above|so far|earlier)\b",
            r"\b(?:do not|don.?t|never) (?:follow|obey)\b(?: [^ ]+){0,3}? (?:instructions?|rules)\b",
            r"\byou are (?:now|from now on|henceforth) (?:a|an|in|my|the)\b",
            r"\bfrom now on,? you (?:are|must|will|shall) (?:only |now )?(?:a|an|reply|respond"
            r"|answer|write|act|output|ignore|obey)\b",
            r"\bnew (?:instructions?|task|role|rules)\s?:",
            r"\b(?:reveal|print|show|output|repeat|leak) (?:your|the) (?:system |hidden |initial )?"
            r"(?:prompt|instructions)\b",
            r"\bas an ai(?: language)? model,? you (?:must|should|will)\b",
            r"\b(?:reply|respond|answer) (?:only|solely|exclusively) (?:with|in)\b",
            r"\b(?:note to|message to|instructions? (?:to|for)) (?:the |any )?"
            r"(?:ai|llm|assistant|language model|chatbot|ai model)s?\b",
            r"\battention,? (?:ai|llm|assistant|chatbot|language model)s?\b",
            r"<\|? ?(?:im_start|im_end|system|endoftext|assistant)\b",
            r"\[/?inst\]|<</?sys>>",
            # German
            r"\b(?:ignorier|missacht|vergiss|vergesst)\w*\b(?: [^ ]+){0,3}? "
            r"(?:vorherig|bisherig|obig|vorangegangen|vorstehend|fruher|alle|deine|ihre|samtlich)"
            r"\w*\b(?: [^ ]+){0,2}? (?:anweisung|instruktion|befehl|regel|anordnung|vorgabe)",
            r"\bdu bist (?:jetzt|nun|ab sofort|ab jetzt) (?:ein|eine|der|die|mein)\b",
            r"\bab (?:sofort|jetzt),? (?:du|antworte|schreibe)\b",
            r"\bneue anweisungen?\s?:",
            # French
            r"\b(?:ignore|oublie|neglige|contourne)\w*\b(?: [^ ]+){0,3}? (?:instructions?|consignes?"
            r"|directives?|regles?|ordres?)\b(?: [^ ]+){0,2}? (?:precedent|anterieur|ci-dessus|initial"
            r"|d origine)",
            r"\b(?:ignore|oublie|neglige)\w*\b (?:toutes?|tous) (?:les|tes|vos|ces) "
            r"(?:instructions?|consignes?|directives?|regles?)\b",
            r"\bne tiens? (?:pas|plus) compte (?:des|de tes|de vos) (?:instructions|consignes)",
            r"\b(?:tu es|vous etes) (?:maintenant|desormais|a present) (?:un|une|le|la|mon)\b",
            r"\b(?:a partir de maintenant|desormais),? (?:tu|vous|reponds|repondez)\b",
            r"\bnouvelles? (?:instructions?|consignes?)\s?:",
            # Spanish, Italian, Portuguese
            r"\b(?:ignora|olvida|omite)\w*\b(?: [^ ]+){0,3}? (?:instrucciones|indicaciones|ordenes"
            r"|reglas)\b(?: [^ ]+){0,2}? (?:anteriores|previas|de arriba)",
            r"\bahora eres (?:un|una|el|la|mi)\b",
            r"\b(?:ignora|dimentica)\w*\b(?: [^ ]+){0,3}? (?:istruzioni|indicazioni|regole)"
            r"\b(?: [^ ]+){0,2}? (?:precedenti|sopra)",
            r"\bora sei (?:un|una|il|la|il mio)\b",
            r"\b(?:ignore|esqueca|desconsidere)\w*\b(?: [^ ]+){0,3}? (?:instrucoes|orientacoes"
            r"|regras)\b(?: [^ ]+){0,2}? (?:anteriores|previas|acima)",
            # Dutch
            r"\b(?:negeer|vergeet)\b(?: [^ ]+){0,3}? (?:vorige|eerdere|voorgaande|bovenstaande"
            r"|alle) (?:instructies|opdrachten|regels)\b",
        ]
    )
)

# Matched against plain(): scripts whose letters must not be folded to Latin look-alikes.
_OTHER = re.compile(
    "|".join(
        [
            r"(?:игнорируй|игнорируйте|забудь|забудьте|не обращай внимания на)(?: [^ ]+){0,3}? "
            r"(?:предыдущие|прежние|все|вышеуказанные) ?(?:[^ ]+ )?(?:инструкции|указания|правила)",
            r"(?:忽略|无视|忘记|忘掉)(?:之前|以上|先前|上面|前面|所有|全部)(?:的)?(?:所有)?(?:指令|指示|说明|提示|规则)",
            r"(?:以前|前|上記|これまで)の(?:指示|命令|ルール)を(?:無視|忘れ)",
        ]
    )
)


def injection_marker(text: str) -> str | None:
    """Return the first phrase in ``text`` that tries to instruct a model (normalised), or None."""
    if not text:
        return None
    m = _LATIN.search(skeleton(text))
    if m is None:
        m = _OTHER.search(plain(text))
    return m.group(0) if m else None


_PARAGRAPH = re.compile(r"\n\s*\n")
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+|(?<=[。！？])")


def remove_injections(text: str) -> tuple[str, int]:
    """Drop every sentence of ``text`` that tries to instruct a model; return it and the count.

    Works paragraph by paragraph, then sentence by sentence, so the rest of a paragraph survives;
    a phrase split over two sentences takes its whole paragraph with it, one split over two
    paragraphs both of them.
    """
    if injection_marker(text) is None:  # the common case: one pass over the whole text
        return text, 0
    removed = 0
    paragraphs = []
    for paragraph in _PARAGRAPH.split(text):
        if injection_marker(paragraph) is not None:
            sentences = [s for s in _SENTENCE_END.split(paragraph) if s]
            kept = [s for s in sentences if injection_marker(s) is None]
            if len(kept) == len(sentences):  # no single sentence carries it: drop them all
                kept = []
            removed += len(sentences) - len(kept)
            paragraph = " ".join(kept)
        paragraphs.append(paragraph)
    if not removed:  # the phrase spans a paragraph break: drop the pair that carries it
        for i in range(len(paragraphs) - 1):
            if injection_marker(paragraphs[i] + " " + paragraphs[i + 1]) is not None:
                paragraphs[i] = paragraphs[i + 1] = ""
                removed = 2
                break
    return "\n\n".join(p for p in paragraphs if p.strip()), removed


# Control characters and bidi embeddings, overrides and isolates: in a title printed to a
# terminal (the CLI's review) they could move the cursor, clear the screen or reorder the text.
_UNPRINTABLE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def clean_line(text: str) -> tuple[str, bool]:
    """Return a title or snippet with instructions to a model removed, and whether any were.

    The line is also made printable: control characters and bidi controls are dropped and
    whitespace is folded to single spaces.
    """
    kept, removed = remove_injections(text)
    return " ".join(_UNPRINTABLE.sub("", kept).split()), removed > 0
