#!/usr/bin/env python3
"""Generates Sources/HeraldLocalization/PluralRules+CLDR.swift from CLDR's plural rules.

The rules come from the CLDR data that Babel (PyPI `babel`) ships; the CLDR version is written
into the generated file. Every locale Babel carries contributes its language's cardinal rule
(and a region or script whose rule differs from its language's, such as pt_PT), and CLDR's
language aliases add the old codes (iw, in, ji, mo, kmr, ...). Each distinct rule is compiled
into one Swift function body, so evaluating a rule is plain integer and Double arithmetic.

    pip install babel
    python3 Scripts/generate-plural-rules.py > Sources/HeraldLocalization/PluralRules+CLDR.swift

The tests check the generated rules against Babel's own evaluator for every language
(PluralRulesCLDRTests), so a mistake in this compiler shows up as a disagreement.
"""
import re
import sys

import babel
import babel.localedata as localedata
from babel.core import Locale, get_cldr_version, get_global

CATEGORIES = ["zero", "one", "two", "few", "many", "other"]
# CLDR's plurals.xml lists these languages with another's rule, but Babel carries no locale for
# them (Najdi Arabic shares Arabic's rule).
SAME_RULE_AS = {"ars": "ar"}


def tokenize(text):
    return re.findall(r"\d+\.\.\d+|\d+|[a-z]+|!=|=|%|,", text)


def parse_condition(tokens):
    """condition := and ('or' and)*; and := relation ('and' relation)*."""
    pos = 0

    def relation():
        nonlocal pos
        operand = tokens[pos]; pos += 1
        modulus = None
        if pos < len(tokens) and tokens[pos] in ("mod", "%"):
            modulus = int(tokens[pos + 1]); pos += 2
        negated = False
        op = tokens[pos]; pos += 1
        if op == "not":
            negated = True
            op = tokens[pos]; pos += 1
        elif op == "is":
            if tokens[pos] == "not":
                negated = True; pos += 1
            op = "in"
        elif op == "!=":
            negated = True; op = "in"
        elif op == "=":
            op = "in"
        if op not in ("in", "within"):
            raise ValueError(f"unknown operator {op} in {tokens}")
        ranges = []
        while True:
            item = tokens[pos]; pos += 1
            if ".." in item:
                low, high = item.split("..")
                ranges.append((int(low), int(high)))
            else:
                ranges.append((int(item), int(item)))
            if pos < len(tokens) and tokens[pos] == ",":
                pos += 1
                continue
            break
        return (operand, modulus, negated, op, ranges)

    def conjunction():
        nonlocal pos
        relations = [relation()]
        while pos < len(tokens) and tokens[pos] == "and":
            pos += 1
            relations.append(relation())
        return relations

    disjunction = [conjunction()]
    while pos < len(tokens) and tokens[pos] == "or":
        pos += 1
        disjunction.append(conjunction())
    if pos != len(tokens):
        raise ValueError(f"trailing tokens in {tokens}")
    return disjunction


def swift_relation(relation):
    operand, modulus, negated, op, ranges = relation
    if operand == "n":
        # n keeps its fraction: `n in 1..2` holds only for whole numbers (`within` for any).
        value = "o.n" if modulus is None else f"o.n.truncatingRemainder(dividingBy: {modulus})"
        whole = op == "in"
        tests = []
        for low, high in ranges:
            test = f"{value} == {low}" if low == high else f"({low}...{high}).contains({value})"
            tests.append(test)
        body = " || ".join(tests)
        if whole:
            guard = "o.isInteger" if modulus is None else f"{value}.rounded(.towardZero) == {value}"
            body = f"{guard} && ({body})"
    else:
        name = {"i": "o.i", "v": "UInt64(o.v)", "w": "UInt64(o.w)", "f": "o.f", "t": "o.t", "e": "UInt64(o.e)", "c": "UInt64(o.e)"}[operand]
        value = name if modulus is None else f"{name} % {modulus}"
        tests = []
        for low, high in ranges:
            tests.append(f"{value} == {low}" if low == high else f"({low}...{high}).contains({value})")
        body = " || ".join(tests)
    return f"!({body})" if negated else f"({body})"


def swift_condition(text):
    disjunction = parse_condition(tokenize(text))
    return " || ".join("(" + " && ".join(swift_relation(r) for r in conjunction) + ")" for conjunction in disjunction)


def main():
    identifiers = set(localedata.locale_identifiers())
    by_tag = {}
    for identifier in sorted(identifiers):
        try:
            locale = Locale.parse(identifier)
        except Exception:
            continue
        rules = tuple(sorted(locale.plural_form.rules.items(), key=lambda kv: CATEGORIES.index(kv[0])))
        by_tag[identifier.replace("_", "-")] = rules
    for alias, target in get_global("language_aliases").items():
        target = target.replace("_", "-")
        if "_" not in alias and alias not in by_tag and target in by_tag:
            by_tag[alias] = by_tag[target]
    for language, same in SAME_RULE_AS.items():
        by_tag.setdefault(language, by_tag[same])
    # Keep a region or script tag only where its rule differs from the language's.
    table = {}
    for tag, rules in sorted(by_tag.items()):
        language = tag.split("-")[0]
        if tag != language and by_tag.get(language) == rules:
            continue
        table[tag] = rules
    distinct = sorted(set(table.values()), key=lambda r: (len(r), r))
    index = {rules: n for n, rules in enumerate(distinct)}

    out = []
    out.append("// Generated by Scripts/generate-plural-rules.py from CLDR %s (Babel %s). Do not edit." % (get_cldr_version(), babel.__version__))
    out.append("// The cardinal plural rules of every language in CLDR, one compiled function per distinct rule.")
    out.append("")
    out.append("extension PluralRules {")
    out.append("    /// The CLDR release the rules come from.")
    out.append('    public static let cldrVersion = "%s"' % get_cldr_version())
    out.append("")
    out.append("    /// Rule numbers by language tag (`pt-PT` where a region's rule differs from its language's).")
    out.append("    static let ruleByTag: [String: UInt8] = [")
    items = list(table.items())
    for start in range(0, len(items), 6):
        chunk = ", ".join('"%s": %d' % (tag, index[rules]) for tag, rules in items[start:start + 6])
        out.append("        " + chunk + ",")
    out.append("    ]")
    out.append("")
    out.append("    /// The categories each rule uses, `other` last.")
    out.append("    static let categoriesByRule: [[PluralCategory]] = [")
    for rules in distinct:
        names = [name for name, _ in rules if name != "other"] + ["other"]
        out.append("        [" + ", ".join("." + name for name in names) + "],")
    out.append("    ]")
    out.append("")
    out.append("    /// Evaluates rule `rule` (an index into ``categoriesByRule``).")
    out.append("    static func evaluate(rule: UInt8, _ o: PluralOperands) -> PluralCategory {")
    out.append("        switch rule {")
    for rules in distinct:
        out.append("        case %d:" % index[rules])
        for name, condition in rules:
            if name == "other":
                continue
            out.append("            // %s: %s" % (name, condition))
            out.append("            if %s { return .%s }" % (swift_condition(condition), name))
        out.append("            return .other")
    out.append("        default:")
    out.append("            return .other")
    out.append("        }")
    out.append("    }")
    out.append("}")
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
