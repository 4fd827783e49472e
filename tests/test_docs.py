"""The documentation: it builds with Sphinx with warnings as errors, and its examples run.

Every page's Python examples and ``pycon`` sessions run, in order, and print what the page shows
(PAGES, ISOLATED_PAGES, PAGES_RUN_ELSEWHERE: a page with examples in none of them fails); the
``salsox`` commands of its shell examples parse with the command line's parser.

CI installs the ``docs`` extra through the ``test`` extra, so these run there; locally they
are skipped when Sphinx or MyST is missing (``pip install ".[docs]"``).
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Iterator, List, Tuple

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_docs_build_with_warnings_as_errors(tmp_path: Path) -> None:
    pytest.importorskip("sphinx")
    pytest.importorskip("myst_parser")
    env = dict(os.environ, SKBUILD_EDITABLE_VERBOSE="0", PYTHONWARNINGS="ignore::DeprecationWarning")
    # Not from the repository root: conf.py must import the installed salsox, not ./salsox.
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "sphinx",
            "-W",
            "--keep-going",
            "-E",
            "-q",
            "-b",
            "html",
            str(DOCS),
            str(tmp_path / "html"),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=600,
    )
    warnings = "\n".join(line for line in proc.stderr.splitlines() if "waiting to acquire lock" not in line)
    assert proc.returncode == 0, f"sphinx-build failed:\n{proc.stdout[-3000:]}\n{warnings[-5000:]}"
    for page in ("index", "getting_started", "losses", "api", "comparison", "cli", "understanding", "plugins"):
        assert (tmp_path / "html" / f"{page}.html").is_file(), page
    api = (tmp_path / "html" / "api.html").read_text(encoding="utf-8")
    for name in ("salsox.salso", "salsox.partition_loss", "salsox.Draws", "salsox.Binder", "salsox.psm"):
        assert f'id="{name}"' in api, f"{name} missing from the API reference"


@dataclass(frozen=True)
class _Block:
    """One fenced code block of a page."""

    lang: str  # "python", "pycon", "text", "console", ... ("{eval-rst}" for a MyST directive; "" if none)
    code: str  # its text, without the fence's indentation
    line: int  # 1-based line of the opening fence
    adjacent: bool  # only blank lines between it and the block before: a text block so placed is its output


_FENCE = re.compile(r"^( *)```(\S*)\s*$")


def _parse_blocks(text: str) -> List[_Block]:
    """Every fenced code block of a Markdown page, in order (fences may be indented, in lists)."""
    lines = text.splitlines()
    blocks: List[_Block] = []
    end = None  # line index of the previous block's closing fence
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, lang = m.group(1), m.group(2)
        j = i + 1
        while j < len(lines) and lines[j].rstrip() != indent + "```":
            j += 1
        assert j < len(lines), f"the code block opened at line {i + 1} is never closed"
        body = [line[len(indent) :] if line.startswith(indent) else line.lstrip() for line in lines[i + 1 : j]]
        adjacent = end is not None and not any(line.strip() for line in lines[end + 1 : i])
        blocks.append(_Block(lang, "\n".join(body) + "\n", i + 1, adjacent))
        end, i = j, j + 1
    return blocks


# A session with the package that plugins.md builds installed (section 5): it runs in a process
# of its own where that package is installed (see _install_page_package), since the page's
# runtime registrations (section 6) would conflict with it.
_NEEDS_PAGE_PACKAGE = re.compile(r"salsox_mylosses")

# The pages whose examples run here, each in one namespace, in order, as a reader runs them.
PAGES = [
    "index.md",
    "item_names.md",
    "getting_started.md",
    "losses.md",
    "chips.md",
    "coming_from_r.md",
    "understanding.md",
    "gallery.md",
    "large.md",
    "diagnostics.md",
    "../README.md",
]
# Their examples register plugins in the process: each runs in a process of its own.
ISOLATED_PAGES = ["plugins.md"]
# Run by another test file, beside the tests of what the page shows (it calls
# test_examples_run_and_print_what_the_page_shows).
PAGES_RUN_ELSEWHERE = {"wasabi.md": "test_wasabi.py"}

# What an example needs changed to run here, (text on the page, text run instead); each must
# occur on the page, so that a rewritten page cannot silently drop the change.
_RUN_HERE_INSTEAD: Dict[str, List[Tuple[str, str]]] = {
    "large.md": [
        # A ten-minute budget would take ten minutes: the same call with a budget of a second.
        ("seconds=600", "seconds=1"),
        # No cluster to point at: a LocalCluster of the test's (see _page_setting).
        ('Client("tcp://<scheduler-host>:8786")', "Client(cluster)"),
    ],
}


@contextlib.contextmanager
def _page_setting(page: str, blocks: List[_Block]) -> Iterator[Dict[str, Any]]:
    """The namespace the page's examples run in, in a working directory of their own (the
    files they read, they write themselves: nothing is provided but, for the one example of
    large.md that connects to a Dask scheduler, a LocalCluster to connect to)."""
    namespace: Dict[str, Any] = {"__name__": "__docs__"}
    here = os.getcwd()
    with tempfile.TemporaryDirectory() as cwd, contextlib.ExitStack() as stack:
        os.chdir(cwd)
        stack.callback(os.chdir, here)
        if page == "large.md":
            distributed = pytest.importorskip("distributed")
            namespace["cluster"] = stack.enter_context(
                distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None)
            )
            stack.callback(lambda: namespace["client"].close() if "client" in namespace else None)
        yield namespace


def _run_page(path: Path, with_page_package: bool = False) -> int:
    """Run every Python example of a page (in order, one namespace) and its ``pycon`` sessions
    (as doctests); a ``text`` block right after an example (nothing but blank lines between)
    is its exact output. Returns the number of examples run. The examples that use the
    package plugins.md builds run only with ``with_page_package``, and then alone."""
    import doctest

    text = path.read_text(encoding="utf-8")
    for original, _ in _RUN_HERE_INSTEAD.get(path.name, []):
        assert text.count(original) == 1, f"{path.name} no longer has {original!r} once: update _RUN_HERE_INSTEAD"
    blocks = _parse_blocks(text)
    try:
        import matplotlib
    except ImportError:  # pages with plots need the optional dependency
        matplotlib = None
    if matplotlib is not None:
        matplotlib.use("Agg")  # files only, never a window
    elif any("plots." in b.code or "plot_" in b.code for b in blocks):
        pytest.skip("matplotlib is not installed")
    ran = 0
    with _page_setting(path.name, blocks) as namespace:
        for i, block in enumerate(blocks):
            if block.lang not in ("python", "pycon"):
                continue
            if bool(_NEEDS_PAGE_PACKAGE.search(block.code)) != with_page_package:
                continue
            where = f"{path.name}, block {i} (line {block.line})"
            if block.lang == "pycon":
                runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
                report = io.StringIO()
                test = doctest.DocTestParser().get_doctest(block.code, namespace, where, str(path), block.line)
                runner.run(test, out=report.write, clear_globs=False)
                assert runner.failures == 0, f"{where} shows something else:\n{report.getvalue()}"
                ran += 1
                continue
            code = block.code
            for original, replacement in _RUN_HERE_INSTEAD.get(path.name, []):
                code = code.replace(original, replacement)
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                exec(compile(code, where, "exec"), namespace)
            ran += 1
            if matplotlib is not None:
                import matplotlib.pyplot as plt

                plt.close("all")
            after = blocks[i + 1] if i + 1 < len(blocks) else None
            if after is not None and after.lang == "text" and after.adjacent:
                assert out.getvalue().strip() == after.code.strip(), (
                    f"{where} prints something else than the page shows:\n{out.getvalue()}"
                )
    return ran


def _runnable_blocks(path: Path, with_page_package: bool = False) -> int:
    """How many examples _run_page must run: every Python and ``pycon`` block of the page
    (those using the package plugins.md builds in the run with it, the others without)."""
    blocks = _parse_blocks(path.read_text(encoding="utf-8"))
    return sum(
        b.lang in ("python", "pycon") and bool(_NEEDS_PAGE_PACKAGE.search(b.code)) == with_page_package
        for b in blocks
    )


def _install_page_package(page: str, site: Path) -> None:
    """Install the package that plugins.md builds (section 5) into ``site``, as pip would for
    Python: src/salsox_mylosses/plugin.py holds the blocks defining the classes, the function
    and the hooks, and a dist-info directory declares the page's pyproject.toml entry points."""
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        tomllib = pytest.importorskip("tomli")

    blocks = _parse_blocks((DOCS / page).read_text(encoding="utf-8"))
    pyproject = tomllib.loads(next(b.code for b in blocks if b.lang == "toml"))
    wanted = ("class Tsallis", "class FowlkesMallows", "def random_draw", "@salsox.hookimpl")
    parts = [next(b.code for b in blocks if b.lang == "python" and what in b.code) for what in wanted]
    package = site / "salsox_mylosses"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "plugin.py").write_text("\n\n".join(parts), encoding="utf-8")
    project = pyproject["project"]
    info = site / f"{project['name'].replace('-', '_')}-{project['version']}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n", encoding="utf-8"
    )
    lines = ["[salsox]"] + [f"{name} = {target}" for name, target in project["entry-points"]["salsox"].items()]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")


def _run_isolated(page: str, with_page_package: bool = False) -> None:
    """_run_page in a process of its own, outside the checkout (so that the installed salsox is
    imported: the source tree has no extension in CI; PYTHONPATH, when set, still comes first)."""
    with tempfile.TemporaryDirectory() as cwd:
        env = dict(os.environ)
        if with_page_package:
            _install_page_package(page, Path(cwd) / "site")
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [env.get("PYTHONPATH"), str(Path(cwd) / "site")]))
        tests = str(Path(__file__).resolve().parent)
        script = (
            f"import sys; sys.path.append({tests!r}); import test_docs as t; "
            f"ran = t._run_page(t.DOCS / {page!r}, with_page_package={with_page_package}); "
            f"assert ran >= 1 and ran == t._runnable_blocks(t.DOCS / {page!r}, {with_page_package}), ran"
        )
        proc = subprocess.run(
            [sys.executable, "-c", script], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
        )
    assert proc.returncode == 0, f"{page}:\n{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}"


@pytest.mark.parametrize("page", PAGES + ISOLATED_PAGES)
def test_examples_run_and_print_what_the_page_shows(page: str) -> None:
    """Every Python example of the page runs (in order, one namespace, in an empty working
    directory: the files an example reads, the page makes); a ```text block right after an
    example is its exact output."""
    if page in ISOLATED_PAGES:
        _run_isolated(page)
    else:  # every example of the page, none skipped, with nothing provided but what it makes
        ran = _run_page(DOCS / page)
        assert ran >= 1 and ran == _runnable_blocks(DOCS / page), (ran, _runnable_blocks(DOCS / page))


def test_plugins_page_package_installs_and_runs() -> None:
    """The package plugins.md builds, installed with its entry point: the page's session with it
    lists and uses its plugins as shown."""
    _run_isolated("plugins.md", with_page_package=True)


def test_every_page_with_examples_is_run() -> None:
    """A page with Python examples is in PAGES, ISOLATED_PAGES or PAGES_RUN_ELSEWHERE (so that a
    new page cannot be forgotten), and every code block of every page says what it holds."""
    run = set(PAGES) | set(ISOLATED_PAGES)
    for page, test_file in PAGES_RUN_ELSEWHERE.items():
        source = (Path(__file__).resolve().parent / test_file).read_text(encoding="utf-8")
        assert f'check_page("{page}")' in source, f"{test_file} does not run {page}"
        run.add(page)
    pages = sorted(DOCS.glob("*.md"))
    assert len(pages) >= 10
    for path in [*pages, DOCS.parent / "README.md"]:
        blocks = _parse_blocks(path.read_text(encoding="utf-8"))
        bare = [b.line for b in blocks if not b.lang]
        assert not bare, f"{path.name}: code blocks at lines {bare} name no language (python, text, console...)"
        if any(b.lang in ("python", "pycon") for b in blocks):
            name = Path(os.path.relpath(path, DOCS)).as_posix()  # "../README.md" for the README
            assert name in run, f"{name} has Python examples that no test runs: add it to PAGES"


def _shell_commands(blocks: List[_Block]) -> List[Tuple[int, str]]:
    """(line of the block, command) of every ``salsox ...`` command of the shell blocks (a
    ``$`` prompt, pipes, redirections and comments left out)."""
    out = []
    for block in blocks:
        if block.lang not in ("bash", "console", "shell", "sh"):
            continue
        for line in block.code.splitlines():
            line = line.strip()
            line = line[2:] if line.startswith("$ ") else line
            if line.startswith("salsox "):
                out.append((block.line, re.split(r"\s[|>]\s", line)[0]))
    return out


def test_shell_examples_use_real_commands_and_options() -> None:
    """Every ``salsox`` command of the docs' shell examples parses with the command line's own
    parser: real subcommands, options and values. They are not run (they work on the reader's
    files); tests/test_cli*.py run every subcommand."""
    import shlex

    from salsox.cli import build_parser

    parser = build_parser()
    checked = 0
    for path in [*sorted(DOCS.glob("*.md")), DOCS.parent / "README.md"]:
        for line, command in _shell_commands(_parse_blocks(path.read_text(encoding="utf-8"))):
            err = io.StringIO()
            try:
                with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                    parser.parse_args(shlex.split(command, comments=True)[1:])
            except SystemExit as exc:
                assert exc.code == 0, f"{path.name}, block at line {line}: {command!r}: {err.getvalue().strip()}"
            checked += 1
    assert checked >= 40
    with pytest.raises(SystemExit), contextlib.redirect_stderr(io.StringIO()):
        parser.parse_args(["estimate", "draws.csv", "--no-such-option"])  # the check can fail


def test_a_page_that_prints_something_else_fails(tmp_path: Path) -> None:
    """The output convention catches a difference, and only a text block right after an example
    is its output."""
    page = tmp_path / "page.md"
    page.write_text("```python\nx = 6 * 7\nprint(x)\n```\n\n```text\n42\n```\n", encoding="utf-8")
    assert _run_page(page) == 1
    page.write_text("```python\nx = 6 * 7\nprint(x)\n```\n\n```text\n41\n```\n", encoding="utf-8")
    with pytest.raises(AssertionError, match="prints something else"):
        _run_page(page)
    page.write_text("```python\nprint(42)\n```\n\nA tree:\n\n```text\na/\n```\n", encoding="utf-8")
    assert _run_page(page) == 1  # prose between: an illustration, not the output
    page.write_text("```pycon\n>>> 6 * 7\n41\n```\n", encoding="utf-8")
    with pytest.raises(AssertionError, match="shows something else"):
        _run_page(page)
    page.write_text("```python\nraise RuntimeError('broken example')\n```\n", encoding="utf-8")
    with pytest.raises(RuntimeError, match="broken example"):
        _run_page(page)


def test_comparison_page_is_generated() -> None:
    text = (DOCS / "comparison.md").read_text(encoding="utf-8")
    assert "Generated by benchmarks/make_comparison.py" in text
    assert "## Quality" in text and "## Speed" in text


def _public_objects() -> List[Tuple[str, object]]:
    """Every public function and class: salsox's top-level names, the losses, the plots and
    the plugin authors' facade (type aliases, modules and pluggy's marker excluded)."""
    import inspect

    import salsox
    import salsox.plots
    import salsox.plugins

    out: List[Tuple[str, object]] = []
    seen = set()
    for module in (salsox, salsox.losses, salsox.plots, salsox.plugins):
        for name in module.__all__:
            obj = getattr(module, name)
            if not (inspect.isclass(obj) or inspect.isfunction(obj)) or id(obj) in seen:
                continue
            if not getattr(obj, "__module__", "").startswith("salsox"):
                continue  # hookimpl is pluggy's HookimplMarker
            seen.add(id(obj))
            out.append((f"{module.__name__}.{name}", obj))
    return out


def test_every_public_docstring_has_an_example() -> None:
    missing = [name for name, obj in _public_objects() if ">>>" not in (obj.__doc__ or "")]
    assert not missing, f"public docstrings without an example (>>>): {missing}"


@pytest.mark.parametrize("name, obj", _public_objects(), ids=[n for n, _ in _public_objects()])
def test_docstring_examples_run(name: str, obj: object) -> None:
    """The examples of each public docstring run and print what they show (doctest)."""
    import doctest

    import numpy as np

    import salsox

    matplotlib = pytest.importorskip("matplotlib") if name.startswith("salsox.plots") else None
    if matplotlib is not None:
        matplotlib.use("Agg")  # files only, never a window
    finder = doctest.DocTestFinder(recurse=False)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    # Each example runs in its module's namespace (as doctest does), with salsox and numpy.
    globs = dict(vars(sys.modules[obj.__module__]), salsox=salsox, np=np)
    tests = finder.find(obj, name, globs=globs)
    assert tests and any(t.examples for t in tests), f"{name} has no example"
    out = io.StringIO()
    for test in tests:
        runner.run(test, out=out.write)
    if matplotlib is not None:
        import matplotlib.pyplot as plt

        plt.close("all")
    assert runner.failures == 0, out.getvalue()
