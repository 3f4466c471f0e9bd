#!/usr/bin/env python3
"""Rewrites the rule table embedded in docs/rules.md from `collfuzz rules --markdown`.

    tools/update_rules_doc.py [path/to/collfuzz]

A test (RuleTable.DocsEmbedTheTable) fails while the two differ.
"""
import pathlib
import subprocess
import sys

root = pathlib.Path(__file__).resolve().parent.parent
binary = sys.argv[1] if len(sys.argv) > 1 else str(root / "build/release/collfuzz")
table = subprocess.run([binary, "rules", "--markdown"], check=True, capture_output=True, text=True).stdout
doc_path = root / "docs/rules.md"
doc = doc_path.read_text()
begin = doc.index("<!-- rules:begin -->\n") + len("<!-- rules:begin -->\n")
end = doc.index("<!-- rules:end -->")
doc = doc[:begin] + table + doc[end:]
# The rows that changed between JAX releases (collfuzz rules --markdown --changes).
changes = subprocess.run([binary, "rules", "--markdown", "--changes"], check=True, capture_output=True,
                         text=True).stdout
begin = doc.index("<!-- rule-changes:begin -->\n") + len("<!-- rule-changes:begin -->\n")
end = doc.index("<!-- rule-changes:end -->")
doc = doc[:begin] + changes + doc[end:]
# How to fix each rule (rule_fixes.def; collfuzz rules --json gives each rule's "fix").
import json  # noqa: E402  pylint: disable=wrong-import-position
rules = json.loads(subprocess.run([binary, "rules", "--json"], check=True, capture_output=True,
                                  text=True).stdout)
fixes = "| rule | how to fix the kernel |\n|---|---|\n" + "".join(
    f"| `{r['id']}` | {r['fix']} |\n" for r in rules)
begin = doc.index("<!-- rule-fixes:begin -->\n") + len("<!-- rule-fixes:begin -->\n")
end = doc.index("<!-- rule-fixes:end -->")
doc_path.write_text(doc[:begin] + fixes + doc[end:])
# Undefined behaviour at run time (harness/core/undefined_behaviour.def), read through the C
# preprocessor; UndefinedBehaviourTable.DocsEmbedTheTable keeps it in step.
import ast  # noqa: E402  pylint: disable=wrong-import-position
import re  # noqa: E402  pylint: disable=wrong-import-position
src = ('#define COLLFUZZ_UNDEFINED(Enum, name, id, source, summary, fix) ROW(name, id, source, summary, fix)\n'
       '#include "harness/core/undefined_behaviour.def"\n')
expanded = subprocess.run(["c++", "-E", "-P", f"-I{root}", "-x", "c++", "-"], input=src, check=True,
                          capture_output=True, text=True).stdout
table = "| id | code | what | source | fix |\n|---|---|---|---|---|\n"
for m in re.finditer(r"ROW\((.*?)\)\s*(?=ROW\(|$)", expanded, re.S):
  name, id_, source, summary, fix = ast.literal_eval("(" + m.group(1) + ")")
  table += f"| `{id_}` | `{name}` | {summary} | {source} | {fix} |\n"
doc = doc_path.read_text()
begin = doc.index("<!-- undefined:begin -->\n") + len("<!-- undefined:begin -->\n")
end = doc.index("<!-- undefined:end -->")
doc_path.write_text(doc[:begin] + table + doc[end:])
