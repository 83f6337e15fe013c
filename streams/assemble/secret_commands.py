"""Passwords that programs take as command-line arguments, as a table of (program, option) pairs.

A blanket rule for ``-p`` would redact ports (``ssh -p 22``, ``docker run -p 8080:80``) and flags (``ls -p``), so
an option is read as a password only after a program whose manual documents it as one; each row names that
document. A command is read word by word as it is logged: a shell's words (``set -x`` traces, a launcher's echo,
``shlex.join``'s quoting, ``ps`` output), or the items of a Python argv list (``['mysql', '-u', 'root', '-pPW']``,
as ``subprocess.CalledProcessError`` prints it). Its words end at the end of the line or at ``| ; & < > ( )``.

How a row takes its value (``take``):

- ``glued``: only attached to the option (``mysql -pPW``, ``7z -pPW``; a bare ``-p`` prompts, so the next word is
  a database or an archive), or after ``=`` of a long option;
- ``next``: attached, after ``=``, or the next word (``sqlcmd -P PW``, ``ldapsearch -w PW``);
- ``separate``: the next word only, for programs whose long options have one dash (``openssl enc -k PW``, where
  ``-kfile`` is another option);
- ``named``: ``-p NAME VALUE``, a secret when NAME names one (papermill's notebook parameters);
- ``positional``: the ``index``-th word that is no option after the word ``sub`` (``rabbitmqctl add_user NAME PW``).
- ``pairs``: ``NAME VALUE`` words after the word ``sub``, a secret when NAME names one (``dvc remote modify REMOTE
  password PW``, ``rclone config create REMOTE TYPE secret_access_key KEY``).
- ``assignments``: the VALUE of every ``NAME=VALUE`` word after the word ``sub``, whatever NAME is: the commands of
  secret stores that take a secret's entries so (``vault kv put PATH NAME=VALUE``, ``fly secrets set NAME=VALUE``).

``sub`` (for the other forms) is a word the command must hold before the option (``docker login -p``, not
``docker run -p``); ``after`` (a regex) is what precedes the secret inside the value (openssl's ``pass:PW``,
curl's ``cert.pem:PW``, mount's ``-o user=x,password=PW``), and the secret runs to ``until`` or the value's end: a
value without it is no secret (``-passin env:VAR``). A positional row whose ``sub`` is the program itself needs
the short-flag letters of ``options`` (htpasswd's password is on the line only in batch mode, ``-b``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from streams.assemble.secret_keys import is_placeholder, is_secret_value, key_strength


@dataclass(frozen=True, slots=True)
class CommandSecret:
    programs: str  # "a|b|c"
    options: tuple[str, ...] = ()
    take: str = "next"
    sub: str = ""
    after: str = ""
    until: str = ""
    index: int = 0
    skip: tuple[str, ...] = ()  # options that take an argument, skipped when counting positional words
    source: str = ""


COMMAND_SECRETS: tuple[CommandSecret, ...] = (
    CommandSecret("mysql|mysqladmin|mysqldump|mysqlimport|mysqlshow|mysqlcheck|mysqlpump|mysqlbinlog|mariadb"
                  "|mariadb-dump|mariadb-admin|mariadb-import|mariadb-check|mariadb-show", ("-p", "--password"),
                  "glued",
                  source="mysql(1): -p[password], --password[=password]: no space between -p and the password"),
    CommandSecret("mysqladmin|mariadb-admin", ("password",), "positional", sub="password", index=1,
                  source="mysqladmin(1): password new_password"),
    CommandSecret("sshpass", ("-p",), source="sshpass(1): -p password"),
    CommandSecret("redis-cli|valkey-cli|keydb-cli", ("-a", "--pass"),
                  source="redis-cli --help: -a <password>; --user <username> --pass <password>"),
    CommandSecret("docker|podman|buildah|skopeo|nerdctl|oras", ("-p", "--password"), sub="login",
                  source="docker login (docs.docker.com): --password, -p; podman-login(1), skopeo-login(1)"),
    CommandSecret("helm", ("-p", "--password"), sub="login", source="helm registry login: --password, -p"),
    CommandSecret("twine", ("-p", "--password"), source="twine upload --help: -p PASSWORD, --password PASSWORD"),
    CommandSecret("mongo|mongosh|mongodump|mongorestore|mongoexport|mongoimport|mongostat|mongotop|mongofiles",
                  ("-p", "--password"), source="mongosh and the MongoDB database tools: --password, -p <password>"),
    CommandSecret("zip|zipcloak|unzip|funzip", ("-P", "--password"), source="zip(1), unzip(1): -P password"),
    CommandSecret("sqlcmd|bcp|osql|isql", ("-P",),
                  source="sqlcmd and bcp utilities (learn.microsoft.com): -P password"),
    CommandSecret("ipmitool", ("-P", "-k", "-y"),
                  source="ipmitool(1): -P <password>, -k <key> and -y <hex key> (the IPMIv2 Kg key)"),
    CommandSecret("ipmitool", ("password",), "positional", sub="password", index=2,
                  source="ipmitool(1): user set password <user id> [<password> <16|20>]"),
    CommandSecret("ldapsearch|ldapmodify|ldapadd|ldapdelete|ldapmodrdn|ldapcompare|ldapwhoami|ldappasswd|ldapexop"
                  "|ldapvi", ("-w",), source="ldapsearch(1), ldapmodify(1): -w passwd"),
    CommandSecret("ldappasswd", ("-s", "-a"), source="ldappasswd(1): -s newPasswd, -a oldPasswd"),
    CommandSecret("useradd|usermod|adduser|groupadd|groupmod", ("-p", "--password"),
                  source="useradd(8), usermod(8): -p, --password PASSWORD (the encrypted password)"),
    CommandSecret("rabbitmqctl", ("add_user",), "positional", sub="add_user", index=2,
                  source="rabbitmqctl(8): add_user username password"),
    CommandSecret("rabbitmqctl", ("change_password",), "positional", sub="change_password", index=2,
                  source="rabbitmqctl(8): change_password username newpassword"),
    CommandSecret("rabbitmqctl", ("authenticate_user",), "positional", sub="authenticate_user", index=2,
                  source="rabbitmqctl(8): authenticate_user username password"),
    CommandSecret("openssl", ("-pass", "-passin", "-passout", "-kpass", "-srcpass", "-destpass"), "separate",
                  after="^pass:",
                  source="openssl-passphrase-options(1): pass:password (env:, file:, fd: and stdin are no secrets)"),
    CommandSecret("openssl", ("-k", "-K"), "separate", sub="enc", source="openssl-enc(1): -k password, -K key (hex)"),
    CommandSecret("openssl", ("passwd",), "positional", sub="passwd", index=1, skip=("-salt", "-in"),
                  source="openssl-passwd(1): openssl passwd [options] [password...]"),
    CommandSecret("keytool|jarsigner", ("-storepass", "-keypass", "-srcstorepass", "-deststorepass", "-srckeypass",
                                        "-destkeypass", "-new"), "separate",
                  source="keytool and jarsigner (JDK tools reference): -storepass, -keypass, -new arg "
                         "(-storepass:env and :file name no secret)"),
    CommandSecret("curl", ("-E", "--cert", "--proxy-cert"), after=r"^[^:]+:",
                  source="curl(1): -E, --cert <certificate[:password]>"),
    CommandSecret("curl", ("--pass", "--proxy-pass", "--oauth2-bearer"),
                  source="curl(1): --pass <phrase>, --proxy-pass <phrase>, --oauth2-bearer <token>"),
    CommandSecret("lftp", ("-u", "--user"), after=r"^[^,]+,", source="lftp(1): -u user[,pass]"),
    CommandSecret("mount|mount.cifs|mount.smb3", ("-o",), after="(?:^|,)(?:password|pass)=", until=",",
                  source="mount.cifs(8): -o password=arg|pass=arg"),
    CommandSecret("az", ("-p", "--password"), sub="login",
                  source="az login (learn.microsoft.com): --password -p: user password or client secret"),
    CommandSecret("papermill", ("-p", "--parameters", "-r", "--parameters_raw"), "named",
                  source="papermill --help: -p/--parameters and -r/--parameters_raw NAME VALUE"),
    CommandSecret("mosquitto_pub|mosquitto_sub|mosquitto_rr", ("-P", "--pw"),
                  source="mosquitto_pub(1): -P, --pw: provide a password"),
    CommandSecret("snmpwalk|snmpget|snmpset|snmpbulkwalk|snmpbulkget|snmpgetnext|snmptrap|snmptable|snmpstatus",
                  ("-A", "-X"), source="snmpcmd(1): -A authPassword, -X privPassword"),
    CommandSecret("ssh-keygen", ("-N", "-P"), source="ssh-keygen(1): -N new_passphrase, -P passphrase"),
    CommandSecret("7z|7za|7zr|unrar|rar", ("-p", "-hp"), "glued", source="7z --help: -p{Password}; unrar: -p<pwd>; "
                                                                          "rar: -hp[pwd]"),
    CommandSecret("rdesktop", ("-p",), source="rdesktop(1): -p <password> ('-' prompts)"),
    CommandSecret("xfreerdp|wlfreerdp|sdl-freerdp", ("/p:",), "glued", source="xfreerdp(1): /p:<password>"),
    CommandSecret("nmcli", ("password", "wifi-sec.psk", "802-11-wireless-security.psk", "802-1x.password"),
                  source="nmcli(1): device wifi connect SSID password PASSWORD; connection modify ... wifi-sec.psk"),
    CommandSecret("wpa_passphrase", (), "positional", sub="wpa_passphrase", index=2,
                  source="wpa_passphrase(8): wpa_passphrase [ ssid ] [ passphrase ]"),
    CommandSecret("dvc", (), "pairs", sub="modify",
                  source="dvc remote modify [--local] NAME OPTION VALUE (dvc.org: password, secret_access_key, token)"),
    CommandSecret("rclone", (), "pairs", sub="config",
                  source="rclone config create|update NAME TYPE [KEY VALUE]... (rclone.org: pass, secret_access_key)"),
    CommandSecret("ngrok", (), "positional", sub="add-authtoken", index=1,
                  source="ngrok config add-authtoken TOKEN (ngrok agent CLI reference)"),
    CommandSecret("ngrok", (), "positional", sub="authtoken", index=1, source="ngrok authtoken TOKEN (ngrok v2)"),
    CommandSecret("cloudflared", (), "positional", sub="install", index=1,
                  source="cloudflared service install TOKEN (Cloudflare Tunnel docs: the tunnel token)"),
    CommandSecret("vastai", (), "positional", sub="api-key", index=1,
                  source="vastai set api-key KEY (vast.ai CLI docs)"),
    CommandSecret("wandb", (), "positional", sub="login", index=1, skip=("--host",),
                  source="wandb login [OPTIONS] [KEY] (W&B CLI reference: the API key as its argument)"),
    CommandSecret("http|https", ("-a", "--auth"), after="^[^:]*:",
                  source="HTTPie (httpie.io/docs/cli): --auth, -a USERNAME[:PASSWORD]; without the colon it prompts"),
    CommandSecret("az", ("--value",), sub="secret",
                  source="az keyvault secret set --name NAME --value VALUE (learn.microsoft.com)"),
    CommandSecret("aws", ("--value",), sub="put-parameter",
                  source="aws ssm put-parameter --name NAME --type SecureString --value VALUE (AWS CLI reference)"),
    CommandSecret("kubectl|oc", ("--from-literal",), sub="secret", after="^[^=]+=",
                  source="kubectl create secret generic NAME --from-literal=KEY=VALUE (kubectl reference: each "
                         "literal is the Secret's data, whatever its key)"),
    CommandSecret("databricks", ("--string-value", "--bytes-value"), sub="secrets",
                  source="databricks secrets put-secret SCOPE KEY --string-value VALUE (Databricks CLI reference; the "
                         "legacy CLI's secrets put --scope S --key K --string-value VALUE)"),
    CommandSecret("vault", (), "assignments", sub="kv",
                  source="vault kv put|patch [-mount=M] PATH KEY=VALUE... (Vault CLI reference: the secret's data)"),
    CommandSecret("modal", (), "assignments", sub="secret",
                  source="modal secret create NAME KEY=VALUE... (Modal CLI reference)"),
    CommandSecret("fly|flyctl", (), "assignments", sub="secrets",
                  source="fly secrets set NAME=VALUE... (Fly.io flyctl reference)"),
    CommandSecret("doppler|infisical", (), "assignments", sub="secrets",
                  source="doppler secrets set NAME=VALUE... (Doppler CLI docs); infisical secrets set NAME=VALUE..."),
    CommandSecret("htpasswd", ("-b",), "positional", sub="htpasswd", index=3, skip=("-C", "-r"),
                  source="htpasswd(1): htpasswd -b[cmBdpsD] [-C cost] [-r rounds] passwdfile username password"),
    CommandSecret("htpasswd", ("-b", "-n"), "positional", sub="htpasswd", index=2, skip=("-C", "-r"),
                  source="htpasswd(1): htpasswd -nb[mBdpsD] [-C cost] [-r rounds] username password"),
)

_BY_PROGRAM: dict[str, list[CommandSecret]] = {}
for _row in COMMAND_SECRETS:
    for _p in _row.programs.split("|"):
        _BY_PROGRAM.setdefault(_p, []).append(_row)
PROGRAMS: tuple[str, ...] = tuple(sorted(_BY_PROGRAM, key=lambda p: (-len(p), p)))

# (a program's name before a colon is a logger's or a prompt's prefix, "wandb: ...", "mysql: [Warning] ...": no
# command, as the gate in secret_rules says too; so is one before a '/', a directory of a path, "out/wandb/run-1":
# its arguments follow after a blank, or as the next item of an argv list, as the gate has it)
_PROGRAM = re.compile(r"(?<![\w\-.])(?P<p>" + "|".join(map(re.escape, PROGRAMS)) + r")(?:\.exe)?(?=['\"]?,?[ \t])")
# A shell word: quoted parts, escaped characters and plain characters, up to a blank or an operator.
_SHELL_WORD = re.compile(r"""(?:'[^'\n]*'|"(?:\\.|[^"\\\n])*"|\\.|[^\s'"|;&<>()`\\])+""")
_BLANKS = re.compile(r"[ \t]*")
_SHELL_PART = re.compile(r"""'(?P<s>[^'\n]*)'|"(?P<d>(?:\\.|[^"\\\n])*)"|\\(?P<e>.)|(?P<b>[^'"\\]+)""")
# An item of a Python list repr after the program's: ", 'x'" or ', "x"'.
_ARGV_ITEM = re.compile(r"""[ \t]*,[ \t]*(?:'(?P<s>(?:\\.|[^'\\\n])*)'|"(?P<d>(?:\\.|[^"\\\n])*)")""")
COMMAND_WORDS = 64  # words of one command read at most (a longer line is a script, not one command)
MEMO_WORDS = 4096  # words (and answers) remembered while one text is read: bounded, whatever the text

Word = tuple[str, list[int]]  # a word as the program sees it, and the index in the text of each of its characters


def _shell_word(text: str, pos: int) -> tuple[Word | None, int]:
    """The shell word after ``pos`` (its blanks skipped) and where it ends; None at an operator or a line's end."""
    pos = _BLANKS.match(text, pos).end()  # type: ignore[union-attr]
    m = _SHELL_WORD.match(text, pos)
    if m is None:
        return None, pos
    chars: list[str] = []
    where: list[int] = []
    for part in _SHELL_PART.finditer(text, m.start(), m.end()):
        group = next(g for g in ("s", "d", "e", "b") if part.group(g) is not None)
        chars.append(part.group(group))
        where.extend(range(part.start(group), part.end(group)))
    return ("".join(chars), where), m.end()


def _shell_words(text: str, pos: int) -> list[Word]:
    words: list[Word] = []
    while len(words) < COMMAND_WORDS:
        word, pos = _shell_word(text, pos)
        if word is None:
            break
        words.append(word)
    return words


_CUT = object()  # in the names: where one run of read words ends and another, read from elsewhere, begins


class _TextWords:
    """The shell words of one text, each read once and kept in order, so that a command's words are a slice:
    a line that names a program every few words would otherwise read each word again for every program
    before it (a command reads up to COMMAND_WORDS words). Bounded: past MEMO_WORDS it starts afresh."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.words: list[Word | None] = []  # None: the operator or line end that ends a command
        self.names: list[object] = []  # each word's text (None and _CUT as in words), for slices in C
        self.ends: list[int] = []  # where each word ends, i.e. where the next one is read from
        self.at: dict[int, int] = {}  # a position read from -> the index of the word read there

    def after(self, pos: int) -> tuple[list[Word], tuple[str, ...]]:
        """The words of the command read from ``pos``, and their texts."""
        words, names = self.words, self.names
        i = self.at.get(pos)
        if i is None:
            if len(words) >= MEMO_WORDS:
                words.clear()
                names.clear()
                self.ends.clear()
                self.at.clear()
            i = len(words)
            self._read(pos)
        stop = i + COMMAND_WORDS
        while len(words) < stop and words[-1] is not None:
            self._read(self.ends[-1])
        chunk = names[i:stop]
        if None in chunk:
            stop = i + chunk.index(None)
            chunk = chunk[:stop - i]
        if _CUT in chunk:  # another run was read after this one: read this command alone
            alone = _shell_words(self.text, pos)
            return alone, tuple(w for w, _ in alone)
        return words[i:stop], tuple(chunk)  # type: ignore[return-value, arg-type]

    def _read(self, pos: int) -> None:
        if self.words and self.words[-1] is not None and self.ends[-1] != pos:
            self.words.append(None)
            self.names.append(_CUT)
            self.ends.append(pos)
        word, end = _shell_word(self.text, pos)
        self.at[pos] = len(self.words)
        self.words.append(word)
        self.names.append(None if word is None else word[0])
        self.ends.append(end)


def _argv_words(text: str, pos: int) -> list[Word]:
    words: list[Word] = []
    while len(words) < COMMAND_WORDS and (m := _ARGV_ITEM.match(text, pos)) is not None:
        group = "s" if m.group("s") is not None else "d"
        # (escapes are kept as written: the span still covers the item)
        words.append((m.group(group), list(range(m.start(group), m.end(group)))))
        pos = m.end()
    return words


def _argv_start(text: str, start: int, end: int) -> bool:
    """Whether the program's name closes a quoted item of a Python argv list (its words are the next items)."""
    while start and (text[start - 1].isalnum() or text[start - 1] in "/._-"):
        start -= 1  # the program's directory (an argv list's '/usr/bin/mysql')
    quote = text[start - 1] if start and text[start - 1] in "'\"" else ""
    return bool(quote and text.startswith(quote, end) and _ARGV_ITEM.match(text, end + 1))


def _value(row: CommandSecret, words: list[Word], i: int) -> tuple[int, int] | None:
    """Where the secret of option ``words[i]`` is, as (word index, first character), or None."""
    word = words[i][0]
    for opt in row.options:
        if word == opt and row.take != "glued":
            if i + 1 < len(words) and not words[i + 1][0].startswith("-"):
                return i + 1, 0
        elif row.take != "separate" and word.startswith(opt) and len(word) > len(opt):
            if opt.startswith("--"):
                if word[len(opt)] == "=":
                    return i, len(opt) + 1
            elif len(opt) == 2 or opt.endswith(":") or row.take == "glued":
                return i, len(opt)
    return None


@lru_cache(maxsize=64)
def _after(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def _secret_in(row: CommandSecret, value: str, first: int) -> tuple[int, int] | None:
    """The secret's characters in a value from ``first``: after ``row.after`` when it names one."""
    a, b = first, len(value)
    if row.after:
        m = _after(row.after).search(value[first:])
        if m is None:
            return None
        a = first + m.end()
    if row.until and (k := value.find(row.until, a)) >= 0:
        b = k
    return (a, b) if a < b and not is_placeholder(value[a:b]) else None


def _positional(row: CommandSecret, words: list[Word], i: int) -> int | None:
    """The index of the ``row.index``-th word that is no option after ``words[i]``."""
    n = 0
    j = i + 1
    while j < len(words):
        w = words[j][0]
        if w in row.skip:
            j += 2
            continue
        if not w.startswith("-") or w == "-":
            n += 1
            if n == row.index:
                return j
        j += 1
    return None


def _after_sub(row: CommandSecret, names: list[str],
               strength_of: Callable[[str], str | None]) -> list[tuple[int, int]]:
    """The values of a ``pairs`` or an ``assignments`` row: words after the word ``row.sub``."""
    at = names.index(row.sub) if row.sub in names else len(names)
    if row.take == "assignments":
        return [(i, w.index("=") + 1) for i in range(at + 1, len(names))
                if not (w := names[i]).startswith("-") and w.find("=") > 0]
    return [(i + 1, 0) for i in range(at + 1, len(names) - 1) if not names[i].startswith("-")
            and is_secret_value(strength_of(names[i]), names[i + 1], names[i])]


def _found(row: CommandSecret, program: str, words: list[Word],
           strength_of: Callable[[str], str | None]) -> list[tuple[int, int]]:
    """Where ``row`` finds a secret among a command's words: (word index, first character) each."""
    names = [w for w, _ in words]
    if row.take == "positional":
        if row.sub == program:
            flags = "".join(w[1:] for w in names if w.startswith("-") and not w.startswith("--"))
            if not all(o[1:] in flags for o in row.options):
                return []
            starts = [-1]
        else:
            starts = [i for i, w in enumerate(names) if w == row.sub]
        return [(j, 0) for i in starts if (j := _positional(row, words, i)) is not None]
    if row.take in ("pairs", "assignments"):
        return _after_sub(row, names, strength_of)
    if row.take == "named":
        return [(i + 2, 0) for i, w in enumerate(names[:-2]) if w in row.options
                and is_secret_value(strength_of(names[i + 1]), names[i + 2], names[i + 1])]
    if row.sub and row.sub not in names:
        return []
    return [v for i in range(len(words)) if (v := _value(row, words, i)) is not None]


def command_secrets(text: str, strength_of: Callable[[str], str | None] = key_strength) -> list[tuple[int, int]]:
    """Passwords given to the programs of :data:`COMMAND_SECRETS` (see the module's docstring)."""
    spans: list[tuple[int, int]] = []
    read = _TextWords(text)
    # A row's answer depends only on the program and the words' text: a hostile line that repeats a command
    # thousands of times asks the same question each time.
    answers: dict[tuple[str, int, tuple[str, ...]], list[tuple[int, int]]] = {}
    for m in _PROGRAM.finditer(text):
        if _argv_start(text, m.start(), m.end()):
            words = _argv_words(text, m.end() + 1)
            names = tuple(w for w, _ in words)
        else:
            words, names = read.after(m.end())
        if not words:
            continue
        program = m.group("p")
        for n, row in enumerate(_BY_PROGRAM[program]):
            key = (program, n, names)
            found = answers.get(key)
            if found is None:
                if len(answers) >= MEMO_WORDS:
                    answers.clear()
                found = answers[key] = _found(row, program, words, strength_of)
            for j, first in found:
                value, where = words[j]
                span = _secret_in(row, value, first)
                if span is not None:
                    spans.append((where[span[0]], where[span[1] - 1] + 1))
    return spans


def takes_no_next_word(text: str, flag: int) -> bool:
    """Whether the option word starting at ``flag`` belongs to a program whose manual gives it an optional,
    attached-only argument (a ``glued`` row: mysql's ``--password[=password]``), so that the next word is no
    value of it: ``mysql --password db`` prompts for the password and opens ``db``."""
    memo = _GLUED
    if memo[0] is not text:  # by identity: an equal text met again (a repeated line) would be compared whole
        memo[:] = [text, _glued_flags(text)]  # on each call, as an lru_cache compares its keys
    return flag in memo[1]


_GLUED: list = [None, frozenset()]  # the last text asked about and its glued flags


def _glued_flags(text: str) -> frozenset[int]:
    """Where an option word of a glued row of the program before it starts in ``text``. Found once per text:
    the finders ask about each flag of the same text in turn, and looking back over the line's programs for
    each flag would be quadratic in a line of many commands."""
    flags: set[int] = set()
    read = _TextWords(text)
    for m in _PROGRAM.finditer(text):
        rows = [r for r in _BY_PROGRAM[m.group("p")] if r.take == "glued"]
        if not rows:
            continue
        argv = _argv_start(text, m.start(), m.end())
        words = _argv_words(text, m.end() + 1) if argv else read.after(m.end())[0]
        for word, where in words:
            if where and any(word in r.options for r in rows):
                flags.add(where[0])
    return frozenset(flags)
