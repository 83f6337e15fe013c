"""Passwords as programs' arguments: the (program, option) table read from shell words and argv lists, and the line
formats that carry a password (.pgpass, redis-cli's numbered replies, URLs whose password holds percent-escapes)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from streams.assemble.redact import Redactor
from streams.assemble.secret_commands import COMMAND_SECRETS

PW = "Wq7#mZp2!xR4vK"
MARK = "[REDACTED:cli_password_flag]"


@pytest.fixture(scope="module")
def redact() -> Redactor:
    return Redactor()


COMMANDS = [
    (f"+ sqlcmd -S db -U sa -P '{PW}' -Q x", f"+ sqlcmd -S db -U sa -P '{MARK}' -Q x"),  # xtrace's quoted word
    (f"exec bcp t out f -S db -P{PW} -c", f"exec bcp t out f -S db -P{MARK} -c"),  # attached
    (f"mysql -h db '-p{PW}' runs", f"mysql -h db '-p{MARK}' runs"),  # shlex.join quotes the whole word
    (f"Command '['/usr/bin/mysql', '-u', 'r', '-p{PW}']' returned",
     f"Command '['/usr/bin/mysql', '-u', 'r', '-p{MARK}']' returned"),
    (f"['ldapsearch', '-x', '-w', '{PW}', '-b', 'dc=x']", f"['ldapsearch', '-x', '-w', '{MARK}', '-b', 'dc=x']"),
    (f"root 9 0.0 sshpass -p{PW} scp a b:/c", f"root 9 0.0 sshpass -p{MARK} scp a b:/c"),  # ps output
    (f"+ redis-cli --pass={PW} ping", f"+ redis-cli --pass={MARK} ping"),
    (f"+ openssl rsa -passin pass:{PW} -in k", f"+ openssl rsa -passin pass:{MARK} -in k"),
    (f"+ mount -o user=u,pass={PW},vers=3 //n/d /m", f"+ mount -o user=u,pass={MARK},vers=3 //n/d /m"),
    (f"+ rabbitmqctl -n rabbit@h add_user celery {PW}", f"+ rabbitmqctl -n rabbit@h add_user celery {MARK}"),
    (f"+ htpasswd -b -C 10 /etc/h admin {PW}", f"+ htpasswd -b -C 10 /etc/h admin {MARK}"),
    (f"+ papermill a.ipynb b.ipynb -p lr 0.1 -p api_key {PW}",
     f"+ papermill a.ipynb b.ipynb -p lr 0.1 -p api_key {MARK}"),
]


@pytest.mark.parametrize(("line", "expected"), COMMANDS)
def test_a_programs_password_option_is_redacted_in_each_form_a_command_is_logged(
        redact: Redactor, line: str, expected: str) -> None:
    assert redact(line) == expected


@pytest.mark.parametrize("joint", [" ", " ; ", "\n", ' x"mysql" ', " htpasswd -b "])
def test_commands_read_together_find_what_each_finds_alone(redact: Redactor, joint: str) -> None:
    """The words of a text are read once and shared by every command in it (a program named again within the
    words of the one before, a name inside another word): each command still finds its own secret."""
    shell = [(line.removeprefix("+ "), expected.removeprefix("+ ")) for line, expected in COMMANDS
             if line.startswith("+ ") and "'" not in line]
    assert len(shell) >= 6
    for rotate in range(len(shell)):
        order = shell[rotate:] + shell[:rotate]
        out = redact(joint.join(line for line, _ in order))
        assert PW not in out, out  # (commands joined by blanks read on into the next: they may redact more)
        assert out.count(MARK) >= sum(expected.count(MARK) for _, expected in order)
    long = " ".join(["w"] * 70)
    assert redact(f"mysql {long} mysql -p{PW}") == f"mysql {long} mysql -p{MARK}"
    assert redact(f'mysql x"mysql" {long} mysql -p{PW}') == f'mysql x"mysql" {long} mysql -p{MARK}'


@pytest.mark.parametrize("line", [
    "+ ssh -p 22 node-3", "+ docker run -p 8080:80 img", "+ psql -h db -p 5432 -U t", "+ mysql -u root -p runs",
    "+ ls -p /data", "+ rsync -P -a a/ b:/c", "+ openssl enc -kfile /run/k -in x", "+ openssl rsa -passin env:KP",
    "+ htpasswd -c /etc/h admin", "+ papermill a.ipynb b.ipynb -p epochs 3", "+ az vm create -p 22",
    "+ sshpass -P 'assword:' -f /run/pw ssh n",  # sshpass -P sets the prompt it waits for
    '+ useradd -p "$HASH" trainer', "+ ssh-keygen -N '' -f k", "+ mongosh -u admin -p --quiet",
])
def test_options_that_are_no_password_and_prompts_are_left_alone(redact: Redactor, line: str) -> None:
    assert redact(line) == line


def test_every_row_of_the_command_table_names_its_document() -> None:
    assert all(row.source for row in COMMAND_SECRETS)
    assert all(row.options or row.take in ("positional", "pairs", "assignments") for row in COMMAND_SECRETS)


def test_a_pgpass_line_is_redacted_alone_or_where_the_text_names_the_file(redact: Redactor) -> None:
    assert redact(f"db.internal:5432:runs:trainer:{PW}") == "db.internal:5432:runs:trainer:[REDACTED:pgpass_password]"
    assert PW not in redact(f"+ echo 'db:5432:runs:trainer:{PW}' >> ~/.pgpass")
    # five colon-separated fields elsewhere are no password file
    assert redact("en0: BSSID changed to 0c:68:03:d6:9a:1f") == "en0: BSSID changed to 0c:68:03:d6:9a:1f"
    assert redact("v6(en0:2607:f140:6000:8:c4f2:1a2b) DNS") == "v6(en0:2607:f140:6000:8:c4f2:1a2b) DNS"


def test_a_numbered_reply_redacts_the_value_after_a_secrets_name(redact: Redactor) -> None:
    assert redact(f'1) "maxmemory"\n2) "0"\n3) "requirepass"\n4) "{PW}"') == (
        '1) "maxmemory"\n2) "0"\n3) "requirepass"\n4) "[REDACTED:secret]"')
    # a name at an even number is a value, not a name
    assert redact('1) "dbfilename"\n2) "password"\n3) "x9"') == '1) "dbfilename"\n2) "password"\n3) "x9"'
    assert redact('2) "password"\n3) "x9"') == '2) "password"\n3) "x9"'


def test_a_numbered_reply_split_into_events_is_followed_per_source() -> None:
    redact = Redactor()

    def event(message: str, file: str = "a.log") -> str:
        out = SimpleNamespace(kind="event", value={"message": message, "source": {"file": file}})
        return str(redact.output(out).value["message"])

    assert event('1) "requirepass"') == '1) "requirepass"'
    assert event('2) "x"', file="b.log") == '2) "x"'  # another source: not its value
    assert event(f'2) "{PW}"') == '2) "[REDACTED:secret]"'
    assert event('3) "port"') == '3) "port"'
    assert event('4) "6379"') == '4) "6379"'


def test_a_url_password_holding_percent_escapes_is_redacted_whole(redact: Redactor) -> None:
    pw = "Pw1%40b2%2Fc3%3Ad4"
    assert redact(f"postgresql://trainer:{pw}@db:5432/runs") == (
        "postgresql://trainer:[REDACTED:url_credentials]@db:5432/runs")
    assert redact("postgresql://trainer:p@ss9word@db/runs") == "postgresql://trainer:[REDACTED:url_credentials]@db/runs"
    assert redact("https://user@host/a@b") == "https://user@host/a@b"


@pytest.mark.parametrize("line", [
    # mysql's clients declare password as GET_PASSWORD, OPT_ARG: my_getopt takes an optional argument only attached
    # ("--password=x", "-px"); after a bare --password the next word is the database, the password asked on the tty
    "+ mysql -h db.internal -u root --password metrics_prod",
    "+ mysqldump -u backup --password runs_2024 > /backups/runs.sql",
    "Command '['mysql', '-u', 'root', '--password', 'experiments']' returned non-zero exit status 1.",
    "mariadb-dump --single-transaction --password train_db",
])
def test_the_word_after_mysqls_bare_password_option_is_no_password(redact: Redactor, line: str) -> None:
    assert redact(line) == line


@pytest.mark.parametrize(("line", "expected"), [
    (f"+ mysql -u root --password={PW} db", f"+ mysql -u root --password={MARK} db"),
    (f"mysqldump -u b '--password={PW}' runs", f"mysqldump -u b '--password={MARK}' runs"),
    (f"Command '['mysql', '--password={PW}', 'db']'", f"Command '['mysql', '--password={MARK}', 'db']'"),
    # another program's --password takes the next word (twine's "-p PASSWORD, --password PASSWORD"), and so does
    # a command no row names: the generic rule keeps it
    (f"+ twine upload --password {PW} dist/*", f"+ twine upload --password {MARK} dist/*"),
    (f"+ ./deploy.sh --password {PW} --host db", "+ ./deploy.sh --password [REDACTED:secret] --host db"),
    # a mysql on the line before a pipe does not make a later program's option optional
    (f"mysql -e 'select 1' | twine upload --password {PW} dist/*",
     f"mysql -e 'select 1' | twine upload --password {MARK} dist/*"),
    (f"mysql -u root --password db && ./deploy.sh --password {PW}",
     "mysql -u root --password db && ./deploy.sh --password [REDACTED:secret]"),
])
def test_a_password_option_that_takes_its_value_is_still_redacted(redact: Redactor, line: str, expected: str) -> None:
    assert redact(line) == expected
