"""Render a seed's Markdown as the PTX ISA's Sphinx HTML page would (test helper).

The HTML is built at test time from the seed in ../shared/seeds, so no spec text is stored
in the project.  It reproduces the structure of the real page: nested ``<section>`` elements
with ``h1``-``h6`` and a ``headerlink`` anchor, ``table.docutils`` with ``thead``/``tbody``,
``code.literal`` spans, ``pre`` inside ``div.highlight`` with HTML entities (``&gt;&gt;``),
``figure``/``figcaption`` with a caption number, block quotes, bullet lists and the
copy-button residue.
"""

from __future__ import annotations

import html
import re

_LINK = re.compile(r"\[([^\]]*)\]\(([^)\s]*)(?:\s+\"[^\"]*\")?\)")
# a backslash escape (CommonMark: any ASCII punctuation) or a code span, whichever comes first
_ESCAPE_OR_CODE = re.compile(r"\\([!-/:-@\[-`{-~])|`([^`]+)`")


def _inline(text: str) -> str:
    out = []
    pos = 0
    for m in _LINK.finditer(text):
        out.append(_code(text[pos:m.start()]))
        label = m.group(1)
        if label.strip() and not all("\ue000" <= ch <= "\uf8ff" for ch in label):
            out.append(f'<a class="reference internal" href="{html.escape(m.group(2))}">'
                       f'<span class="std std-ref">{_code(label)}'
                       "</span></a>")
        else:
            out.append(f'<a class="headerlink" href="{html.escape(m.group(2))}" '
                       'title="Permalink to this headline">\uf0c1</a>')
        pos = m.end()
    out.append(_code(text[pos:]))
    return "".join(out)


def _code(text: str) -> str:
    """Markdown inline text as Sphinx writes it: ``\\_`` is ``_`` (a renderer undoes every
    backslash escape outside code; ``wgmma.mma\\_async`` in a link is ``wgmma.mma_async``
    on the page), a code span is ``code.literal``, the rest HTML-escaped."""
    out = []
    pos = 0
    for m in _ESCAPE_OR_CODE.finditer(text):
        out.append(html.escape(text[pos:m.start()], quote=False))
        if m.group(1) is not None:
            out.append(html.escape(m.group(1), quote=False))
        else:
            out.append('<code class="docutils literal notranslate"><span class="pre">'
                       f"{html.escape(m.group(2), quote=False)}</span></code>")
        pos = m.end()
    out.append(html.escape(text[pos:], quote=False))
    return "".join(out)


def markdown_to_sphinx_html(md: str) -> str:
    lines = md.split("\n")
    out = ['<!DOCTYPE html>', '<html lang="en">', "<head><meta charset=\"utf-8\"/>",
           "<title>PTX ISA</title>", "<script>var x = '<h2>not a heading</h2>';</script>",
           "</head>", '<body><div class="document"><div class="body" role="main">']
    open_sections = 0
    in_fence = False
    in_table = False
    table_head_done = False
    list_depth = 0
    pending_fig: str | None = None
    para: list[str] = []

    def flush_para() -> None:
        nonlocal pending_fig
        if not para:
            return
        text = " ".join(para)
        para.clear()
        if pending_fig is not None and text.startswith("Figure "):
            num, _, rest = text.partition(" ")[2].partition(" ")
            rest = _LINK.sub("", rest)
            out.append(f'<figure class="align-default" id="fig-{num}">')
            out.append(f'<img alt="{html.escape(pending_fig)}" src="_images/f{num}.png" />')
            out.append(f'<figcaption>\n<p><span class="caption-number">Figure {num} </span>'
                       f'<span class="caption-text">{_inline(rest)}</span>'
                       f'<a class="headerlink" href="#fig-{num}" title="Permalink">\uf0c1</a>'
                       "</p>\n</figcaption>\n</figure>")
            pending_fig = None
            return
        if text == "Copy to clipboard":
            out.append('<button class="copybtn o-tooltip--left" data-tooltip="Copy">'
                       "Copy to clipboard</button>")
            return
        out.append(f"<p>{_inline(text)}</p>")

    for raw in lines:
        line = raw.rstrip()
        body = line
        depth = 0
        while True:
            s = body.lstrip(" ")
            if s.startswith(">"):
                depth += 1
                body = s[1:]
                if body.startswith(" "):
                    body = body[1:]
                continue
            break
        stripped = body.strip()
        if stripped.startswith("```"):
            flush_para()
            if not in_fence:
                out.append('<div class="highlight-text notranslate"><div class="highlight">'
                           "<pre><span></span>")
            else:
                out.append("</pre></div>\n</div>")
            in_fence = not in_fence
            continue
        if in_fence:
            out[-1 if out[-1].endswith("<pre><span></span>") else len(out) - 1]
            out.append(html.escape(body, quote=False))
            continue
        if stripped.startswith("|"):
            flush_para()
            cells = [c.strip() for c in stripped.strip("|").split("|")]
            if all(set(c) <= set("-: ") for c in cells):
                out.append("</thead><tbody>")
                table_head_done = True
                continue
            if not in_table:
                out.append('<table class="docutils align-default"><thead>')
                in_table, table_head_done = True, False
            tag = "td" if table_head_done else 'th class="head"'
            end = "td" if table_head_done else "th"
            out.append("<tr>" + "".join(f"<{tag}><p>{_inline(c)}</p></{end}>" for c in cells)
                       + "</tr>")
            continue
        if in_table:
            out.append("</tbody></table>")
            in_table = False
        if not stripped:
            flush_para()
            continue
        if stripped.startswith("#"):
            flush_para()
            level = len(stripped) - len(stripped.lstrip("#"))
            title = stripped[level:].strip()
            while list_depth:
                out.append("</li></ul>")
                list_depth -= 1
            if open_sections:
                out.append("</section>")
                open_sections -= 1
            out.append(f'<section id="s{len(out)}">')
            open_sections += 1
            out.append(f"<h{min(level, 6)}>{_inline(title)}</h{min(level, 6)}>")
            continue
        if stripped.startswith("!["):
            flush_para()
            pending_fig = stripped[2:stripped.index("](")]
            continue
        if stripped[:2] in ("* ", "+ "):
            flush_para()
            want = 1 if stripped[0] == "*" else 2
            while list_depth > want:
                out.append("</li></ul>")
                list_depth -= 1
            if list_depth == want:
                out.append("</li><li>")
            while list_depth < want:
                out.append('<ul class="simple"><li>')
                list_depth += 1
            para.append(stripped[2:])
            continue
        para.append(stripped)
    flush_para()
    if in_table:
        out.append("</tbody></table>")
    while list_depth:
        out.append("</li></ul>")
        list_depth -= 1
    while open_sections:
        out.append("</section>")
        open_sections -= 1
    out.append("</div></div></body></html>")
    # pre blocks: the opening tag and the first code line share a line, as Sphinx writes them
    text = "\n".join(out)
    return text.replace("<pre><span></span>\n", "<pre><span></span>")
