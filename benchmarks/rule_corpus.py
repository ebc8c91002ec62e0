"""A deterministic corpus of realistic text-rule patterns, for benchmarks.

``patterns(n)`` returns ``n`` (category, RE2 pattern) pairs drawn from the kinds of rules
operators actually write: internal hostnames and addresses, tracker ids, well-known
credential formats, debug leftovers, code names, e-mail domains, home directories, TODO
conventions, personal data and generic shapes with no literal at all. ``text_rules(n)``
wraps them as projection-cache text-rule entries (docs/cache-format.md). Same seed, same
corpus, so runs compare.
"""

from __future__ import annotations

import random

ORGS = ["larkspur", "acme", "globex", "initech", "umbrella", "hooli", "vandelay", "wonka", "stark", "wayne",
        "tyrell", "cyberdyne", "soylent", "oscorp", "aperture", "blackmesa", "gringotts", "monarch"]
ZONES = ["corp", "dc1", "dc2", "prod", "stg", "int", "lab", "mgmt", "ops", "infra"]
SERVICES = ["vault", "grafana", "jenkins", "kibana", "ldap", "artifactory", "sentry", "consul", "nexus", "gitlab"]
PROJECTS = ["FRT", "OPS", "SEC", "PLAT", "INFRA", "BILL", "CORE", "DATA", "MOB", "WEB", "PAY", "ML", "SRE", "NET"]
CODENAMES = ["bluebird", "nightjar", "kestrel", "tamarind", "quokka", "marigold", "obsidian", "juniper", "sable",
             "halcyon", "pangolin", "zephyr", "cobalt", "saffron", "wolfram", "ember"]
USERS = ["alice", "bob", "carol", "dmitri", "erin", "farah", "guo", "hiro", "ines", "jamal"]
CUSTOMERS = ["Northwind", "Contoso", "Fabrikam", "Tailspin", "Woodgrove", "Litware", "Adatum", "Proseware"]
TLDS = ["com", "net", "io", "internal", "example"]

SECRETS = [
    r"\bAKIA[0-9A-Z]{16}\b",
    r"\bASIA[0-9A-Z]{16}\b",
    r"\bghp_[A-Za-z0-9]{36}\b",
    r"\bgho_[A-Za-z0-9]{36}\b",
    r"\bgithub_pat_[A-Za-z0-9_]{82}\b",
    r"\bxox[baprs]-[0-9A-Za-z-]{10,48}",
    r"\bsk_live_[0-9a-zA-Z]{24,}",
    r"\brk_live_[0-9a-zA-Z]{24,}",
    r"\bAIza[0-9A-Za-z_-]{35}\b",
    r"-----BEGIN (?:RSA |EC |DSA |OPENSSH )?PRIVATE KEY-----",
    r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}",
    r"\bSK[0-9a-fA-F]{32}\b",
    r"\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}\b",
    r"\bnpm_[A-Za-z0-9]{36}\b",
    r"(?i)\bpassword\s*[:=]\s*['\"][^'\"]{8,}['\"]",
    r"(?i)\b(?:api|access)[_-]?key\s*[:=]\s*['\"][A-Za-z0-9/+=_-]{16,}['\"]",
    r"(?i)\bsecret\s*[:=]\s*['\"][^'\"]{12,}['\"]",
    r"AccountKey=[A-Za-z0-9+/=]{40,}",
    r"\bpostgres(?:ql)?://[^:\s/]+:[^@\s]+@",
    r"\bmongodb(?:\+srv)?://[^:\s/]+:[^@\s]+@",
    r"https?://[^/\s:@]+:[^/\s:@]+@[^/\s]+",
    r"\bglpat-[0-9A-Za-z_-]{20}\b",
    r"\bhf_[A-Za-z0-9]{34}\b",
    r"\bsk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}\b",
    r"(?i)aws_secret_access_key\s*=\s*[A-Za-z0-9/+=]{40}",
]

DEBUG = [
    r"console\.log\(",
    r"\bdebugger;",
    r"\bdbg!\(",
    r"\bpdb\.set_trace\(\)",
    r"\bbreakpoint\(\)",
    r"\bprintln!\(\"DEBUG",
    r"fmt\.Println\(\"debug",
    r"\bSystem\.out\.println\(",
    r"^\s*import pdb\b",
    r"\bbinding\.pry\b",
    r"\bvar_dump\(",
    r"\bconsole\.(?:debug|trace)\(",
    r"\bunwrap\(\)\s*;\s*//\s*TODO",
    r"#\[allow\(dead_code\)\]",
]

GENERIC = [
    r"\b[0-9a-f]{40}\b",
    r"\b[A-Z]{2,}-[0-9]+\b",
    r"[A-Za-z0-9+/]{40,}={0,2}",
    r"\b[0-9]{3}-[0-9]{2}-[0-9]{4}\b",
    r"\b(?:[0-9]{4}[ -]?){3}[0-9]{4}\b",
    r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b",
    r"\+1[ -]?\(?[0-9]{3}\)?[ -]?[0-9]{3}-[0-9]{4}",
    r"\b[A-Z0-9._%+-]+@[A-Z0-9.-]+\.[A-Z]{2,}\b",
    r"[^\x00-\x7F]{20,}",
    r"\b(?:[0-9]{1,3}\.){3}[0-9]{1,3}\b",
]


def _hostname(r: random.Random) -> str:
    org, zone, tld = r.choice(ORGS), r.choice(ZONES), r.choice(TLDS)
    return r.choice([
        rf"\b[a-z0-9-]+\.{zone}\.{org}\.{tld}\b",
        rf"\b{r.choice(SERVICES)}(?:-[a-z0-9]+)*\.{org}\.internal\b",
        rf"(?i)\b[a-z0-9-]+\.{org}-{zone}\.{tld}\b",
        rf"\b[a-z0-9-]+\.(?:{zone}|{r.choice(ZONES)})\.{org}\.example\b",
        rf"\b{org}-{zone}-[0-9]{{2,3}}\b",
    ])


def _address(r: random.Random) -> str:
    return r.choice([
        rf"\b10\.{r.randint(0, 255)}\.[0-9]{{1,3}}\.[0-9]{{1,3}}\b",
        rf"\b192\.168\.{r.randint(0, 255)}\.[0-9]{{1,3}}\b",
        r"\b172\.(?:1[6-9]|2[0-9]|3[01])\.[0-9]{1,3}\.[0-9]{1,3}\b",
        rf"\b10\.(?:{r.randint(0, 99)}|{r.randint(100, 255)})\.[0-9]{{1,3}}\.[0-9]{{1,3}}\b",
        rf"\bfd{r.randint(0, 255):02x}:[0-9a-f]{{1,4}}:[0-9a-f:]+\b",
    ])


def _ticket(r: random.Random) -> str:
    a, b, c = r.sample(PROJECTS, 3)
    return r.choice([
        rf"\b{a}-[0-9]+\b",
        rf"\b(?:{a}|{b}|{c})-[0-9]{{1,6}}\b",
        rf"(?i)\bjira\.{r.choice(ORGS)}\.com/browse/[A-Z]+-[0-9]+",
        rf"\b{a}#[0-9]{{3,}}\b",
        rf"(?i)\b{r.choice(ORGS)}\.atlassian\.net\b",
    ])


def _codename(r: random.Random) -> str:
    name = r.choice(CODENAMES)
    return r.choice([
        rf"(?i)\bproject[ _-]?{name}\b",
        rf"(?i)\b{name}\b",
        rf"\b{name.capitalize()}(?:Service|Client|Api)\b",
    ])


def _email(r: random.Random) -> str:
    org = r.choice(ORGS)
    return r.choice([
        rf"\b[A-Za-z0-9._%+-]+@{org}\.(?:com|net)\b",
        rf"(?i)\b[a-z0-9._%+-]+@(?:mail\.)?{org}-corp\.com\b",
    ])


def _home(r: random.Random) -> str:
    user = r.choice(USERS)
    return r.choice([rf"/home/{user}/", r"/Users/[a-z]+/", rf"(?i)C:\\Users\\{user}\\", r"/home/[a-z_][a-z0-9_-]*/\.ssh/"])


def _todo(r: random.Random) -> str:
    return r.choice([r"\bTODO[^(]", r"\bFIXME\b", r"\bXXX\b", r"\bHACK\b", r"(?i)\bdo not merge\b",
                     r"\bTODO\(\s*\)", r"(?i)\btemporary workaround\b"])


def _customer(r: random.Random) -> str:
    a, b = r.sample(CUSTOMERS, 2)
    return r.choice([rf"(?i)\b(?:{a}|{b})\s+(?:inc|corp|ltd)\b", rf"\b{a}\b", rf"(?i)\bcustomer[_ -]?{a.lower()}\b"])


KINDS = [
    ("hostname", 18, _hostname),
    ("address", 8, _address),
    ("ticket", 12, _ticket),
    ("credential", 14, lambda r: r.choice(SECRETS)),
    ("debug", 8, lambda r: r.choice(DEBUG)),
    ("codename", 10, _codename),
    ("email", 6, _email),
    ("home-dir", 4, _home),
    ("todo", 6, _todo),
    ("customer", 6, _customer),
    ("generic", 8, lambda r: r.choice(GENERIC)),
]


def patterns(n: int = 500, seed: int = 20260804) -> list[tuple[str, str]]:
    """``n`` (category, pattern) pairs; patterns repeat only when the generators run dry."""
    r = random.Random(seed)
    weights = [w for _, w, _ in KINDS]
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    attempts = 0
    while len(out) < n:
        kind, _, make = r.choices(KINDS, weights)[0]
        pattern = make(r)
        attempts += 1
        if pattern in seen and attempts < n * 20:
            continue
        seen.add(pattern)
        out.append((kind, pattern))
    return out


def text_rules(n: int = 500, seed: int = 20260804) -> list[dict]:
    """Text-rule cache entries (docs/cache-format.md) for ``n`` corpus patterns."""
    base = "http://aegis.gastown.local/ontology/"
    rules = []
    for i, (kind, pattern) in enumerate(patterns(n, seed)):
        name = f"rule_{kind.replace('-', '_')}_{i:05d}"
        label = f"no {kind} ({i})"
        exempt = [f"^docs/{kind}/", "^tests/fixtures/"] if i % 4 == 0 else []
        rules.append({
            "iri": base + name, "name": name, "label": label, "labels": [label], "pattern": pattern,
            "tier": "block" if i % 3 else "warn", "class": kind,
            "exempt_path_regex": "|".join(f"(?:{x})" for x in exempt) or None, "exempt_path_regexes": exempt,
            "exemption_selectors": [], "rationale": f"{kind} values leak what is internal", "rationales": [
                f"{kind} values leak what is internal"],
        })
    return rules
