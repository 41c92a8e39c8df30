"""The MyST a chapter's markdown uses, read in one place for every tool that rewrites it.

The website renders MyST itself. Two other readers do not: the learner edition
(``tools/editions/learner.py``), which must be plain CommonMark for Colab, and the course
site for a running class (``tools/book/course_site.py``), which leaves out a listing that
would give an exercise away. Both find a ``literalinclude`` and the lines it shows here, so the
two can never disagree on what a listing contains.
"""

from __future__ import annotations

import ast
import re
import textwrap
from pathlib import Path

# ```{literalinclude} path, its :option: lines, then the closing fence (the same length).
INCLUDE = re.compile(r"^(`{3,})\{literalinclude\}\s*(\S+)[^\n]*\n((?::[^\n]*\n)*)\1[ \t]*$", re.M)
OPTION = re.compile(r"^:([\w-]+):\s*(.*?)\s*$", re.M)


def options(block: str) -> dict[str, str]:
    """The ``:name: value`` lines of a directive, as a dict (MyST reads values as YAML
    strings, so surrounding quotes go)."""
    return {key: value.strip("'\"") for key, value in OPTION.findall(block)}


def _pyobject(path: Path, lines: list[str], name: str) -> list[str]:
    """The lines of the function or class ``name`` (``Class.method`` too), decorators included."""
    node = ast.parse("\n".join(lines))
    for part in name.split("."):
        node = next(
            (
                n
                for n in ast.iter_child_nodes(node)
                if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name == part
            ),
            None,
        )
        if node is None:
            raise ValueError(f"literalinclude of {path.name}: no function or class {name!r}")
    first = min([node.lineno] + [d.lineno for d in node.decorator_list])
    return lines[first - 1 : node.end_lineno]


def _line_numbers(spec: str, total: int) -> list[int]:
    """Sphinx's ``lines`` option, 0-based: "2", "1-3", "5-" (to the end), comma-separated."""
    found = []
    for part in spec.split(","):
        first, dash, last = part.strip().partition("-")
        start = int(first) if first else 1
        end = (int(last) if last else total) if dash else start
        found.extend(range(start - 1, min(end, total)))
    return found


def included_lines(path: Path, opts: dict[str, str]) -> list[str]:
    """The lines a ``literalinclude`` of ``path`` shows, selected as Sphinx selects them.

    Understands ``pyobject``, ``lines``, ``start-at``, ``start-after``, ``end-at``,
    ``end-before`` and ``dedent``. A marker that is not in the file is an error, as it is
    for Sphinx, so a listing never silently shows the wrong lines.
    """
    lines = path.read_text().splitlines()
    if "pyobject" in opts:
        lines = _pyobject(path, lines, opts["pyobject"])

    def line_of(key: str) -> int:
        found = next((i for i, line in enumerate(lines) if opts[key] in line), None)
        if found is None:
            raise ValueError(f"literalinclude of {path.name}: {key} {opts[key]!r} not found")
        return found

    if "start-at" in opts:
        lines = lines[line_of("start-at") :]
    elif "start-after" in opts:
        lines = lines[line_of("start-after") + 1 :]
    if "end-at" in opts:
        lines = lines[: line_of("end-at") + 1]
    elif "end-before" in opts:
        lines = lines[: line_of("end-before")]
    if "lines" in opts:  # after start/end, as Sphinx does: "1-3, 5-" counts from there
        lines = [lines[i] for i in _line_numbers(opts["lines"], len(lines))]
    if "dedent" in opts:
        if opts["dedent"].isdigit():  # Sphinx cuts that many characters from every line
            lines = [line[int(opts["dedent"]) :] for line in lines]
        else:
            lines = textwrap.dedent("\n".join(lines)).split("\n")
    return lines


def included(path: Path, opts: dict[str, str]) -> str:
    """The text a ``literalinclude`` shows (see :func:`included_lines`)."""
    return "\n".join(included_lines(path, opts)).strip("\n")


def inline_includes(markdown: str, base: Path) -> str:
    """``markdown`` with each ``literalinclude`` replaced by a fenced block of its lines.

    ``base`` is the folder the include paths are relative to (the chapters' folder).
    """

    def fence(match: re.Match) -> str:
        text = included((base / match.group(2)).resolve(), options(match.group(3)))
        return f"```python\n{text}\n```"

    return INCLUDE.sub(fence, markdown)


# --- MyST to CommonMark, for the learner edition -------------------------------------

# A directive: ```{name} argument, then its body up to the closing fence (the same one).
DIRECTIVE = re.compile(
    r"^(?P<fence>`{3,}|:{3,})\{(?P<name>[\w-]+)\}(?P<arg>[^\n]*)\n(?P<body>.*?)^(?P=fence)[ \t]*$",
    re.M | re.S,
)
ROLE = re.compile(r"\{(?P<name>[\w:-]+)\}`(?P<text>[^`]*)`")
TITLED = re.compile(r"^(?P<text>.*?)\s*<(?P<target>[^<>]+)>$", re.S)  # `text <target>`
ROLE_OR_CODE = re.compile(
    r"(?P<role>\{[\w:-]+\}`[^`]*`)|^(?P<fence>`{3,}).*?^(?P=fence)[ \t]*$|`[^`\n]*`", re.M | re.S
)


def body_options(body: str) -> tuple[dict[str, str], str]:
    """Split a directive's body into its leading ``:option:`` lines and its content."""
    lines = body.split("\n")
    count = 0
    while count < len(lines) and OPTION.match(lines[count]):
        count += 1
    return options("\n".join(lines[:count])), "\n".join(lines[count:]).strip("\n")


def quote(text: str) -> str:
    """``text`` as a CommonMark blockquote.

    Display math goes on one line first: jupyterlab-myst would otherwise keep the quote's
    ``>`` marks inside a ``$$`` block that spans several lines.
    """
    text = re.sub(
        r"^\$\$\n(.*?)\n\$\$[ \t]*$",
        lambda m: "$$ " + " ".join(line.strip() for line in m.group(1).split("\n")) + " $$",
        text,
        flags=re.M | re.S,
    )
    return "\n".join(f"> {line}" if line else ">" for line in text.split("\n"))


def details(summary: str, content: str) -> str:
    """A folded block that JupyterLab and Colab both render closed until clicked."""
    return f"<details>\n<summary>{summary}</summary>\n\n{content.strip()}\n\n</details>"


FOLD_TOKEN = re.compile(r"<details>\n<summary>(.*?)</summary>\n\n|\n\n</details>")


def dropdowns(text: str) -> str:
    """Each ``details`` fold of ``text`` as a MyST dropdown, for JupyterLab with
    jupyterlab-myst: it typesets no math inside an HTML block, but does inside a dropdown.
    An outer fold's fence is longer than any fold it holds."""
    tree: list = []  # text pieces and (summary, children) folds
    stack = [tree]
    at = 0
    for match in FOLD_TOKEN.finditer(text):
        stack[-1].append(text[at : match.start()])
        at = match.end()
        if match.group(1) is not None:  # an opening tag
            fold = (match.group(1), [])
            stack[-1].append(fold)
            stack.append(fold[1])
        elif len(stack) > 1:
            stack.pop()
        else:
            raise ValueError("a </details> with no <details> before it")
    if len(stack) > 1:
        raise ValueError("a <details> that is never closed")
    stack[-1].append(text[at:])

    def depth(parts: list) -> int:
        return max((1 + depth(p[1]) for p in parts if isinstance(p, tuple)), default=0)

    def emit(parts: list) -> str:
        out = []
        for part in parts:
            if isinstance(part, str):
                out.append(part)
            else:
                fence = ":" * (2 + depth([part]))
                body = emit(part[1]).strip()
                out.append(f"{fence}{{dropdown}} {part[0]}\n{body}\n{fence}")
        return "".join(out)

    return emit(tree)


def code_fence(code: str, language: str = "python") -> str:
    """``code`` in a fence longer than any run of backticks inside it."""
    longest = max((len(m) for m in re.findall(r"`{3,}", code)), default=2)
    fence = "`" * (longest + 1)
    return f"{fence}{language}\n{code.rstrip()}\n{fence}"


class Converter:
    """Turn one chapter's MyST into CommonMark with math and ``<details>``.

    ``numbers`` maps every exercise label of the course to ``(chapter stem, k)``: the
    ``k``-th exercise of that chapter;
    ``site`` is the website's address (links to the glossary, references and other
    chapters); ``bib`` maps a citation key to its author-year text; ``terms`` maps each
    glossary term, in lower case, to its anchor on the glossary page. Anything this does
    not know is an error, never left as raw MyST for Colab to show.
    """

    def __init__(self, stem: str, numbers: dict, site: str, bib: dict, terms: dict[str, str]):
        self.stem, self.numbers, self.site, self.bib = stem, numbers, site.rstrip("/"), bib
        self.terms = terms

    def exercise_name(self, label: str) -> str:
        if label not in self.numbers:
            raise ValueError(f"{self.stem}: no exercise labelled {label!r}")
        stem, k = self.numbers[label]
        return f"Exercise {int(stem[:2])}.{k}"

    def reference(self, label: str, text: str | None = None) -> str:
        """An exercise named as the site names it; a link when it is in another chapter."""
        name = self.exercise_name(label)
        if text:
            name = text.replace("%s", name.removeprefix("Exercise "))
        stem = self.numbers[label][0]
        if stem == self.stem:
            return f"**{name}**"
        return f"[{name}]({self.site}/chapters/{stem}.html#{label})"

    def role(self, match: re.Match) -> str:
        name, text = match["name"], match["text"]
        titled = TITLED.match(text)
        shown, target = (titled["text"], titled["target"]) if titled else (text, text)
        if name == "term":
            if target.lower() not in self.terms:
                raise ValueError(f"{self.stem}: {target!r} is not a term of glossary.md")
            return f"[{shown}]({self.site}/glossary.html#{self.terms[target.lower()]})"
        if name in ("numref", "ref"):
            return self.reference(target, shown if titled else None)
        if name in ("cite", "cite:p", "cite:t"):
            keys = [key.strip() for key in text.split(",")]
            missing = [key for key in keys if key not in self.bib]
            if missing:
                raise ValueError(f"{self.stem}: no reference {missing[0]!r} in references.bib")
            link = f"{self.site}/references.html"
            if name == "cite:t":
                return "; ".join(f"[{self.bib[k][0]} ({self.bib[k][1]})]({link})" for k in keys)
            inner = "; ".join(", ".join(p for p in self.bib[k] if p) for k in keys)
            return f"([{inner}]({link}))"
        raise ValueError(f"{self.stem}: the role {{{name}}} has no plain-markdown form yet")

    def directive(self, match: re.Match) -> str:
        name, arg = match["name"], match["arg"].strip()
        opts, content = body_options(match["body"])
        content = self.convert(content)
        if name == "exercise":
            label = opts.get("label", "")
            title = f"**{self.exercise_name(label)}: {arg}**" if arg else f"**{label}**"
            return quote(f"{title}\n\n{content}")
        if name == "solution":
            number = self.exercise_name(arg)
            return details(f"Solution to {number} (click to open)", content)
        if name == "admonition":
            if "dropdown" in opts.get("class", ""):
                return details(f"{arg} (click to open)", content)
            return quote(f"**{arg}**\n\n{content}")
        raise ValueError(f"{self.stem}: the directive {{{name}}} has no plain-markdown form yet")

    def convert(self, text: str, base: Path | None = None) -> str:
        """CommonMark for ``text``: listings inlined, directives and roles rewritten."""
        if base is not None:
            text = inline_includes(text, base)
        text = DIRECTIVE.sub(self.directive, text)

        def role(match: re.Match) -> str:  # code, fenced or inline, is left as it is
            return self.role(ROLE.fullmatch(match["role"])) if match["role"] else match[0]

        return ROLE_OR_CODE.sub(role, text)


def glossary_anchors(path: Path) -> dict[str, str]:
    """Each term of a MyST ``{glossary}`` page, in lower case, and the id Sphinx gives it:
    "term-" and the term with every run of other characters than letters, digits, "." and
    "_" made one "-" (its case kept)."""
    block = re.search(r"^```\{glossary\}\n(.*?)^```", path.read_text(), re.M | re.S)
    terms = re.findall(r"^(\S[^\n]*)$", block.group(1), re.M) if block else []
    return {t.lower(): "term-" + re.sub(r"[^A-Za-z0-9._]+", "-", t).strip("-") for t in terms}
