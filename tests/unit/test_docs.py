"""The documents as reference: every section the code and the documents
cite exists, every file a document names exists, and ``docs/`` stays
within its word budget (a reference a newcomer reads, not a notebook:
dated runs live beside the benches and campaigns that made them,
``bench/log/``, ``campaigns/log/``)."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"

#: Where citations of a document's section live. The dated records under
#: bench/log and campaigns/log are left as they were written.
CITING = ("src", "tests", "engine/src", "bench", "campaigns", "docs")
CITATION = re.compile(r'docs/([a-z-]+\.md)`?,?\s*(?:"([^"\n]+)"|“([^”\n]+)”)?')
#: A file a document names in backquotes, by its ending.
NAMED_FILE = re.compile(r"`([\w./-]+\.(?:py|rs|toml|md|csv|json|jsonl|gz))`")
#: About 25,000 words for docs/, 1,500 for the README (issue 56).
DOCS_WORDS, README_WORDS = 25_000, 1_500


def _texts() -> list[tuple[Path, str]]:
    files = [p for d in CITING for p in (ROOT / d).rglob("*")
             if p.is_file() and p.suffix in (".py", ".rs", ".md", ".toml") and "log" not in p.relative_to(ROOT).parts]
    files += [ROOT / "README.md", ROOT / "Makefile"]
    # A citation may run over a comment's line break: join the lines without their comment markers.
    return [(p, re.sub(r"\n\s*(?:#|//|\*)?\s*", " ", p.read_text(errors="replace"))) for p in files]


def _headings(doc: Path) -> list[str]:
    return [h.lower() for h in re.findall(r"^#+ (.*)$", doc.read_text(), re.M)]


def test_every_cited_document_and_section_exists() -> None:
    missing = []
    for path, text in _texts():
        for m in CITATION.finditer(text):
            doc = DOCS / m.group(1)
            where = f"{path.relative_to(ROOT)}: docs/{m.group(1)}"
            if not doc.exists():
                missing.append(where)
                continue
            section = m.group(2) or m.group(3)
            if section and not any(section.lower().rstrip(".") in h for h in _headings(doc)):
                missing.append(f'{where}, "{section}"')
    assert not missing, "cited but not there:\n" + "\n".join(sorted(set(missing)))


def test_every_file_a_document_names_exists() -> None:
    tracked = [p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*")
               if p.is_file() and not {".venv", "target", ".git", "__pycache__"} & set(p.parts)]
    generated = {"figures/ID.csv", "tables/ID.csv", "lab.json"}
    missing = []
    for doc in sorted(DOCS.glob("*.md")) + [ROOT / "README.md"]:
        for m in NAMED_FILE.finditer(doc.read_text()):
            name = m.group(1)
            if name.startswith("/") or name in generated:
                continue  # a path on the machine, or a file v6bench writes
            if not any(t == name or t.endswith("/" + name) for t in tracked):
                missing.append(f"{doc.relative_to(ROOT)}: {name}")
    assert not missing, "named but not there:\n" + "\n".join(sorted(set(missing)))


def test_the_documents_stay_within_their_word_budget() -> None:
    words = {p.name: len(p.read_text().split()) for p in DOCS.glob("*.md")}
    readme = len((ROOT / "README.md").read_text().split())
    assert sum(words.values()) <= DOCS_WORDS, f"docs/ holds {sum(words.values())} words: {sorted(words.items())}"
    assert readme <= README_WORDS, f"README.md holds {readme} words"
