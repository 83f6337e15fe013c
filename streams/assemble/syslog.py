"""RFC 5424 syslog messages (rsyslog's ``RSYSLOG_SyslogProtocol23Format`` and the like) to a line.

``<PRI>1 TIMESTAMP HOSTNAME APP-NAME PROCID MSGID STRUCTURED-DATA [MSG]``: the message is the
line; the time and host are the source's; a structured-data parameter ``path``, ``file`` or
``filename`` (e.g. ``[file@32473 path="..."]``, as rsyslog can write imfile's file name) is the file.
"""

from __future__ import annotations

import re

from streams.assemble.lines import RawLine, empty_source
from streams.assemble.timefmt import rfc3339_ms

_SD_ELEMENT = r'\[[^\]\s"=]+(?:\s+[^\]\s"=]+="(?:[^"\\]|\\.)*")*\s*\]'
RFC5424 = re.compile(
    r"<(\d{1,3})>1 (\S+) (\S+) (\S+) (\S+) (\S+) (-|(?:" + _SD_ELEMENT + r")+)(?: (.*))?\Z", re.S)
_SD_FILE = re.compile(r'\s(?:path|file|filename)="((?:[^"\\]|\\.)*)"')
_SD_UNESCAPE = re.compile(r"\\([\"\\\]])")
_BOM = "\ufeff"


def rfc5424_line(text: str) -> RawLine | None:
    m = RFC5424.match(text)
    if m is None:
        return None
    msg = m.group(8) or ""
    if msg.startswith(_BOM):
        msg = msg[1:]
    if msg.endswith("\n"):
        msg = msg[:-1]
    if msg.endswith("\r"):
        msg = msg[:-1]
    src = empty_source()
    host = m.group(3)
    src["host"] = None if host == "-" else host
    sd = m.group(7)
    if sd != "-":
        f = _SD_FILE.search(sd)
        if f:
            src["file"] = _SD_UNESCAPE.sub(r"\1", f.group(1))
    return RawLine(msg, None, rfc3339_ms(m.group(2)), src, {})
