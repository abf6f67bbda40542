"""Print editions: every problem's collapsed answer moves to an "Answers" section before the chapter's Sources.

The website keeps each answer in a closed ``<details>`` under its problem; a page of paper cannot hide it, so the
PDF and EPUB put a link to the answer under the problem and the answers together at the end of the chapter.
"""

from __future__ import annotations

from lxml import html as lhtml
from lxml.html import builder as E

from ..markdown.problemblock import ANSWER_CLASS


def move_answers(article: lhtml.HtmlElement) -> int:
    """Move, in place, each answer block into an "Answers" section before the h2 "Sources"; return how many.

    Each problem keeps a link to its answer, and each answer's title links back to its problem.
    """
    blocks = [d for d in article.iter("details") if ANSWER_CLASS in (d.get("class") or "").split()]
    if not blocks:
        return 0
    section = [E.H2("Answers", id="answers")]
    for details in blocks:
        heading = next((h for h in details.itersiblings(preceding=True) if h.tag == "h3" and h.get("id")), None)
        problem_id = heading.get("id") if heading is not None else ""
        answer_id = "answer-" + problem_id.removeprefix("problem-") if problem_id else f"answer-{len(section)}"
        title = heading.text_content().strip() if heading is not None else "Answer"
        block = E.DIV(E.CLASS("answer"), E.H3(E.A(title, href=f"#{problem_id}") if problem_id else title, id=answer_id))
        summary = details.find("summary")
        if summary is not None:
            details.remove(summary)
        for child in list(details):
            block.append(child)
        section.append(block)
        ref = E.P(E.CLASS("answer-ref"), E.A("Answer: in “Answers” at the end of this chapter", href=f"#{answer_id}"))
        ref.tail = details.tail
        details.getparent().replace(details, ref)
    sources = next((h for h in article.iter("h2") if h.get("id") == "sources"), None)
    for el in section:
        if sources is not None:
            sources.addprevious(el)
        else:
            article.append(el)
    return len(blocks)
