"""detect-secrets' plugins ported into aegis text rules, as an operator would port them.

Writes ``before.ttl`` (each plugin's regexes, rewritten for RE2, and nothing else) and
``after.ttl`` (the same regexes with what the scanner says beside them: the entropy floors of
its high-entropy plugins, the keyword it requires, and its default heuristic filters and
allowlists as content allowlists — per rule, and on one shared selector). Run it after editing
the table below; benchmarks/secret_precision.py reads the two files it writes.

    python benchmarks/data/detect-secrets/port.py

The regexes are detect-secrets' (Yelp/detect-secrets 1.5.0, detect_secrets/plugins/*.py;
Apache-2.0, LICENSE beside this file), rewritten only where RE2 lacks a construct:

* a lookbehind ``(?<=\\W)|(?<=^)`` or ``(?<![\\w.])`` becomes a consumed ``(?:^|\\W)`` /
  ``(?:^|[^\\w.])``, a lookahead ``(?!\\w)`` a consumed ``(?:\\W|$)``: whether a line matches is
  unchanged, only the matched text grows by that character (so the secret is a named group);
* a backreference to the opening quote (``(['"])…(\\1)``) becomes one alternative per quote;
* ``^``/``$`` become line anchors (``(?m)``) and ``\\s`` inside an assignment ``[^\\S\\n]``, since
  the scanner reads a line at a time and a hook reads the whole introduced text;
* the keyword detector's per-file-type regex sets become one rule per set, each exempting the
  paths of the other file types (``aegis:exemptPathRegex``, as detect_secrets/util/filetype.py
  maps extensions);
* what RE2 cannot say at all stays out of "before": IPPublicDetector's private-range lookahead
  (in "after" it is an allowlist regex on the address) and JwtTokenDetector's base64/JSON check
  (in "after", an allowlist regex for the segments that cannot decode to a JSON object:
  :func:`jwt_not_json`).

Where "after" is looser or stricter than the scanner (none of it moves a figure on the samples):

* the keyword rules have no secret group: the per-quote alternatives would need one group name
  several times, which RE2 refuses. Their allowlists (templated `{x}`/`<x>`/`${x}`, indirect
  `= call(`) are written against the whole match, anchored at its end;
* the scanner's sequential-string filter (the whole secret is a run of an alphabet) is two
  stopwords, `abcdef` and `123456789`: looser, it also allows a secret that merely contains one;
* Base64/Hex entropy floors fire at `>=` the limit where the scanner needs `>`, and the hex
  plugin's penalty for all-digit strings has no vocabulary: a long decimal number in quotes
  fires here where the scanner may not;
* the shared filters are linked to the keyword and high-entropy rules only: on vendor-prefixed
  tokens they only lose true positives (the scanner's UUID filter drops three npm tokens);
* path filters (lock files, swagger, binary extensions) are not ported: no sample exercises
  them. They would be `aegis:exemptPathRegex` on a shared selector;
* two default filters are deliberately not ported. `is_line_allowlisted` honours an inline
  `# pragma: allowlist secret` comment: in a guard whose governed agent is the adversary, a
  comment the agent can write beside a secret must not switch the rule off, so the vocabulary
  has no line-context allowlist. `is_likely_id_string` looks at the line before the secret
  (`user_id = …`), which an allowlist on the match cannot see.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PREFIXES = ("@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n"
            "@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .\n"
            "@prefix aegis: <http://aegis.gastown.local/ontology/> .\n\n")

# ── RE2 building blocks ────────────────────────────────────────────────────────────────────

WS = r"[^\S\n]*"  # \s* within one line


def assignment(prefix: str, keyword: str, secret: str) -> str:
    """RegexBasedDetector.build_assignment_regex, for RE2 (case-insensitive, the lookbehind consumed)."""
    return (rf"(?i)(?:^|\W)(?:\[|)(?:\"|'|){prefix}(?:_|-|){keyword}(?:\"|'|)(?:\]|)(?: *)"
            rf"(?:=|:|:=|=>| +|::)(?: *)(?:\"|'|){secret}(?:\"|'|)")


# KeywordDetector (detect_secrets/plugins/keyword.py)
DENY = ("(?:api_?key|auth_?key|service_?key|account_?key|db_?key|database_?key|priv_?key|private_?key|"
        r"client_?key|db_?pass|database_?pass|key_?pass|password|passwd|pwd|secret|contraseña|contrasena)\w*")
CLOSING = r"""[\]'"]{0,2}"""
SECRET = r"""\w(?:[^\n'"]*[^\n,'"`])?"""  # (?=\w+)[^\v'"]*[^\v,'"`]: the first character a word character


def quoted(secret: str = SECRET, quotes: str = "\"'`") -> str:
    """``(QUOTE)(SECRET)(\\1)``: one alternative per quote."""
    return "(?:" + "|".join(f"{q}{secret}{q}" for q in quotes) + ")"


def maybe_quoted(secret: str = SECRET) -> str:
    """``(QUOTE?)(SECRET)(\\1)``."""
    return "(?:" + quoted(secret)[3:-1] + f"|{secret})"


DQ = quoted(quotes='"')
KW = {
    "colon_equal": rf"(?i:{DENY}(?:{CLOSING})?{WS}:={WS}{maybe_quoted()})",
    "colon": rf"(?i:{DENY}(?:{CLOSING})?:{WS}{maybe_quoted()})",
    "colon_quoted": rf"(?i:{DENY}(?:{CLOSING})?:{WS}{quoted()})",
    "c_equal": rf"(?i:{DENY}(?:\[[0-9]*\])?{WS}[!=]{{1,2}}{WS}@?{DQ})",
    "cpp_assign": rf"{DENY}(?:.assign)?\({DQ}",
    "equal": rf"(?i:{DENY}(?:{CLOSING})?{WS}(?:={{1,3}}|!==?){WS}{maybe_quoted()})",
    "equal_quoted": rf"(?i:{DENY}(?:{CLOSING})?{WS}(?:={{1,3}}|!==?){WS}{quoted()})",
    "preceded": rf"{quoted()}{WS}[!=]{{2,3}}{WS}\w*{DENY}",
    "semicolon": rf"(?i:{DENY}[^\s]{{0,50}}?{WS}{quoted()};)",
    "arrow": rf"(?i:{DENY}(?:{CLOSING})?{WS}=>?{WS}{quoted()})",
}
KW_SETS = {  # REGEX_BY_FILETYPE: which extensions read which set; every other file reads "quoted"
    "config": (("cnf", "conf", "cfg", "cf", "ini", "properties", "toml", "yaml", "yml", "eyaml"),
               ("colon", "preceded", "equal", "semicolon")),
    "go": (("go",), ("colon_equal", "preceded", "equal", "semicolon")),
    "c": (("m", "cs", "c"), ("c_equal",)),
    "cpp": (("cpp",), ("cpp_assign", "equal_quoted")),
}
KW_DEFAULT = ("colon_quoted", "preceded", "equal_quoted", "semicolon", "arrow")


def not_ending_with(exts: tuple[str, ...]) -> str:
    """An RE2 regex that finds every path NOT ending in one of ``.ext`` (RE2 has no negative
    lookahead): the path's last characters, read backwards, leave the trie of the suffixes."""
    trie: dict[str, dict] = {}
    for ext in exts:
        node = trie
        for ch in reversed("." + ext):
            node = node.setdefault(ch, {})
        node["$end"] = {}

    def tail(node: dict) -> str:  # a node no suffix ends at
        kids = sorted(k for k in node if k != "$end")
        alts = ["^", "[^" + "".join(_cls(k) for k in kids) + "]"]
        alts += [tail(node[k]) + _lit(k) for k in kids if "$end" not in node[k]]  # a complete suffix: not exempt
        return "(?:" + "|".join(alts) + ")"

    return tail(trie) + "$"


def _cls(ch: str) -> str:
    return "\\" + ch if ch in "\\]^-." else ch


def _lit(ch: str) -> str:
    return "\\" + ch if ch in ".\\+*?()[]{}|^$" else ch


# ── The rules ──────────────────────────────────────────────────────────────────────────────
# (plugin, rule name, regex, after: extra properties as (predicate, value) pairs)

SHARED = "sel_detect_secrets_filters"
IP_PRIVATE = r"^(?:192\.168\.|127\.|10\.|169\.254\.|172\.(?:1[6-9]|2[0-9]|3[01])\.)"
B64 = r"[A-Za-z0-9+/\\\-_=]"
# detect_secrets/filters/heuristic.py, as content allowlists on the whole match of a keyword rule:
TEMPLATED = (r"""(?:[=:(>]|^['"`]?)[^\S\n]*@?['"`]?(?:\{[^{}\n]*\}|<[^<>\n]*>|\$\{[^{}\n]*\})['"`]?(?:;|$)""")
INDIRECT = r"(?:[=:]|=>)[^\S\n]*[\w.-]+[\[(]"
UUID = r"(?i)[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12}"
NO_LETTER = r"^[^A-Za-z]*$"  # is_not_alphanumeric_string: a secret without a letter (on a named group's text)
SEQUENTIAL_WORDS = ("abcdef", "123456789")


def jwt_not_json() -> str:
    """JwtTokenDetector.is_formally_valid as far as a regex can say it: the match's first or
    second segment (base64url of what must be a JSON object, since it starts `eyJ` = `{"`)
    cannot decode to a text ending in `}` — a length of 1 mod 4 never decodes, and the last
    base64 characters of a `}` are `fQ`, `?[HXn3]0` or `??[BFJNRVZdhlptx159]9` by length mod 4.
    A segment with `=` padding is not judged (it fires, as before)."""
    b = r"[\w-]"

    def but(chars: str) -> str:  # a base64url character other than these (the match holds no other)
        return f"[^{chars}=.]"

    tail = "|".join([b, f"{but('f')}{b}", f"f{but('Q')}", f"{b}{but('HXn3')}{b}", f"{b}[HXn3]{but('0')}",
                     f"{b}{b}{but('BFJNRVZdhlptx159')}{b}", f"{b}{b}{b}{but('9')}"])
    segment = f"(?:{b}{{4}})*(?:{tail})"
    return f"^{segment}\\.|^{b}+\\.{segment}(?:\\.|$)"



def rules() -> list[tuple[str, str, str, list[tuple[str, str]]]]:
    shared = [("exemptionSelector", SHARED)]
    out: list[tuple[str, str, str, list[tuple[str, str]]]] = [
        ("AWSKeyDetector", "aws_access_key_id", r"(?:A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA)[0-9A-Z]{16}", []),
        ("AWSKeyDetector", "aws_secret_access_key",
         r"""(?i)aws.{0,20}?(?:key|pwd|pw|password|pass|token).{0,20}?['"](?P<secret>[0-9a-zA-Z/+]{40})['"]""",
         [("secretGroup", "secret"), ("requiredKeyword", "aws")]),
        ("ArtifactoryDetector", "artifactory_api_token", r"""(?m)(?:\s|=|:|"|^)AKC[a-zA-Z0-9]{10,}(?:\s|"|$)""", []),
        ("ArtifactoryDetector", "artifactory_password", r"""(?m)(?:\s|=|:|"|^)AP[\dABCDEF][a-zA-Z0-9]{8,}(?:\s|"|$)""", []),
        ("AzureStorageKeyDetector", "azure_storage_account_key", r"AccountKey=[a-zA-Z0-9+/=]{88}", []),
        ("BasicAuthDetector", "basic_auth_url",
         r"""://[^:/?#\[\]@!$&'()*+,;=\s]+:(?P<secret>[^:/?#\[\]@!$&'()*+,;=\s]+)@""", []),
        ("CloudantDetector", "cloudant_password",
         assignment("(?:cloudant|cl|clou)", "(?:api|)(?:key|pwd|pw|password|pass|token)", "(?P<secret>[0-9a-f]{64})"), []),
        ("CloudantDetector", "cloudant_api_key",
         assignment("(?:cloudant|cl|clou)", "(?:api|)(?:key|pwd|pw|password|pass|token)", "(?P<secret>[a-z]{24})"), []),
        ("CloudantDetector", "cloudant_url_password",
         r"(?i)(?:https?\:\/\/)[\w\-]+\:(?P<secret>[0-9a-f]{64})\@[\w\-]+\.cloudant\.com", []),
        ("CloudantDetector", "cloudant_url_api_key",
         r"(?i)(?:https?\:\/\/)[\w\-]+\:(?P<secret>[a-z]{24})\@[\w\-]+\.cloudant\.com", []),
        ("DiscordBotTokenDetector", "discord_bot_token", r"[MNO][a-zA-Z\d_-]{23,25}\.[a-zA-Z\d_-]{6}\.[a-zA-Z\d_-]{27}", []),
        ("GitHubTokenDetector", "github_token", r"(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9_]{36}", []),
        ("GitLabTokenDetector", "gitlab_token", r"(?:glpat|gldt|glft|glsoat|glrt)-[A-Za-z0-9_\-]{20,50}(?:\W|$)", []),
        ("GitLabTokenDetector", "gitlab_runner_registration_token", r"GR1348941[A-Za-z0-9_\-]{20,50}(?:\W|$)", []),
        ("GitLabTokenDetector", "gitlab_cicd_token", r"glcbt-(?:[0-9a-fA-F]{2}_)?[A-Za-z0-9_\-]{20,50}(?:\W|$)", []),
        ("GitLabTokenDetector", "gitlab_incoming_mail_token", r"glimt-[A-Za-z0-9_\-]{25}(?:\W|$)", []),
        ("GitLabTokenDetector", "gitlab_trigger_token", r"glptt-[A-Za-z0-9_\-]{40}(?:\W|$)", []),
        ("GitLabTokenDetector", "gitlab_agent_token", r"glagent-[A-Za-z0-9_\-]{50}[A-Za-z0-9_\-]{0,974}(?:\W|$)", []),
        ("GitLabTokenDetector", "gitlab_oauth_app_secret", r"gloas-[A-Za-z0-9_\-]{64}(?:\W|$)", []),
        ("IbmCloudIamDetector", "ibm_cloud_iam_key",
         assignment(r"(?:ibm(?:_|-|)cloud(?:_|-|)iam|cloud(?:_|-|)iam|ibm(?:_|-|)cloud|ibm(?:_|-|)iam|ibm|iam|cloud|)"
                    r"(?:_|-|)(?:api|)", "(?:key|pwd|password|pass|token)",
                    r"(?P<secret>[a-zA-Z0-9_\-]{44})(?:[^a-zA-Z0-9_\-]|$)"), []),
        ("IbmCosHmacDetector", "ibm_cos_hmac_secret",
         assignment(r"(?:(?:ibm)?[-_]?cos[-_]?(?:hmac)?|)", r"(?:secret[-_]?(?:access)?[-_]?key)",
                    r"(?P<secret>[a-f0-9]{48})(?:[^a-f0-9]|$)"), []),
        ("IPPublicDetector", "ip_public",
         r"(?mi)(?:^|[^\w.])(?P<secret>(?:(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9][0-9]|[0-9])\.){3}"
         r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9][0-9]|[0-9])(?::\d{1,5})?)(?:[^\w.]|$)",
         [("secretGroup", "secret"), ("allowMatchRegex", IP_PRIVATE)]),
        ("JwtTokenDetector", "jwt", r"eyJ[A-Za-z0-9_=-]+\.[A-Za-z0-9_=-]+\.?[A-Za-z0-9_.+/=-]*?",
         [("allowMatchRegex", jwt_not_json())]),
        ("MailchimpDetector", "mailchimp_key", r"[0-9a-z]{32}-us[0-9]{1,2}", []),
        ("NpmDetector", "npm_auth_token", r"\/\/.+\/:_authToken=\s*(?:(?:npm_.+)|(?:[A-Fa-f0-9-]{36})).*", []),
        ("OpenAIDetector", "openai_token", r"sk-[A-Za-z0-9_-]*[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}", []),
        ("PrivateKeyDetector", "private_key",
         "BEGIN DSA PRIVATE KEY|BEGIN EC PRIVATE KEY|BEGIN OPENSSH PRIVATE KEY|BEGIN PGP PRIVATE KEY BLOCK|"
         "BEGIN PRIVATE KEY|BEGIN RSA PRIVATE KEY|BEGIN SSH2 ENCRYPTED PRIVATE KEY|PuTTY-User-Key-File-2", []),
        ("PypiTokenDetector", "pypi_token", r"pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{70,}", []),
        ("PypiTokenDetector", "pypi_test_token", r"pypi-AgENdGVzdC5weXBpLm9yZw[A-Za-z0-9_-]{70,}", []),
        ("SendGridDetector", "sendgrid_key", r"SG\.[a-zA-Z0-9_-]{22}\.[a-zA-Z0-9_-]{43}", []),
        ("SlackDetector", "slack_token", r"(?i)xox(?:a|b|p|o|s|r)-(?:\d+-)+[a-z0-9]+", []),
        ("SlackDetector", "slack_webhook",
         r"(?i)https://hooks\.slack\.com/services/T[a-zA-Z0-9_]+/B[a-zA-Z0-9_]+/[a-zA-Z0-9_]+", []),
        ("SoftlayerDetector", "softlayer_key",
         assignment("(?:softlayer|sl)(?:_|-|)(?:api|)", "(?:key|pwd|password|pass|token)", "(?P<secret>[a-z0-9]{64})"), []),
        ("SoftlayerDetector", "softlayer_soap_url",
         r"(?i)(?:http|https)://api.softlayer.com/soap/(?:v3|v3.1)/(?P<secret>[a-z0-9]{64})", []),
        ("SquareOAuthDetector", "square_oauth_secret", r"sq0csp-[0-9A-Za-z\\\-_]{43}", []),
        ("StripeDetector", "stripe_key", r"(?:r|s)k_live_[0-9a-zA-Z]{24}", []),
        ("TelegramBotTokenDetector", "telegram_bot_token", r"(?m)^\d{8,10}:[0-9A-Za-z_-]{35}$", []),
        ("TwilioKeyDetector", "twilio_account_sid", r"AC[a-z0-9]{32}", []),
        ("TwilioKeyDetector", "twilio_auth_token", r"SK[a-z0-9]{32}", []),
        ("Base64HighEntropyString", "high_entropy_base64", rf"""['"](?P<secret>{B64}+)['"]""",
         [("secretGroup", "secret"), ("minEntropy", "4.5"), *shared]),
        ("HexHighEntropyString", "high_entropy_hex", r"""['"](?P<secret>[0-9a-fA-F]+)['"]""",
         [("secretGroup", "secret"), ("minEntropy", "3.0"), *shared]),
    ]
    keywords = [("requiredKeyword", k) for k in ("key", "pass", "pwd", "secret", "contraseña", "contrasena")]
    keyword_after = [*keywords, ("allowStopword", "fake"), *shared]
    typed: list[str] = []
    for name, (exts, forms) in KW_SETS.items():
        regex = "|".join(KW[f] for f in forms)
        out.append(("KeywordDetector", f"keyword_{name}", regex, [("exemptPathRegex", not_ending_with(exts)),
                                                                  *keyword_after]))
        typed += exts
    default = "|".join(KW[f] for f in KW_DEFAULT)
    other = r"\.(?:" + "|".join(sorted(typed)) + ")$"
    out.append(("KeywordDetector", "keyword_quoted", default, [("exemptPathRegex", other), *keyword_after]))
    return out


PATH_ONLY = ("exemptPathRegex",)  # what "before" keeps of the after-properties: file-type scoping, not precision


def _lit_ttl(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def catalogue(after: bool) -> str:
    lines = [f"# detect-secrets {'with what the scanner says (entropy, keywords, allowlists)' if after else 'regexes only'}"
             " — generated by port.py; do not edit by hand.\n", PREFIXES]
    if after:
        lines.append(
            f"aegis:{SHARED} a aegis:Selector ;\n"
            '    aegis:name "detect-secrets default filters" ;\n'
            '    aegis:evidenceSource "detect_secrets/filters/heuristic.py: templated secrets, indirect references, '
            'UUIDs, secrets without a letter, sequential strings" ;\n'
            f"    aegis:allowMatchRegex {_lit_ttl(TEMPLATED)} , {_lit_ttl(INDIRECT)} , {_lit_ttl(UUID)} , "
            f"{_lit_ttl(NO_LETTER)} ;\n"
            f"    aegis:allowStopword {' , '.join(_lit_ttl(w) for w in SEQUENTIAL_WORDS)} .\n\n")
    for plugin, name, regex, extra in rules():
        props = [("rdfs:label", _lit_ttl(f"{plugin}: {name}")), ("aegis:regex", _lit_ttl(regex)),
                 ("aegis:enforcementTier", '"warn"'), ("aegis:identifierClass", _lit_ttl(plugin))]
        for pred, value in extra:
            if not after and pred not in PATH_ONLY:
                continue
            if pred == "exemptionSelector":
                props.append((f"aegis:{pred}", f"aegis:{value}"))
            elif pred == "minEntropy":
                props.append((f"aegis:{pred}", f'"{value}"^^xsd:decimal'))
            else:
                props.append((f"aegis:{pred}", _lit_ttl(value)))
        body = " ;\n    ".join(f"{p} {o}" for p, o in props)
        lines.append(f"aegis:ds_{name} a aegis:TextRule ;\n    {body} .\n\n")
    return "".join(lines)


def main() -> int:
    (HERE / "before.ttl").write_text(catalogue(after=False), encoding="utf-8")
    (HERE / "after.ttl").write_text(catalogue(after=True), encoding="utf-8")
    print(f"wrote {HERE / 'before.ttl'} and {HERE / 'after.ttl'} ({len(rules())} rules)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
