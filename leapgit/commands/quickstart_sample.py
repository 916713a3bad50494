"""The quickstart's sample project: a tiny calculator, a three-ball slice with a dependency,
the red tests the thrower commits before the build, and a scripted builder (a real process)."""

from __future__ import annotations

UNIT = ("import unittest\n\n{imports}\n\n\nclass T(unittest.TestCase):\n"
        "    def test_{name}(self):\n{body}")

SAMPLE_FILES = {
    "README.md": "# calc\n\nA tiny calculator.\n",
    "calc/__init__.py": "",
    "calc/lexer.py": "def tokenize(text):\n    return text.split()\n",
    "calc/parser.py": (
        "from calc.lexer import tokenize\n\n\n"
        "def parse(text):\n"
        "    return [int(t) if t.isdigit() else t for t in tokenize(text)]\n"
    ),
    "tests/__init__.py": "",
    "tests/test_lexer.py": UNIT.format(
        imports="from calc.lexer import tokenize", name="tokenize",
        body="        self.assertEqual(len(tokenize('1 + 2')), 3)\n"),
}

TESTS = "python -m unittest -q"
SAMPLE_SLICE = f"""\
slice: calc-positions
spine: integrator
description: tokens carry their column, and the parser reports errors with it
balls:
  - id: lexer
    goal: every token carries its column
    spec: |
      tokenize(text) returns (text, column) pairs; columns start at 1.
    scope: [calc/lexer.py, tests/test_lexer.py]
    proof: python -m unittest -q tests.test_lexer
    tests: {TESTS}
    rollback: restore-scope
  - id: parser
    goal: a bad token is reported with its column
    spec: |
      parse(text) raises ValueError("column N: ...") on a token that is neither a number
      nor an operator.
    scope: [calc/parser.py, tests/test_parser.py]
    proof: python -m unittest -q tests.test_parser
    tests: {TESTS}
    rollback: restore-scope
    depends_on: [lexer]
  - id: docs
    goal: the README shows an error message with a column
    spec: Add a short "Errors" section to README.md.
    scope: [README.md, tests/test_docs.py]
    proof: python -m unittest -q tests.test_docs
    tests: {TESTS}
    rollback: restore-scope
"""

# The thrower's red tests (T7.1): each fails at the base, for the missing behaviour.
RED_TESTS = {
    "lexer": {"tests/test_lexer.py": UNIT.format(
        imports="from calc.lexer import tokenize", name="tokenize",
        body="        self.assertEqual(tokenize('1 + 2'), [('1', 1), ('+', 3), ('2', 5)])\n")},
    "parser": {"tests/test_parser.py": UNIT.format(
        imports="from calc.parser import parse", name="bad_token",
        body="        with self.assertRaisesRegex(ValueError, 'column 3'):\n"
             "            parse('1 x 2')\n")},
    "docs": {"tests/test_docs.py": UNIT.format(
        imports="import pathlib", name="errors_section",
        body="        self.assertIn('column', pathlib.Path('README.md').read_text())\n")},
}

# The quickstart's builder: a real process that edits files in its worktree and reports a
# claim (a 1 is only ever a claim: `leap score` derives the truth).
SAMPLE_BUILDER = """\
import os, pathlib
ball = os.environ["LEAP_BALL"]
print(f"builder: {ball}, round {os.environ['LEAP_ROUND']}, handoff {os.environ['LEAP_HANDOFF']}")
if ball == "lexer":
    pathlib.Path("calc/lexer.py").write_text(
        "def tokenize(text):\\n"
        "    out, col = [], 1\\n"
        "    for word in text.split(' '):\\n"
        "        if word:\\n"
        "            out.append((word, col))\\n"
        "        col += len(word) + 1\\n"
        "    return out\\n")
elif ball == "parser":
    pathlib.Path("calc/parser.py").write_text(
        "from calc.lexer import tokenize\\n\\n\\n"
        "def parse(text):\\n"
        "    out, col = [], 1\\n"
        "    for tok in tokenize(text):\\n"
        "        word, col = tok if isinstance(tok, tuple) else (\\n"
        "            tok, text.index(tok, col - 1) + 1)\\n"
        "        if word.isdigit():\\n"
        "            out.append(int(word))\\n"
        "        elif word in '+-*/':\\n"
        "            out.append(word)\\n"
        "        else:\\n"
        "            raise ValueError(f'column {col}: unknown token {word!r}')\\n"
        "    return out\\n")
else:
    readme = pathlib.Path("README.md")
    readme.write_text(readme.read_text() + "\\n## Errors\\n\\ncolumn 3: unknown token 'x'\\n")
pathlib.Path(os.environ["LEAP_REPORT"]).write_text("outcome: 1\\nevidence: built\\n")
"""

BUILDER_ID = "model=quickstart-builder,family=demo,session=quickstart-1"
DEMO_RUNGS = """\
tribunal:
  timeout: 10
  test_timeout: 60
  rungs:
    - id: scripted
      provider: openai
      model: scripted-demo-juror
      endpoint: {url}
      family: scripted
      tiers: [generalist, operator_safety, deep_state, fast_structural]
      context_tokens: 32000
      cost: 0
"""
