"""A password given as a command-line option's value (issue 14, item 4).

``mysql --password Winter2024!``, ``nuget sources add -Password Summer2023x``, ``docker
login --password "..."``: the option's name says the next word is the password, as
``password=`` does, and a command's argument is a literal, so a memorable password is
masked as a quoted one is.  What a command's help, its examples or a memory's prose put
there stays: a metavar in capitals (``--password PASSWORD``), a variable, a placeholder
with a password word or ``fake`` in it, the next option, a word; options named for a token,
a key or a secret are left to the other rules (their values are as often ids).
Every value here is typed by hand: none is a real credential."""

from __future__ import annotations

import pytest

from memex.core import redact

MASKED = [
    ("mysql -u root --password Winter2024! db", "Winter2024!"),
    ("mysql -h db --password hunter22x app", "hunter22x"),
    ("nuget sources add -Name Contoso -Username jdoe -Password Summer2023x", "Summer2023x"),
    ('docker login --password "Summer2023x" registry.example.com', "Summer2023x"),
    ("docker login --password 'Summer2023x'", "Summer2023x"),
    ("dotnet nuget add source https://pkgs.example.com/index.json --name Contoso "
     "--username jdoe --password XqorXvxgzlOzqjroac --store-password-in-clear-text",
     "XqorXvxgzlOzqjroac"),
    ("wget --http-password=XqorXvxgzlOzqjroac https://example.org/a", "XqorXvxgzlOzqjroac"),
    ("mysql --user=root --password=XqorXvxgzlOzqjroac", "XqorXvxgzlOzqjroac"),
    ("vault login --token Qm2kR8xLpW4z", "Qm2kR8xLpW4z"),
    ("run `tool --api-key ZqvTr8XbkpMnLs` first", "ZqvTr8XbkpMnLs"),  # (the bare rule)
    # random letters joined by _ . - or around a letter of another alphabet
    ("mysql --password Zq-Xv-Kp-Lm db", "Zq-Xv-Kp-Lm"),
    ("psql --password=Zq-Xv-Kp-Lm", "Zq-Xv-Kp-Lm"),
    ("mysql --password VmKqXz_PwRt db", "VmKqXz_PwRt"),
    ("mysql --password qzXkvPmRtéWn db", "qzXkvPmRtéWn"),
]


@pytest.mark.parametrize(("text", "secret"), MASKED)
def test_an_options_password_is_masked(text: str, secret: str) -> None:
    out = redact.redact(text).text
    start = text.index(secret)
    assert secret not in out
    assert set(out[start + 4 : start + len(secret)]) == {"x"}, out
    assert out[:start] == text[:start]  # the option's name stays readable
    assert redact.find_secrets(out) == []


READABLE = [
    "--password PASSWORD  The password to log in with.",
    "  --api-key API_KEY     the key",
    "  --token TEXT  [required]",
    "docker login --password-stdin < pw.txt",
    'docker login --password "$REGISTRY_PASSWORD"',
    "mysql --password ${DB_PASSWORD}",
    "mysql --password=$MYSQL_PWD",
    "mysql --password <password>",
    "mysql --password --user root",
    "the --password option is required",
    "pass --password with the value from the vault",
    "use --token authentication instead of cookies",
    "--token-file ~/.config/token --verbose",
    "--password, -p  prompt for it",
    "--secret-name production-database-credentials",
    "mkdir -p build/output && cp -p a b",
    "git push --force-with-lease origin feature-branch",
    "pip install --index-url https://example.org/simple package-name",
    # what documentation puts after a password option, and token options' ids
    "  --mysql-password=fakepassword --mysql-username=fakeuser \\",
    "    --pvk-password=my-pvk-password",
    "    --master-user-password secret99 \\",
    "    --auth-password=password --auth-url=http://example.com",
    "aws waf update-rule --change-token 12cs345-67cd-890b-1cd2-c3a4567d89f1 --updates x",
    "aws logs put-log-events --sequence-token 49542672486831074009579604567656788214806",
    "blkid --match-token LABEL=label",
    "gh auth --client-secret TestSourcePassword",
    # where to read the password (openssl's and gpg's sources), and words in other languages
    "openssl pkcs12 -export -password env:PFX_PASS -out a.pfx",
    "openssl pkcs12 -export -password file:pw.txt -out a.pfx",
    "gpg --batch -passphrase env:GPG_PW --decrypt x.gpg",
    "tool --password file:/etc/pw.txt --password fd:3",
    "tool --password contraseña",
    "tool --password tu_contraseña",
    "tool --password votre_mot_de_passe",
    "tool --password Überprüfung",
]


@pytest.mark.parametrize("text", READABLE)
def test_an_options_name_or_placeholder_stays_readable(text: str) -> None:
    assert redact.redact(text).text == text


@pytest.mark.parametrize(("text", "secret"), [
    ("gcloud sql instances create db --root-password=password123", "password123"),
    ('  --certificate-password="password"', "password"),
    ("mysql --password=Winter2024! db", "Winter2024!"),
])
def test_an_option_spares_nothing_an_assignment_masks(text: str, secret: str) -> None:
    # the option's placeholders are spared only where the option alone gives the value
    # (``--password VALUE``); after ``=`` or in quotes the assignment's judgment stands
    out = redact.redact(text).text
    start = text.rindex(secret)
    assert set(out[start + 4 : start + len(secret)]) == {"x"}, out
