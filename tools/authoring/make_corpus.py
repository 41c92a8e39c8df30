"""Write chapter 12's corpus: short sentences about food, eating and how things taste.

    python tools/authoring/make_corpus.py          # writes attention_lib/toy/data/food.txt
    python tools/authoring/make_corpus.py --check  # exit 1 if the committed file is out of date

The sentences are generated, not collected: a few dozen templates written for this course
(``attention_lib/toy/corpus_rules.py``) are filled with foods, people, places and taste
words, with a seeded random generator, so the file is the same on every machine. It is the
project's own text, under the project's licence (MIT, see LICENSE). One sentence per line,
words and the final "." separated by single spaces, every sentence different.

Every sentence is meant to be grammatical English. A food is countable ("a cake", "an
apple"), a mass noun ("rice", "some coffee") or plural ("fries", "they were salty"), and
the templates pick the article, the amount, the pronoun and the verb to agree with it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from attention_lib.toy.corpus_rules import corpus

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "attention_lib" / "toy" / "data" / "food.txt"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    text = "\n".join(corpus()) + "\n"
    if args.check:
        ok = OUT.exists() and OUT.read_text() == text
        print("corpus up to date" if ok else f"{OUT.name} is out of date: run make_corpus.py")
        return 0 if ok else 1
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text)
    words = text.split()
    print(
        f"wrote {OUT.relative_to(ROOT)}: {len(text.splitlines())} sentences, "
        f"{len(words)} words, {len(set(words))} different, {len(text.encode())} bytes"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
