"""E-mail notifications: an outbox written with each event, drained by a mailer thread off the request path.

An event (a submission scored, failed or rejected; a phase opened; the results
revealed; a password-reset link) writes one ``outbox`` row per recipient in
the transaction that makes it happen, so a message is never lost nor sent for
an event rolled back, and no request ever waits on the SMTP server. Rows are
written only while a ``podium serve --smtp`` has turned mail on (the
``mail`` setting), so the table does not fill up when nobody sends it.

A submission's messages go to the members of its team only, each to the
address they gave, unless they turned that kind off (:data:`KINDS`); a
password-reset link goes to its user whatever they turned off (they asked for
it). :class:`Mailer` claims due rows, sends each with :mod:`smtplib`
(STARTTLS when asked, log-in when a user is set) and retries a failed send
after 1, 2, 4, 8 minutes; after :data:`MAX_TRIES` it gives up and logs it.
"""

from __future__ import annotations

import hashlib
import logging
import re
import secrets
import smtplib
import ssl
import threading
from dataclasses import dataclass
from datetime import datetime, timedelta
from email.message import EmailMessage
from typing import Any

from sqlalchemy import Connection, Engine, delete, insert, or_, select, update

from podium.contest import Contest
from podium.core.errors import UsageError
from podium.service import state
from podium.service.database import writing
from podium.service.statuses import ERROR, FAILED, REJECTED, SCORED, Clock, utc_now
from podium.service.tables import memberships, organizers, outbox, settings, submissions, teams, users
from podium.service.urls import contest_prefix

log = logging.getLogger("podium.mail")
KINDS = {  # what each user may turn off -> its label on the account page
    "scored": "a submission of my team is scored",
    "failed": "a submission of my team fails or is rejected",
    "phase": "a phase opens",
    "revealed": "the final results are revealed",
    "news": "the organizers post an announcement",
}
RESET = "reset"  # a password-reset link: always sent (to a confirmed address)
CONFIRM = "confirm"  # an address's confirmation link
MAX_TRIES = 5
BATCH = 20  # messages claimed at a time
CLAIM = timedelta(minutes=5)  # a claimed message is tried again after this if its mailer died while sending
KEEP = timedelta(days=30)  # sent messages, and those given up on, are deleted after this
FRESH = timedelta(days=1)  # a phase that opened longer ago than this when mail was turned on is not announced
ENABLED = "mail"  # the setting: present while a podium serve sends mail
ADDRESS = re.compile(r"^[^@\s<>()\[\],;:\"\\]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$")


@dataclass(frozen=True)
class Smtp:
    """Where and how mail is sent (``podium serve --smtp HOST:PORT --mail-from ADDR``)."""

    host: str
    port: int
    sender: str
    user: str | None = None
    password: str | None = None
    starttls: bool = False
    cafile: str | None = None  # the certificate authorities trusted for STARTTLS [default: the system's]
    timeout_s: float = 20


def parse_smtp(
    server: str, sender: str | None, user: str | None, password: str | None, starttls: bool, cafile: str | None = None
) -> Smtp:
    """The settings of ``--smtp HOST:PORT`` and its companions (:class:`UsageError` with what is wrong)."""
    host, _, port = server.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise UsageError(f"--smtp {server!r}: give HOST:PORT, e.g. smtp.example.org:587")
    if sender is None:
        raise UsageError("--smtp needs --mail-from ADDRESS: the sender of the notifications")
    check_address(sender)
    if (user is None) != (password is None):
        raise UsageError("give both PODIUM_SMTP_USER and PODIUM_SMTP_PASSWORD, or neither")
    if user is not None and not starttls:
        raise UsageError("a password is sent over SMTP only with --smtp-starttls")
    return Smtp(host.strip("[]"), int(port), sender, user, password, starttls, cafile)


def check_address(address: str) -> str:
    if len(address) > 254 or not ADDRESS.fullmatch(address):  # match takes a final line feed, a header broken
        raise UsageError(f"{address[:80]!r} is not an e-mail address")
    return address


def set_mail(
    connection: Connection,
    user_id: int,
    email: str | None,
    off: set[str] | None = None,
    *,
    confirmed: bool = False,
    now: datetime | None = None,
) -> None:
    """A user's address (``None``/empty: no mail) and, when given, the kinds turned off.

    A new address, or one not confirmed yet given again, is sent a confirmation link (when mail is on, at ``now``) and gets no
    other mail until the link is followed (:func:`confirm`); ``confirmed``: an organizer vouches for it (``podium user add --email``).
    """
    row = connection.execute(select(users.c.email, users.c.email_confirmed).where(users.c.id == user_id)).one()
    values: dict[str, Any] = {}
    if off is not None:
        unknown = off - KINDS.keys()
        if unknown:
            raise UsageError(f"unknown kind of notification {sorted(unknown)[0]!r} (kinds: {', '.join(KINDS)})")
        values["mail_off"] = ",".join(sorted(off))
    email = check_address(email) if email else None
    if email != row.email or (email and not row.email_confirmed):
        values |= {
            "email": email,
            "email_confirmed": confirmed or (email == row.email and row.email_confirmed),
            "email_check": None,
        }
        if email and not values["email_confirmed"] and now is not None and enabled(connection):
            token = secrets.token_urlsafe(32)
            values["email_check"] = hashlib.sha256(token.encode()).hexdigest()
            body = f"Confirm that this address is yours, to get the notifications of {_contest_name(connection)}:\n<site>/account/confirm/{token}\n\nIf you did not give it, ignore this message: nothing more will come.\n"
            connection.execute(
                insert(outbox).values(
                    user_id=user_id,
                    address=email,
                    kind=CONFIRM,
                    subject="Confirm your address",
                    body=body,
                    created=now,
                    tries=0,
                    next_try=now,
                )
            )
    if values:
        connection.execute(update(users).where(users.c.id == user_id).values(**values))


def confirm(connection: Connection, token: str) -> str | None:
    """Confirm the address whose link carries ``token``: the user's name, or ``None`` for a token unknown or spent."""
    digest = hashlib.sha256(token[:128].encode()).hexdigest()
    row = connection.execute(select(users.c.id, users.c.name).where(users.c.email_check == digest)).first()
    if row is None:
        return None
    connection.execute(update(users).where(users.c.id == row.id).values(email_confirmed=True, email_check=None))
    return str(row.name)


def _contest_name(connection: Connection) -> str:
    served = state.served_ids(connection)
    return served[0] if len(served) == 1 else "the contests"


def kinds_off(row: Any) -> set[str]:
    return set(filter(None, row.mail_off.split(",")))


def _queue(connection: Connection, recipients: Any, kind: str, subject: str, body: str, now: datetime) -> int:
    rows = [
        {
            "user_id": r.id,
            "address": r.email,
            "kind": kind,
            "subject": subject[:256],
            "body": body,
            "created": now,
            "tries": 0,
            "next_try": now,
        }
        for r in recipients
        if r.email and r.email_confirmed and (kind == RESET or kind not in kinds_off(r))
    ]
    if rows:
        connection.execute(insert(outbox), rows)
    return len(rows)


def enabled(connection: Connection) -> bool:
    return state.get(connection, ENABLED) is not None


def turn_off(connection: Connection) -> None:
    """No more messages are written (a ``podium serve`` without ``--smtp``)."""
    connection.execute(delete(settings).where(settings.c.key == ENABLED))


def reset_link(connection: Connection, user_id: int, link: str, now: datetime) -> int:
    """Mail a password-reset link to its user (call in the transaction that made it); how many messages (0: no address, or mail off)."""
    if not enabled(connection):
        return 0
    who = connection.execute(
        select(users.c.id, users.c.email, users.c.email_confirmed, users.c.mail_off, users.c.name).where(
            users.c.id == user_id
        )
    ).all()
    body = f"Someone, hopefully you, asked to reset the password of {who[0].name if who else ''}.\n\nSet a new one here within the hour (the link works once):\n{link}\n\nIf you did not ask for it, ignore this message.\n"
    return _queue(connection, who, RESET, "Your password-reset link", body, now)


def submission_done(
    connection: Connection,
    submission_id: int,
    status: str,
    reason: str | None,
    scores: dict[str, Any] | None,
    now: datetime,
) -> int:
    """Mail the members of the submission's team that it ended (call in the transaction that ends it)."""
    if not enabled(connection):
        return 0
    kind = "scored" if status == SCORED else "failed" if status in (FAILED, REJECTED, ERROR) else None
    row = connection.execute(
        select(submissions.c.team_id, submissions.c.filename, teams.c.name)
        .join(teams)
        .where(submissions.c.id == submission_id)
    ).first()
    if kind is None or row is None:
        return 0
    members = connection.execute(
        select(users.c.id, users.c.email, users.c.email_confirmed, users.c.mail_off)
        .join(memberships)
        .where(memberships.c.team_id == row.team_id)
    ).all()
    said = {SCORED: "is scored", FAILED: "failed", REJECTED: "was rejected", ERROR: "could not be scored"}[status]
    lines = [f"Submission {submission_id} ({row.filename}) of team {row.name} {said}."]
    if scores:
        lines += ["", "Public scores:"] + [f"  {name}: {value}" for name, value in scores.items()]
    if reason:
        lines += ["", f"Why: {reason}"]
    lines += ["", f"Its page: <site>/submissions/{submission_id}"]
    return _queue(connection, members, kind, f"Submission {submission_id} {said}", "\n".join(lines) + "\n", now)


def _everyone(connection: Connection, contest: str) -> list[Any]:
    """The users of ``contest`` who have an address: its teams' members, its organizers, the site's administrators."""
    members = select(memberships.c.user_id).where(memberships.c.contest == contest)
    organizing = select(organizers.c.user_id).where(organizers.c.contest == contest)
    return list(
        connection.execute(
            select(users.c.id, users.c.email, users.c.email_confirmed, users.c.mail_off).where(
                users.c.email.is_not(None), or_(users.c.id.in_(members), users.c.id.in_(organizing), users.c.admin)
            )
        )
    )


def announce(connection: Connection, contest: Contest, now: datetime, prefix: str = "") -> int:
    """Mail the contest's users once when a phase opens and once when the results are revealed (each marked in
    ``settings``), its links under ``prefix`` (``/c/ID`` when the site serves several contests); how many messages."""
    if not enabled(connection):
        return 0
    sent = 0
    for phase in contest.phases:
        key = "mailed:phase:" + hashlib.sha256(phase.name.encode()).hexdigest()[:32]
        if phase.start <= now and state.get(connection, key, contest.id) is None:
            state.put(connection, key, now.isoformat(), contest.id)
            if now - phase.start < FRESH and now < phase.end:
                body = f"The phase {phase.name} of {contest.title or contest.id} is open until {phase.end:%Y-%m-%d %H:%M} UTC.\n\nSubmit: <site>{prefix}/submissions\n"
                sent += _queue(
                    connection, _everyone(connection, contest.id), "phase", f"{phase.name} is open", body, now
                )
    if state.get(connection, "mailed:revealed", contest.id) is None and state.is_revealed(connection, contest, now):
        state.put(connection, "mailed:revealed", now.isoformat(), contest.id)
        body = f"The final results of {contest.title or contest.id} are revealed.\n\nThe leaderboard: <site>{prefix}/leaderboard\n"
        sent += _queue(
            connection, _everyone(connection, contest.id), "revealed", "The final results are revealed", body, now
        )
    return sent


def news(connection: Connection, contest: str, text: str, now: datetime) -> int:
    """Mail an announcement of ``contest`` to its users who keep ``news`` on (call in the transaction that posts it); how many messages."""
    if not enabled(connection):
        return 0
    body = f"{text}\n\nThe contest's page: <site>/\n"
    return _queue(connection, _everyone(connection, contest), "news", f"News from {contest}", body, now)


def _claim(engine: Engine, now: datetime) -> list[Any]:
    due = (outbox.c.sent.is_(None), outbox.c.tries < MAX_TRIES, outbox.c.next_try <= now)
    with writing(engine) as connection:
        rows = list(
            connection.execute(
                select(outbox).where(*due).order_by(outbox.c.id).limit(BATCH).with_for_update(skip_locked=True)
            )
        )
        if rows:
            connection.execute(update(outbox).where(outbox.c.id.in_([r.id for r in rows])).values(next_try=now + CLAIM))
    return rows


def send(smtp: Smtp, messages: list[EmailMessage]) -> None:
    """Send ``messages`` over one SMTP connection (:class:`smtplib.SMTPException` or :class:`OSError` when it fails)."""
    with smtplib.SMTP(smtp.host, smtp.port, timeout=smtp.timeout_s) as client:
        if smtp.starttls:
            client.starttls(context=ssl.create_default_context(cafile=smtp.cafile))
        if smtp.user is not None and smtp.password is not None:
            client.login(smtp.user, smtp.password)
        for message in messages:
            client.send_message(message)


def drain(engine: Engine, smtp: Smtp, site: str, clock: Clock = utc_now) -> int:
    """Send the messages due; how many were sent. A failure is logged and retried later, at most :data:`MAX_TRIES` times.

    Messages sent, or given up on, more than :data:`KEEP` ago are deleted first.
    """
    with writing(engine) as connection:
        connection.execute(
            delete(outbox).where(
                outbox.c.created <= clock() - KEEP, or_(outbox.c.sent.is_not(None), outbox.c.tries >= MAX_TRIES)
            )
        )
    sent = 0
    while rows := _claim(engine, clock()):
        for index, row in enumerate(rows):
            message = EmailMessage()
            message["From"], message["To"], message["Subject"] = smtp.sender, row.address, row.subject
            message.set_content(row.body.replace("<site>", site))
            try:
                send(smtp, [message])
            except (smtplib.SMTPException, OSError, ValueError) as exc:
                tries, now = row.tries + 1, clock()
                log.warning(
                    "mail %s to %s not sent (try %s of %s): %s",
                    row.id,
                    row.address,
                    tries,
                    MAX_TRIES,
                    exc,
                    extra={"mail_id": row.id},
                )
                later = now + timedelta(minutes=2 ** (tries - 1))
                with writing(engine) as connection:
                    connection.execute(
                        update(outbox)
                        .where(outbox.c.id == row.id)
                        .values(tries=tries, error=str(exc)[:2000], next_try=later)
                    )
                    rest = [
                        r.id for r in rows[index + 1 :]
                    ]  # the server is likely down: the rest of the batch, untried, waits as long
                    connection.execute(update(outbox).where(outbox.c.id.in_(rest)).values(next_try=later))
                if tries >= MAX_TRIES:
                    log.error(
                        "mail %s to %s: gave up after %s tries", row.id, row.address, tries, extra={"mail_id": row.id}
                    )
                return sent
            with writing(engine) as connection:
                connection.execute(
                    update(outbox).where(outbox.c.id == row.id).values(sent=clock(), tries=row.tries + 1, error=None)
                )
            sent += 1
    return sent


def pending(connection: Connection) -> list[Any]:
    """The messages not sent yet, and not given up on."""
    return list(
        connection.execute(
            select(outbox).where(outbox.c.sent.is_(None), outbox.c.tries < MAX_TRIES).order_by(outbox.c.id)
        )
    )


class Mailer(threading.Thread):
    """Announces phases and the reveal, and drains the outbox, every ``every_s`` seconds until stopped (``podium serve --smtp``)."""

    def __init__(
        self, engine: Engine, smtp: Smtp, site: str, contests: Any, clock: Clock = utc_now, every_s: float = 5
    ) -> None:
        super().__init__(daemon=True, name="podium-mailer")
        self.engine, self.smtp, self.site, self.contests, self.clock, self.every_s = (
            engine,
            smtp,
            site,
            contests,
            clock,
            every_s,
        )
        self.stopped = threading.Event()
        with writing(engine) as connection:
            state.put(connection, ENABLED, smtp.sender)

    def run(self) -> None:
        while True:
            try:
                with writing(self.engine) as connection:
                    state.put(connection, ENABLED, self.smtp.sender)  # on while a sender runs, started first or not
                    served = state.served_ids(connection)
                    for contest in served:  # a contest's links under /c/ID/ when several are served
                        prefix = contest_prefix(contest) if len(served) > 1 else ""
                        announce(connection, self.contests.get(contest), self.clock(), prefix)
                drain(self.engine, self.smtp, self.site, self.clock)
            except Exception:  # a database hiccup or a bug: log it, keep the thread alive, try again next round
                log.exception("the mailer's round failed")
            if self.stopped.wait(self.every_s):
                return

    def stop(self) -> None:
        self.stopped.set()
        self.join()


def start_mailer(engine: Engine, smtp: Smtp | None, site: str, contests: Any) -> Mailer | None:
    """Start sending mail through ``smtp``; without it, turn mail off (no message is written while nobody sends them)."""
    if smtp is None:
        with writing(engine) as connection:
            turn_off(connection)
        return None
    mailer = Mailer(engine, smtp, site, contests)
    mailer.start()
    return mailer
