"""Print editions: answers leave their problems for an "Answers" section before the chapter's Sources."""

from lxml import html as lhtml

from mlbook.html.answers import move_answers
from mlbook.html.printable import make_printable

PAGE = """<article>
<h2 id="problems">Problems</h2>
<h3 id="problem-a">Problem 1: First</h3><p>Statement one.</p>
<details class="success mlbook-answer"><summary>Answer to problem 1</summary><p>Answer one.</p></details>
<h3 id="problem-b">Problem 2: Second</h3><p>Statement two.</p>
<details class="success mlbook-answer"><summary>Answer to problem 2</summary>
<p>Answer two.</p><ul><li>x</li></ul></details>
<details class="note"><summary>Aside</summary><p>Not an answer.</p></details>
<h2 id="sources">Sources</h2><ul><li>A source</li></ul>
</article>"""


def _ids_in_order(art):
    return [el.get("id") for el in art.iter() if isinstance(el.tag, str) and el.get("id")]


def test_answers_move_before_sources_and_link_both_ways():
    art = lhtml.fromstring(PAGE)
    assert move_answers(art) == 2
    assert _ids_in_order(art) == ["problems", "problem-a", "problem-b", "answers", "answer-a", "answer-b", "sources"]
    refs = art.cssselect("p.answer-ref a")
    assert [a.get("href") for a in refs] == ["#answer-a", "#answer-b"]
    back = art.cssselect("div.answer h3 a")
    assert [(a.get("href"), a.text_content()) for a in back] == [
        ("#problem-a", "Problem 1: First"),
        ("#problem-b", "Problem 2: Second"),
    ]
    text = art.text_content()
    assert text.index("Answer two.") > text.index("Statement two.") and "Answer to problem" not in text
    assert len(art.cssselect("details")) == 1  # the ordinary collapsible stays for make_printable


def test_make_printable_leaves_no_details_and_one_answers_section():
    art = make_printable(lhtml.fromstring(PAGE))
    assert not art.cssselect("details")
    assert [h.text_content() for h in art.iter("h2")] == ["Problems", "Answers", "Sources"]
    assert art.cssselect("div.admonition.note")  # the aside became an admonition, in place


def test_a_chapter_without_sources_gets_answers_at_the_end():
    art = lhtml.fromstring(PAGE.replace('<h2 id="sources">Sources</h2><ul><li>A source</li></ul>', ""))
    move_answers(art)
    assert art[-1].get("class") == "answer" and art[-3].get("id") == "answers"
