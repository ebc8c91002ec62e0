"""Regenerate samples.json from detect-secrets' own tests (not run by CI; no network).

The samples are the parametrised cases of detect-secrets' plugin tests (tests/plugins/*_test.py:
the line each test scans and whether the plugin must flag it) and of its heuristic-filter tests
(tests/filters/heuristic_filter_test.py: secrets and lines the default filters drop), each with
the scanner's own verdict on it: its plugin alone (what the plugin test asserts) and its plugin
with the default filters (what `detect-secrets scan` reports).

Run from a checkout of Yelp/detect-secrets (Apache-2.0; LICENSE beside this file), with
detect-secrets installed from that checkout and pytest and responses beside it:

    cd detect-secrets && python -m pytest -q --collect-only -p dump_params tests/plugins tests/filters
    python /path/to/extract.py params.json > /path/to/samples.json

where dump_params is the five-line pytest plugin in this file's DUMP_PLUGIN (write it to
dump_params.py on PYTHONPATH). The samples this produced are committed; benchmarks/secret_precision.py
reads only samples.json.
"""

from __future__ import annotations

import json
import sys

DUMP_PLUGIN = '''
import json
def pytest_collection_modifyitems(session, config, items):
    rows = [{"nodeid": it.nodeid, "params": {k: v if isinstance(v, (str, bool, int, float, type(None))) else repr(v)
             for k, v in it.callspec.params.items()}} for it in items if hasattr(it, "callspec")]
    json.dump(rows, open("params.json", "w"))
'''

# test file stem -> the plugin class its cases exercise
PLUGINS = {
    "artifactory_test": "ArtifactoryDetector", "aws_key_test": "AWSKeyDetector",
    "azure_storage_key_test": "AzureStorageKeyDetector", "basic_auth_test": "BasicAuthDetector",
    "cloudant_test": "CloudantDetector", "discord_test": "DiscordBotTokenDetector",
    "github_token_test": "GitHubTokenDetector", "gitlab_token_test": "GitLabTokenDetector",
    "ibm_cloud_iam_test": "IbmCloudIamDetector", "ibm_cos_hmac_test": "IbmCosHmacDetector",
    "ip_public_test": "IPPublicDetector", "jwt_test": "JwtTokenDetector", "keyword_test": "KeywordDetector",
    "mailchimp_key_test": "MailchimpDetector", "npm_test": "NpmDetector", "openai_test": "OpenAIDetector",
    "private_key_test": "PrivateKeyDetector", "pypi_token_test": "PypiTokenDetector",
    "sendgrid_test": "SendGridDetector", "slack_test": "SlackDetector", "softlayer_test": "SoftlayerDetector",
    "square_oauth_test": "SquareOAuthDetector", "stripe_key_test": "StripeDetector",
    "telegram_token_test": "TelegramBotTokenDetector", "twilio_test": "TwilioKeyDetector",
}
ANALYZE = ("test_analyze", "test_analyze_line", "test_analyze_string", "test_analyze_string_content",
           "test_base_token_format", "test_agent_token", "test_cicd_token", "test_incoming_mail_token",
           "test_oauth_application_secret", "test_runner_registration_token", "test_trigger_token")


def _sample(**fields: object) -> dict:
    return fields


def samples(rows: list[dict]) -> list[dict]:
    out: list[dict] = []
    for row in rows:
        path, _, func = row["nodeid"].partition("::")
        stem = path.rsplit("/", 1)[-1].removesuffix(".py")
        name = func.split("[")[0].split("::")[-1]
        p = row["params"]
        src = row["nodeid"]
        if stem in PLUGINS and name in ANALYZE:
            text = p.get("payload", p.get("line"))
            flag = p.get("should_flag", True)  # slack's and square's cases are all to be flagged
            out.append(_sample(plugin=PLUGINS[stem], source=src, path="mock_filename", text=text, expected=bool(flag)))
        elif stem == "private_key_test":
            out.append(_sample(plugin="PrivateKeyDetector", source=src, path="mock_filename",
                            text=p["file_content"], expected=True))
        elif stem == "keyword_test":
            ext = p["file_extension"]
            out.append(_sample(plugin="KeywordDetector", source=src, path=f"mock_filename.{ext}" if ext else "adhoc",
                            text=p["line"], expected=p["expected_secret"] is not None,
                            keyword_exclude=".*fake.*" if ext else None))
        elif stem == "high_entropy_strings_test" and name == "test_basic":
            plugin = "HexHighEntropyString" if "Hex" in p["plugin"] else "Base64HighEntropyString"
            text = p["format"].format(secret=p["secret"], non_secret=p["non_secret"])
            out.append(_sample(plugin=plugin, source=src, path="does not matter", text=text,
                            expected=bool(p["should_be_caught"])))
        elif stem == "heuristic_filter_test":
            line = None
            if name == "test_success" and "IsSequentialString" in func or name == "test_is_potential_uuid":
                line, expected, path = f'secret = "{p["secret"]}"', False, "mock_filename.py"
            elif name == "test_is_templated_secret":
                line, expected, path = p["line"], bool(p["result"]), "adhoc"
            elif name == "test_is_indirect_reference":
                line, expected, path = p["line"], not p["result"], "mock_filename.conf"
            if line is not None:
                out.append(_sample(plugin="KeywordDetector", source=src, path=path, text=line, expected=expected,
                                filter_sample=True))
    return out


def scanner_verdicts(sample: dict) -> None:
    """The scanner's own verdicts: the plugin alone, and the plugin with the default filters."""
    from detect_secrets.core.scan import _process_line_based_plugins
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.settings import default_settings, transient_settings

    classes = {cls.__name__: cls for cls in get_mapping_from_secret_type_to_class().values()}
    cls = classes[sample["plugin"]]
    kwargs = {"keyword_exclude": sample["keyword_exclude"]} if sample.get("keyword_exclude") else {}
    lines = sample["text"].split("\n")
    alone = any(cls(**kwargs).analyze_line(filename=sample["path"], line=line) for line in lines)
    config = {"plugins_used": [{"name": cls.__name__, **kwargs}]}
    with default_settings():
        with transient_settings(config):
            found = list(_process_line_based_plugins(list(enumerate(lines, 1)), filename=sample["path"]))
    sample["scanner_plugin_alone"] = bool(alone)
    sample["scanner"] = any(s.type == cls.secret_type for s in found)


def main() -> None:
    rows = json.load(open(sys.argv[1]))
    out = samples(rows)
    first: dict[str, str] = {}
    for i, s in enumerate(out):
        s["id"] = f"s{i:03d}"
        scanner_verdicts(s)
        if len(s["text"]) > 4096:  # the keyword tests' 32 KB line, once per file type: stored once
            if s["text"] in first:
                s["text_of"] = first[s["text"]]
                del s["text"]
            else:
                first[s["text"]] = s["id"]
    json.dump({"source": "github.com/Yelp/detect-secrets tests (Apache-2.0), detect-secrets 1.5.0",
               "samples": out}, sys.stdout, indent=1, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
