from mlbook.markdown.scriptlinks import add_download_links


def test_download_link_added_before_included_script():
    md = 'Intro\n\n```python\n--8<-- "scripts/net/bench.py"\n```\n'
    out = add_download_links(md, "training/chapter.md")
    assert out.splitlines()[2] == "Download [`bench.py`](../scripts/net/bench.py) (the tested file)."
    assert out.splitlines()[4] == "```python"


def test_download_link_keeps_indentation_inside_tabs():
    md = '=== "Tab"\n\n    ```bash\n    --8<-- "scripts/x.sh"\n    ```\n'
    out = add_download_links(md, "index.md")
    assert "    Download [`x.sh`](scripts/x.sh) (the tested file)." in out.splitlines()


def test_text_without_snippets_is_unchanged():
    md = "# T\n\n```python\nprint(1)\n```\n"
    assert add_download_links(md, "a.md") == md
