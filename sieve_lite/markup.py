"""What markup a section's text is written in, and reStructuredText as Markdown.

The terminal view of ``fetch`` (``sieve_lite.terminal``) shows a section as rich renders
Markdown. Markdown text goes to rich as it is. reStructuredText is parsed with **docutils**
(its public ``publish_doctree``) and the document tree is written back as CommonMark, so that
both markups get one look: headings, paragraphs with emphasis, strong and literal text,
literal and doctest blocks as code blocks, bullet, numbered, definition and field lists, block
quotes, notes and warnings, tables, footnotes. Plain text is shown as it is.

Collection text is untrusted. docutils runs with file insertion and ``raw`` off (an
``.. include:: /etc/passwd`` shows as its own source, it is never read), without reading any
configuration file, and with every report silenced: a parse problem never raises and never
prints. Nothing is dropped: a directive or role docutils does not know (Sphinx's
``.. versionadded::``, ``:class:`Foo```) is shown as its source text or as literal text.
"""

from __future__ import annotations

import io
import re
from typing import Any

MARKUPS = ("markdown", "rst", "text")

# The format of the build (``meta.source`` is "FORMAT: paths") -> the markup of its text.
_FORMAT_MARKUP = {"markdown": "markdown", "rst": "rst", "text": "text", "html": "text",
                  "2wiki": "text", "hotpotqa": "text", "musique": "text", "wikipedia": "text",
                  "pdf": "text", "docx": "text", "epub": "text"}

_RST_SIGNS = [re.compile(p, re.M) for p in (
    r"^\.\. [\w:-]+::", r"::\s*$", r"``[^`\n]+``", r":[\w:.+-]+:`[^`]{1,200}`", r"`[^`\n]+`_\b",
    r"^\.\. \[[^\]\n]+\]", r"^([=\-~^\"'`#*+])\1{2,}\s*$")]
_MD_SIGNS = [re.compile(p, re.M) for p in (
    r"^```", r"^~~~", r"^#{1,6} \S", r"\[[^\]\n]+\]\([^)\s]+\)", r"(?<!`)`[^`\n]+`(?!`|_)",
    r"^\s{0,3}>\s", r"^\|.*\|\s*$")]


def markup_of_source(source: str) -> str | None:
    """The markup a collection's text is in, from its ``meta.source`` ("rst: ../peps");
    None when the build format does not say (``auto``, ``jsonl``)."""
    fmt = source.split(":", 1)[0].strip().lower() if source else ""
    return _FORMAT_MARKUP.get(fmt)


def guess_markup(text: str) -> str:
    """"rst", "markdown" or "text" for a section whose collection does not say, by counting
    each markup's typical constructs. Text with no sign of either stays text: showing
    ``*`` and ``_`` as they are beats eating them."""
    rst = sum(len(p.findall(text)) for p in _RST_SIGNS)
    md = sum(len(p.findall(text)) for p in _MD_SIGNS)
    if rst == md == 0:
        return "text"
    return "rst" if rst >= md else "markdown"


# --------------------------------------------------------------------- reST -> Markdown
_SETTINGS = {
    # traceback=True: a docutils failure is raised to us, not printed to stderr with an exit
    "report_level": 5, "halt_level": 5, "warning_stream": None, "traceback": True,
    "file_insertion_enabled": False, "raw_enabled": False, "_disable_config": True,
    "doctitle_xform": False, "sectsubtitle_xform": False, "docinfo_xform": False,
    "input_encoding": "unicode", "syntax_highlight": "none", "embed_stylesheet": False,
    "pep_references": False, "rfc_references": False,
}
# CommonMark lets any ASCII punctuation be escaped; these are the ones that can start markup.
_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>#|~!&{}])")
_BLOCK_START = re.compile(r"^(\s*)([-+=]|\d+[.)])")
# A Markdown block that is a plain paragraph (not a heading, quote, table, fence, list, rule).
_PARAGRAPH = re.compile(r"^(?!#|>|\||```|~~~|[-*+] |-{3}|\d+\. )")
_ROLE = re.compile(r"^:[\w:.+-]+:`(.*)`$", re.S)
_ADMONITIONS = ("attention", "caution", "danger", "error", "hint", "important", "note", "tip",
                "warning", "seealso")


def rst_to_markdown(text: str) -> str:
    """reStructuredText as CommonMark (see the module docstring). Never raises on bad input:
    whatever docutils cannot read comes back as literal text."""
    from docutils.core import publish_doctree

    settings = dict(_SETTINGS, warning_stream=io.StringIO())
    try:
        tree = publish_doctree(text, settings_overrides=settings)
    except (Exception, SystemExit):  # e.g. RecursionError on 500 nested lists: show it as is
        return _fence(text)
    return "\n\n".join(_Writer().blocks(tree)).strip() + "\n"


def escape_markdown(text: str) -> str:
    """``text`` as CommonMark that renders to exactly that text (on one line)."""
    text = _MD_SPECIAL.sub(r"\\\1", " ".join(text.split("\n")))
    return _BLOCK_START.sub(lambda m: m.group(1) + "\\" + m.group(2)
                            if len(m.group(2)) == 1 else m.group(1) + m.group(2)[:-1] + "\\"
                            + m.group(2)[-1], text, count=1)


def _code_span(text: str) -> str:
    text = " ".join(text.split("\n"))
    longest = max((len(r) for r in re.findall(r"`+", text)), default=0)
    tick = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{tick}{pad}{text}{pad}{tick}"


def _fence(text: str, lang: str = "") -> str:
    longest = max((len(r) for r in re.findall(r"^\s*(`{3,})", text, re.M)), default=2)
    tick = "`" * (longest + 1)
    return f"{tick}{lang}\n{text.rstrip()}\n{tick}"


def _indent(block: str, prefix: str, first: str | None = None) -> str:
    lines = block.split("\n")
    out = [(first if first is not None else prefix) + lines[0]]
    out += [(prefix + line) if line else "" for line in lines[1:]]
    return "\n".join(out)


class _Writer:
    """docutils document tree -> Markdown blocks. One method per kind of node; anything
    unknown is written as its children (or its text), never dropped."""

    def __init__(self) -> None:
        self.depth = 1  # section nesting: a section's own title is a level-2 heading

    # -- blocks ------------------------------------------------------------------------
    def blocks(self, node: Any) -> list[str]:
        out: list[str] = []
        for child in node.children:
            out.extend(b for b in self.block(child) if b.strip())
        return out

    def body(self, node: Any) -> str:
        return "\n\n".join(self.blocks(node))

    def block(self, node: Any) -> list[str]:
        from docutils import nodes

        name = node.__class__.__name__
        if isinstance(node, nodes.Text):
            return [escape_markdown(node.astext())]
        if isinstance(node, (nodes.comment, nodes.target, nodes.substitution_definition,
                             nodes.pending, nodes.decoration, nodes.raw)):
            return []
        if isinstance(node, nodes.system_message):
            # The source of a directive docutils refused (unknown, or disabled on purpose)
            # is kept as literal text; the report itself is ours to hide.
            return [_fence(b.astext()) for b in node.findall(nodes.literal_block)]
        if isinstance(node, nodes.section):
            self.depth += 1
            try:
                return self.blocks(node)
            finally:
                self.depth -= 1
        if isinstance(node, nodes.title):
            return ["#" * min(6, self.depth + 1) + " " + self.inline(node)]
        if isinstance(node, (nodes.paragraph, nodes.rubric)):
            text = self.inline(node)
            return [f"**{text}**" if name == "rubric" else text]
        if isinstance(node, (nodes.literal_block, nodes.math_block)):
            classes = [c for c in node.get("classes", []) if c != "code"]
            return [_fence(node.astext(), classes[0] if classes else "")]
        if isinstance(node, nodes.doctest_block):
            return [_fence(node.astext(), "pycon")]
        if isinstance(node, nodes.bullet_list):
            return ["\n".join(_indent(self.body(i) or " ", "  ", "- ") for i in node.children)]
        if isinstance(node, nodes.enumerated_list):
            start = int(node.get("start", 1) or 1)
            items = []
            for n, item in enumerate(node.children, start=start):
                marker = f"{n}. "
                items.append(_indent(self.body(item) or " ", " " * len(marker), marker))
            return ["\n".join(items)]
        if isinstance(node, (nodes.definition_list, nodes.field_list, nodes.option_list)):
            return [self.pair(i) for i in node.children]
        if isinstance(node, nodes.block_quote):
            return [_indent(self.body(node), "> ").replace("\n\n", "\n>\n")]
        if isinstance(node, nodes.attribution):
            return ["— " + self.inline(node)]
        if isinstance(node, nodes.line_block):
            return ["\\\n".join(self.inline(line) for line in node.findall(nodes.line))]
        if isinstance(node, nodes.transition):
            return ["---"]
        if isinstance(node, (nodes.footnote, nodes.citation)):
            label = next((c.astext() for c in node.children if isinstance(c, nodes.label)), "")
            rest = [c for c in node.children if not isinstance(c, nodes.label)]
            text = "\n\n".join(b for c in rest for b in self.block(c))
            return [f"\\[{escape_markdown(label)}\\] {text}"]
        if name in _ADMONITIONS or isinstance(node, nodes.admonition):
            title = name.capitalize() if name in _ADMONITIONS else ""
            inner = self.blocks(node)
            if isinstance(node, nodes.admonition) and inner and name == "admonition":
                title, inner = inner[0].lstrip("#").strip(), inner[1:]
            body = "\n\n".join([f"**{title}**"] + inner) if title else "\n\n".join(inner)
            return [_indent(body, "> ").replace("\n\n", "\n>\n")]
        if isinstance(node, nodes.table):
            return [self.table(node)]
        if isinstance(node, (nodes.image,)):
            return [f"*image: {escape_markdown(node.get('alt') or node.get('uri', ''))}*"]
        if isinstance(node, nodes.TextElement):  # an inline-only element met at block level
            return [self.inline(node)]
        return self.blocks(node)  # containers: topic, sidebar, compound, container, figure...

    def pair(self, item: Any) -> str:
        """A definition / field / option list item: the term in bold on its own line, the
        definition's first paragraph right under it (a hard line break), the rest after."""
        from docutils import nodes

        heads: list[str] = []
        body: list[str] = []
        for child in item.children:
            if isinstance(child, nodes.option_group):
                heads.append(_code_span(child.astext()))
            elif isinstance(child, (nodes.term, nodes.field_name)):
                heads.append(self.inline(child))
            elif isinstance(child, nodes.classifier):
                heads.append("*" + self.inline(child) + "*")
            else:
                body.extend(self.blocks(child))
        head = " : ".join(h for h in heads if h)
        text = f"**{head}**" if head else ""
        if body and text and _PARAGRAPH.match(body[0]):
            text += "\\\n" + body.pop(0)
        return "\n\n".join([text] + body if text else body)

    def table(self, node: Any) -> str:
        from docutils import nodes

        rows = []
        header = 0
        for part in node.findall(nodes.tgroup):
            for section in part.children:
                if isinstance(section, (nodes.thead, nodes.tbody)):
                    for row in section.children:
                        cells = [" ".join(self.blocks(e)).replace("\n", " ")
                                 .replace("|", "\\|") for e in row.children]
                        rows.append(cells)
                        if isinstance(section, nodes.thead):
                            header += 1
            break
        if not rows:
            return ""
        width = max(len(r) for r in rows)
        rows = [r + [""] * (width - len(r)) for r in rows]
        head = rows[0] if header else [""] * width
        body = rows[1:] if header else rows
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * width]
        lines += ["| " + " | ".join(r) + " |" for r in body]
        return "\n".join(lines)

    # -- inline ------------------------------------------------------------------------
    def inline(self, node: Any) -> str:
        return "".join(self.span(c) for c in node.children).strip()

    def span(self, node: Any) -> str:
        from docutils import nodes

        if isinstance(node, nodes.Text):
            # astext(), not str(): docutils keeps a backslash escape as a NUL in str()
            return escape_markdown(node.astext())
        if isinstance(node, (nodes.literal, nodes.math)):
            return _code_span(node.astext())
        if isinstance(node, nodes.problematic):
            role = _ROLE.match(node.astext())
            return _code_span(role.group(1)) if role else escape_markdown(node.astext())
        if isinstance(node, (nodes.target, nodes.substitution_definition)) and \
                not node.children:
            return ""
        inner = "".join(self.span(c) for c in node.children)
        if not inner.strip():
            return inner
        if isinstance(node, nodes.strong):
            return f"**{inner}**"
        if isinstance(node, (nodes.emphasis, nodes.title_reference)):
            return f"*{inner}*"
        if isinstance(node, (nodes.footnote_reference, nodes.citation_reference)):
            return f"\\[{inner}\\]"
        if isinstance(node, nodes.reference):
            uri = node.get("refuri", "")
            if uri and re.fullmatch(r"[^\s<>]+", uri) and uri != node.astext():
                return f"[{inner}](<{uri}>)"
            return inner
        return inner


__all__ = ["MARKUPS", "escape_markdown", "guess_markup", "markup_of_source", "rst_to_markdown"]
