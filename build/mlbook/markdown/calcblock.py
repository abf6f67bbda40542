"""`/// calculator | NAME` ... `///` in a chapter: a live form on the site, a worked table in the PDF and EPUB.

The block's body sets the example inputs, one ``field: value`` line each (calcforms.py names the fields; the
others keep their defaults). The block becomes one HTML element holding

- the form (``form.mlbook-calc-live``): labelled inputs, the results filled in at build time, the refusal line and
  the command line; book/assets/calc/forms.js recomputes them in the browser as the reader types;
- the worked example (``div.mlbook-calc-print``, hidden on the site by site.css): the inputs and the results as
  tables, computed at build time by the script itself (calcrun.py), with the address of the live page;
- the formula, shown everywhere.

The PDF and EPUB drop the form (``drop_live_forms``), so print shows the table and no dead controls.
"""

from __future__ import annotations

import re
from html import escape
from pathlib import Path

from ..data import calcrun
from ..data.calcforms import CALCULATORS, NO_LINK, Calculator, Field
from ..diagnostics import Reporter, line_of, line_offset
from ..html import links
from .fences import fenced

OPEN = re.compile(r"^///\s*calculator\s*\|\s*(?P<name>[\w-]+)\s*$")
BODY = re.compile(r"^\s*(?P<name>[\w-]+)\s*:\s?(?P<value>.*?)\s*$")


class BlockError(ValueError):
    """A defect of one block: the message and the 0-based index of the line it concerns."""

    def __init__(self, message: str, index: int) -> None:
        super().__init__(message)
        self.index = index


def expand(
    markdown: str, src_uri: str, page_url: str, site_url: str, text: str, reporter: Reporter, calc_dir: Path
) -> str:
    """Replace every calculator block of a chapter's Markdown with its HTML.

    src_uri: the chapter under book/ (for messages); page_url: its site URL (``misc/calculators/kv-cache/``);
    site_url: the published site's address or '' (the print table then names the page as text); text: the raw
    source, to find line numbers. A defect is reported as ``book/<src_uri>:LINE: calculator: ...`` and leaves
    the block's first line visible.
    """
    lines, out, i, count, cursor = markdown.split("\n"), [], 0, 0, 0
    in_code = fenced(lines)
    while i < len(lines):
        match = None if in_code[i] else OPEN.match(lines[i])
        if not match:
            out.append(lines[i])
            i += 1
            continue
        # The block's line in the raw source (front matter may shift it); later blocks are searched after it.
        first = line_of(text, lines[i], start=cursor)
        cursor = line_offset(text, first)
        end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == "///"), None)
        try:
            if end is None:
                raise BlockError("the block is not closed with a line '///'", i)
            calc = _calculator(match["name"], i)
            inputs = _inputs(calc, lines, i, end, calc_dir)
            count += 1
            try:
                html = render(calc, inputs, page_url, site_url, calc_dir, f"calc{count}")
            except ValueError as exc:
                raise BlockError(str(exc), i) from exc
            out += ["", html, ""]
            i = end + 1
        except BlockError as exc:
            reporter.report(f"book/{src_uri}", first + exc.index - i, "calculator", str(exc))
            out.append(lines[i])
            i += 1
    return "\n".join(out)


def _calculator(name: str, index: int) -> Calculator:
    if name not in CALCULATORS:
        raise BlockError(f"unknown calculator '{name}'; known: {', '.join(sorted(CALCULATORS))}", index)
    return CALCULATORS[name]


def _inputs(calc: Calculator, lines: list[str], start: int, end: int, calc_dir: Path) -> dict[str, str]:
    """The example inputs of the block body; BlockError for an unknown field or an impossible choice."""
    inputs: dict[str, str] = {}
    known = [f.name for f in calc.fields]
    for index in range(start + 1, end):
        if not lines[index].strip():
            continue
        m = BODY.match(lines[index])
        if not m or m["name"] not in known:
            line = lines[index].strip()
            raise BlockError(f"'{line}' is not 'field: value' with a field of {calc.name}: {', '.join(known)}", index)
        field, value = calc.field(m["name"]), m["value"]
        if field.kind in ("select", "check"):
            allowed = (
                list(_options(field, _link_choices(calc, calc_dir))) if field.kind == "select" else ["true", "false"]
            )
            if value not in allowed:
                raise BlockError(f"{field.name}: '{value}' is not one of: {', '.join(repr(a) for a in allowed)}", index)
        inputs[field.name] = value
    return inputs


def _options(field: Field, link_choices: dict[str, tuple[str, str]]) -> dict[str, tuple[str, str]]:
    """Value -> (label, data-gbps) of a select field."""
    return link_choices if field.name == "link" else {v: (label, "") for v, label in field.choices}


def render(calc: Calculator, inputs: dict[str, str], page_url: str, site_url: str, calc_dir: Path, prefix: str) -> str:
    """The block's HTML (no blank line, so Markdown keeps it as one raw block).

    Raises ValueError when the script refuses the example inputs (a block must show a worked example).
    """
    args = calcrun.argv(calc, inputs)
    result = calcrun.run(calc, args, calc_dir)
    if result.error:
        raise ValueError(f"the example inputs are refused: {result.error}")
    choices = _link_choices(calc, calc_dir)
    script_href = links.relative(page_url, calc.script_path)
    parts = [
        f'<div class="mlbook-calc" data-calc="{calc.name}">',
        _form(calc, inputs, args, result.values, choices, script_href, prefix),
        _print(calc, inputs, args, result.values, choices, page_url, site_url, script_href),
        '<p class="mlbook-calc-formula-title"><strong>Formula</strong></p>',
        f'<pre class="mlbook-calc-formula"><code>{escape(chr(10).join(calc.formula))}</code></pre>',
        "</div>",
    ]
    return "\n".join(parts)


def _link_choices(calc: Calculator, calc_dir: Path) -> dict[str, tuple[str, str]]:
    """Value -> (label, data-gbps) of the link field: the script's own table ({} without a link field)."""
    if not any(f.name == "link" for f in calc.fields):
        return {}
    table = calcrun.module(calc, calc_dir).LINKS
    return {
        NO_LINK[0]: (NO_LINK[1], ""),
        **{name: (f"{name}: {gbps:g} GB/s, {counted}", repr(gbps)) for name, (gbps, counted, _) in table.items()},
    }


def _value(field: Field, inputs: dict[str, str]) -> str:
    return inputs.get(field.name, field.default)


def _off(field: Field, inputs: dict[str, str], calc: Calculator) -> bool:
    return bool(field.off_when) and _value(calc.field(field.off_when), inputs) != ""


def _form(calc, inputs, args, values, link_choices, script_href, prefix) -> str:
    out = [
        f'<form class="mlbook-calc-live" data-calc="{calc.name}" data-script="{calc.script_path}" autocomplete="off">'
    ]
    out.append(f"<fieldset><legend>{escape(calc.title)}: inputs</legend>")
    for field in calc.fields:
        out.append(_control(calc, field, inputs, link_choices, f"{prefix}-{field.name}"))
    out.append("</fieldset>")
    out.append(f'<p class="mlbook-calc-error" id="{prefix}-error" role="alert" hidden></p>')
    out.append(_results(calc, values, live=True))
    out.append(
        f'<p class="mlbook-calc-command">The same numbers from the tested script '
        f'(<a href="{escape(script_href)}">{calc.script}.py</a>):<br>'
        f"<code>{escape(calcrun.command(calc, args))}</code></p>"
    )
    out.append("</form>")
    return "\n".join(out)


def _control(calc, field: Field, inputs, link_choices, ident: str) -> str:
    value = _value(field, inputs)
    attrs = f'id="{ident}" name="{field.name}" data-flag="{field.flag}"'
    if field.optional:
        attrs += ' data-optional="true"'
    if field.off_when:
        attrs += f' data-off-when="{field.off_when}"'
    if _off(field, inputs, calc):
        attrs += " disabled"
    note = " · ".join(x for x in (field.unit, field.hint, "optional" if field.optional else "") if x)
    note_html = (
        f'<span class="mlbook-calc-note" id="{ident}-note"><code>{field.flag}</code>'
        f"{' · ' + escape(note) if note else ''}</span>"
    )
    described = f' aria-describedby="{ident}-note"'
    if field.kind == "check":
        checked = " checked" if value == "true" else ""
        return (
            f'<div class="mlbook-calc-field mlbook-calc-check"><input type="checkbox" {attrs}{checked}{described}>'
            f'<label for="{ident}">{escape(field.label)}</label>{note_html}</div>'
        )
    label = f'<label for="{ident}">{escape(field.label)}</label>'
    if field.kind == "select":
        choices = _options(field, link_choices)
        options = "".join(
            f'<option value="{escape(v)}"'
            + (f' data-gbps="{gbps}"' if gbps else "")
            + (" selected" if v == value else "")
            + f">{escape(lab)}</option>"
            for v, (lab, gbps) in choices.items()
        )
        return f'<div class="mlbook-calc-field">{label}<select {attrs}{described}>{options}</select>{note_html}</div>'
    mode = "numeric" if field.kind == "whole" else "decimal"
    mode = "text" if field.name == "bytes" else mode  # suffixes K, M, G, T
    return (
        f'<div class="mlbook-calc-field">{label}<input type="text" inputmode="{mode}" spellcheck="false" '
        f'value="{escape(value)}" {attrs}{described}>{note_html}</div>'
    )


def _results(calc: Calculator, values: dict[str, str], live: bool) -> str:
    """The results table: every row on the site (JavaScript hides empty ones), only filled rows in print."""
    head = "".join(f'<th scope="col">{escape(c)}</th>' for c in calc.columns)
    rows = []
    for label, keys in calc.rows:
        present = any(k in values for k in keys if k)
        if not live and not present:
            continue
        cells = "".join(
            f'<td data-label="{escape(column)}">{"" if key is None else _cell(key, values, live)}</td>'
            for column, key in zip(calc.columns[1:], keys, strict=True)
        )
        hidden = "" if present else " hidden"
        rows.append(f'<tr{hidden}><th scope="row">{escape(label)}</th>{cells}</tr>')
    table = f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
    live_attr = ' aria-live="polite"' if live else ""
    wide = " mlbook-calc-wide" if len(calc.columns) > 3 else ""
    summary = ""
    if calc.summary:
        text = escape(calc.summary)
        for key in re.findall(r"\{(\w+)\}", calc.summary):
            text = text.replace("{" + key + "}", _cell(key, values, live))
        summary = f'<p class="mlbook-calc-summary">{text}</p>'
    return f'<div class="mlbook-calc-results{wide}"{live_attr}>{summary}{table}</div>'


def _cell(key: str, values: dict[str, str], live: bool) -> str:
    text = escape(values.get(key, ""))
    return f'<output data-key="{escape(key)}">{text}</output>' if live else text


def _print(calc, inputs, args, values, link_choices, page_url, site_url, script_href) -> str:
    rows = []
    for field in calc.fields:
        value = _value(field, inputs)
        if _off(field, inputs, calc):
            shown = "from the link"
        elif field.kind == "check":
            shown = "yes" if value == "true" else "no"
        elif field.kind == "select":
            shown = _options(field, link_choices).get(value, (value, ""))[0]
        else:
            shown = value if value != "" else "not given"
        unit = f", in {field.unit}" if field.unit and field.kind in ("number", "whole") else ""
        rows.append(f"<tr><td>{escape(field.label + unit)}</td><td>{escape(shown)}</td></tr>")
    inputs_table = f"<table><thead><tr><th>Input</th><th>Value</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
    live = site_url.rstrip("/") + "/" + page_url if site_url else ""
    where = (
        f'<a href="{escape(live)}">{escape(live)}</a>'
        if live
        else f"the page <code>{escape(page_url or '/')}</code> of the book's website"
    )
    return "\n".join(
        [
            '<div class="mlbook-calc-print">',
            f'<p class="mlbook-calc-print-title"><strong>{escape(calc.title)}: worked example</strong>, computed '
            f'when the book was built by <a href="{escape(script_href)}">{calc.script_path}</a>. '
            f"Live calculator: {where}.</p>",
            inputs_table,
            _results(calc, values, live=False),
            f'<p class="mlbook-calc-command"><code>{escape(calcrun.command(calc, args))}</code></p>',
            "</div>",
        ]
    )


def drop_live_forms(article) -> None:
    """Remove the calculator forms from an article (lxml element) for print: the worked tables stay."""
    for form in article.cssselect("form.mlbook-calc-live"):
        form.drop_tree()
