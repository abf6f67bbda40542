"""The PDF chunk cache: a job's key covers what the render reads; entries are reused, and unused ones pruned."""

from mlbook.writers.pdf.cache import ChunkCache
from mlbook.writers.pdf.render import Rendered


def job(tmp_path, html="<p>x</p>", css="p {}"):
    image = tmp_path / "a.svg"
    return (f'{html}<img src="file://{image}">', "file:///site/", css, [str(tmp_path)], b"id", 1764374400)


def test_the_key_changes_with_the_html_the_css_and_an_embedded_file(tmp_path):
    (tmp_path / "a.svg").write_text("<svg/>")
    cache = ChunkCache(str(tmp_path / "cache"))
    key = cache.key(job(tmp_path))
    assert key == cache.key(job(tmp_path))
    assert key != cache.key(job(tmp_path, html="<p>y</p>")) and key != cache.key(job(tmp_path, css="q {}"))
    (tmp_path / "a.svg").write_text("<svg></svg>")
    assert key != cache.key(job(tmp_path))


def test_a_clean_result_is_reused_and_unused_entries_are_pruned(tmp_path):
    (tmp_path / "a.svg").write_text("<svg/>")
    folder = tmp_path / "cache"
    first = ChunkCache(str(folder))
    assert first.get(job(tmp_path)) is None
    first.put(job(tmp_path), Rendered(pdf=b"%PDF", pages=3, anchors={"a": 1}))
    first.put(job(tmp_path, html="<p>bad</p>"), Rendered(pdf=b"", pages=1, problems=["No anchor"]))
    first.put(job(tmp_path, html="<p>old</p>"), Rendered(pdf=b"%PDF", pages=1))
    assert len(list(folder.glob("*.pickle"))) == 2  # a result with problems is never stored
    second = ChunkCache(str(folder))
    assert second.get(job(tmp_path)) == Rendered(pdf=b"%PDF", pages=3, anchors={"a": 1})
    second.prune()
    assert [p.stem for p in folder.glob("*.pickle")] == [second.key(job(tmp_path))]


def test_without_a_folder_nothing_is_stored(tmp_path):
    cache = ChunkCache("")
    cache.put(job(tmp_path), Rendered(pdf=b"%PDF", pages=1))
    assert cache.get(job(tmp_path)) is None
    cache.prune()
