"""Credential detection (``hermes_memory.security.secrets``): every supported format is found and
redacted, the words around it stay, redaction is idempotent, and ordinary sentences pass unchanged."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_memory import MemoryAPI
from hermes_memory.security import secrets
from hermes_memory.security.secrets import (
    MARKER_PREFIX,
    contains_secret,
    find_secrets,
    redact_data,
    redact_secrets,
)

# (text, the secret part that must disappear, the kind named in its marker)
SECRETS = [
    (
        "my key is sk-proj-4fT9xQ2mLw8ZpR7vK3nB6yH1cJ5dE0aS",
        "sk-proj-4fT9xQ2mLw8ZpR7vK3nB6yH1cJ5dE0aS",
        "api_key",
    ),
    (
        "OPENAI_API_KEY sk-4fT9xQ2mLw8ZpR7vK3nB6yH1cJ5dE0aSxx1",
        "sk-4fT9xQ2mLw8ZpR7vK3nB6yH1cJ5dE0aSxx1",
        "api_key",
    ),
    (
        "anthropic: sk-ant-api03-AbC9dEf1GhI2jKl3MnO4pQr5StU6vWx7YzA8",
        "sk-ant-api03-AbC9dEf1GhI2jKl3MnO4pQr5StU6vWx7YzA8",
        "api_key",
    ),
    ("use AKIAIOSFODNN7EXAMPLE for the bucket", "AKIAIOSFODNN7EXAMPLE", "aws_access_key"),
    (
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY1",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY1",
        "secret_value",
    ),
    (
        "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCY2XAMPLEKEY",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCY2XAMPLEKEY",
        "secret_value",
    ),
    (
        "token ghp_16C7e42F292c6912E7710c838347Ae178B4a in the CI",
        "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
        "github_token",
    ),
    (
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJ0123",
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJ0123",
        "github_token",
    ),
    (
        "slack bot xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
        "xoxb-123456789012-1234567890123",
        "slack_token",
    ),
    (
        "maps key AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW ok",
        "AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW",
        "google_api_key",
    ),
    (
        "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "jwt",
    ),
    (
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7bq\nAbCdEf==\n"
        "-----END RSA PRIVATE KEY-----\nthanks",
        "MIIEowIBAAKCAQEA7bq",
        "private_key",
    ),
    (
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA (cut off)",
        "b3BlbnNzaC1rZXktdjEAAAAA",
        "private_key",
    ),
    ("curl -H 'Authorization: Bearer abc123def456ghi789jkl'", "abc123def456ghi789jkl", "bearer_token"),
    ("Authorization: Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA==", "bearer_token"),
    ("db at postgres://admin:S3cr3tPass@db.internal:5432/app", "S3cr3tPass", "url_password"),
    ("clone https://bob:hunter2@git.example.org/repo.git", "hunter2", "url_password"),
    ("password: hunter2", "hunter2", "password"),
    ("Password: correcthorsebatterystaple and the user is bob", "correcthorsebatterystaple", "password"),
    ("login with pw=Tr0ub4dor&3 tomorrow", "Tr0ub4dor&3", "password"),
    ("PASSWORD='s3cret-value'", "s3cret-value", "password"),
    ("my password is hunter2", "hunter2", "password"),
    ("My wifi password is swordfish.", "swordfish", "password"),
    ("the admin passphrase was: blue-elephant-42", "blue-elephant-42", "password"),
    ("Password is Zebra!Crossing9", "Zebra!Crossing9", "password"),
    ("our new pin is 4812", "4812", "password"),
    ("The user's password is Tr0ub4dorZebra", "Tr0ub4dorZebra", "password"),
    ("api_key: 3f9a8b7c6d5e4f3a2b1c0d9e", "3f9a8b7c6d5e4f3a2b1c0d9e", "secret_value"),
    ('"client_secret": "Zx9-8yW7vU6tS5rQ4pO3"', "Zx9-8yW7vU6tS5rQ4pO3", "secret_value"),
    ("stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc", "sk_live_4eC39HqLyjWDarjtT1zdp7dc", "stripe_key"),
    (
        "hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789 is the hub token",
        "hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
        "huggingface_token",
    ),
    ("glpat-AbCdEf0123456789xYzW1 for gitlab", "glpat-AbCdEf0123456789xYzW1", "gitlab_token"),
]

# Ordinary prose (and prose about passwords and keys) that must pass unchanged.
ORDINARY = [
    "Maya works at Nordlicht Labs and moved to Lisbon last May.",
    "The password is incorrect, please try again.",
    "I forgot my password again and had to reset it.",
    "My password is too short according to the new policy.",
    "The password was changed yesterday.",
    "Password managers are a good idea.",
    "Which password is best for a shared account?",
    "The token is expired; ask for a new one.",
    "Use scikit-learn (sk-learn-style estimators) for the baseline model.",
    "The task-runner-for-big-pipelines failed twice on Friday.",
    "Akiane painted AKIAKIA on the wall.",
    "She is the bearer of bad news.",
    "Bearer tokens are sent in the Authorization header.",
    "Authorization: see the wiki page.",
    "Visit https://example.org/docs:intro@top for details.",
    "Meeting at 10:30, room 4, pin the agenda to the channel.",
    "The PIN is required for the card.",
    "Set secret: yes in the flags and token: none.",
    "Our password policy requires 12 characters.",
    "The API key rotation happens every 90 days.",
    "eyJ is how base64 JSON starts.",
    "I ran ghp_ and xoxb- through grep to find leaked tokens.",
    "He said the password was wrong twice.",
    "The deploy failed on Friday because the disk was full.",
    "Send the report to tom@example.com by Monday.",
    "The sk-8 ramp is next to the park.",
    "Password: reset yesterday by the admin.",
    "The wifi password is printed under the router.",
    "And the wifi password is on the fridge.",
    "My password is stored in the vault and rotated monthly.",
    "The password is something only Maya knows",
]


@pytest.mark.parametrize(
    ("text", "secret", "kind"), SECRETS, ids=[k + str(i) for i, (_, _, k) in enumerate(SECRETS)]
)
def test_every_format_is_redacted(text: str, secret: str, kind: str) -> None:
    redacted = redact_secrets(text)
    assert secret not in redacted, redacted
    assert f"{MARKER_PREFIX}{kind}]" in redacted, redacted
    assert contains_secret(text)


def test_a_sentence_end_is_not_part_of_the_password() -> None:
    assert redact_secrets("The wifi password is hunter2.") == "The wifi password is [REDACTED:password]."
    assert redact_secrets("password: swordfish!") == "password: [REDACTED:password]!"


def test_the_words_around_a_secret_stay() -> None:
    assert (
        redact_secrets("my password is hunter2, remember it")
        == "my password is [REDACTED:password], remember it"
    )
    assert (
        redact_secrets("postgres://admin:pw123@db/app") == "postgres://admin:[REDACTED:url_password]@db/app"
    )
    assert redact_secrets("use AKIAIOSFODNN7EXAMPLE now") == "use [REDACTED:aws_access_key] now"


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_sentences_pass_unchanged(text: str) -> None:
    assert find_secrets(text) == []
    assert redact_secrets(text) is text


def test_redaction_is_idempotent() -> None:
    for text, _, _ in SECRETS:
        once = redact_secrets(text)
        assert redact_secrets(once) == once
        assert not contains_secret(once), once


def test_several_secrets_in_one_text() -> None:
    text = "keys: AKIAIOSFODNN7EXAMPLE and ghp_16C7e42F292c6912E7710c838347Ae178B4a; password: hunter2"
    out = redact_secrets(text)
    assert [m.kind for m in find_secrets(text)] == ["aws_access_key", "github_token", "password"]
    assert "AKIA" not in out and "ghp_" not in out and "hunter2" not in out


def test_redact_data_walks_json_and_keeps_identity_when_clean() -> None:
    clean = {"a": ["x", {"b": "y"}], "n": 3}
    assert redact_data(clean) is clean
    dirty = {"a": ["password: hunter2", {"b": ("AKIAIOSFODNN7EXAMPLE",)}], "n": 3}
    out = redact_data(dirty)
    assert out == {"a": ["password: [REDACTED:password]", {"b": ("[REDACTED:aws_access_key]",)}], "n": 3}
    assert dirty["a"][0] == "password: hunter2"  # the input is not changed


def test_long_hostile_text_is_linear() -> None:
    # A pattern with nested repetition would take minutes here; each must finish in one pass.
    for filler in ("a" * 100_000, "sk-" * 33_000, "password: " * 10_000, "eyJ." * 25_000, "x:" * 50_000):
        redact_secrets(filler)
    assert redact_secrets("A" * 100_000) == "A" * 100_000


def test_no_false_positive_in_the_project_corpora() -> None:
    # Thousands of ordinary sentences (extraction and temporal benchmarks, the benign injection controls):
    # none holds a credential, so none may change when stored.
    import json
    from pathlib import Path

    from hermes_memory.tier2.verdicts import strings

    data = Path(__file__).parents[1] / "data"
    texts = [
        text
        for name in ("extraction_bench.json", "temporal_corpus.json")
        for text in strings(json.loads((data / name).read_text("utf-8")))
    ]
    texts += json.loads((data / "injection_corpus.json").read_text("utf-8"))["benign"]
    assert len(texts) > 2000
    assert [t for t in texts if find_secrets(t)] == []


def test_clean_texts_are_remembered_and_secrets_never(monkeypatch: pytest.MonkeyPatch) -> None:
    """Recall shows the same texts again and again: one found clean is not scanned again; one holding a
    credential is scanned (and redacted) every time; a forget drops what is remembered."""
    secrets.forget_checked()
    scans: list[str] = []
    real = secrets.find_secrets

    def counted(text: str) -> list[secrets.SecretMatch]:
        scans.append(text)
        return real(text)

    monkeypatch.setattr(secrets, "find_secrets", counted)
    clean, leaky = "Caroline adopted a beagle named Biscuit.", "my password is hunter2-Xq9!"
    for _ in range(3):
        assert secrets.redact_secrets(clean) == clean
        assert "hunter2" not in secrets.redact_secrets(leaky)
    assert scans.count(clean) == 1 and scans.count(leaky) == 3
    secrets.forget_checked()
    assert secrets.redact_secrets(clean) == clean and scans.count(clean) == 2
    secrets.redact_secrets("x" * 5000)  # too long to keep
    secrets.redact_secrets("x" * 5000)
    assert scans.count("x" * 5000) == 2


def test_a_forget_drops_the_remembered_clean_texts(tmp_path: Path) -> None:
    settings = {"tier3.embedding_model": "hashing", "tier3.backend": "memory"}
    with MemoryAPI(hermes_home=tmp_path, **settings) as api:
        api.remember_message("Biscuit sleeps on the sofa.", "s1", 1_683_540_000.0, speaker="Caroline")
        assert api.flush(60)["data"]["drained"]
        hit = api.recall("Biscuit sofa", tiers=["tier2"])["data"]["hits"][0]
        assert hit["text"] == "Biscuit sleeps on the sofa." and hit["text"] in secrets._CLEAN
        assert api.forget(hit["id"].split(":", 1)[1], confirm=True)["success"]
        assert "Biscuit sleeps on the sofa." not in secrets._CLEAN


def test_the_trigger_scan_agrees_with_one_regular_expression() -> None:
    # The quick scan (substrings, then the label pattern where a credential word starts) answers exactly
    # as the single expression with every trigger as an alternative would, on texts built to sit at its
    # edges: prefixes inside words, labels split by spaces or quotes, words that only start like a label.
    import random
    import re

    reference = re.compile(
        r"sk-|[sr]k_|akia|asia|agpa|aida|aroa|anpa|anva|aipa|gh[pousr]_|github_pat_|glpat-|xox|aiza|hf_|npm_|"
        r"eyj|private key|bearer|authorization|://|"
        r"(?:pass(?:\s?word)?|pw|pin(?:\s?code)?|secret|token|key)[\w-]*[\"']?\s{0,4}"
        r"(?:[:=]|is\b|was\b|will\b|reads\b|changed\b)"
    )
    words = "pass word pw pin code secret token key s _ - : = is was will reads changed isle ' \" gh p o k r"
    pieces = [*words.split(), *"a kia nva :// hf npm eyj bearer monkey spinning x ox .".split(), " ", "\n"]
    rng = random.Random(7)
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 12))) for _ in range(20_000)]
    assert sum(1 for t in texts if reference.search(t)) > 2000  # both answers occur often
    assert [t for t in texts if secrets._triggered(t) != (reference.search(t) is not None)] == []
