"""The account pages: sign-up (``/register``), a team created or joined by a signed-in user (``/join``), the contest's
terms, one's account (address, notifications, password, invitation code, the contests open to join), password reset.

Every form works without JavaScript. A signed-in form carries the session's
CSRF token (:func:`podium.service.pages.checked_form`); the forms used before
there is a session (sign-up, asking for and using a reset link) carry a token
of their own kept in a cookie beside them, and are refused from another
site's page (``Origin``), as the log-in form is. Sign-up and reset requests
share the database limiter with log-ins (:mod:`podium.service.limiter`), and
every password is hashed on the hashing pool, outside any transaction.
"""

from __future__ import annotations

import functools
import hmac
import secrets
from datetime import timedelta
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, HTTPException, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlalchemy import delete, update

from podium.contest import Contest
from podium.core.errors import UsageError
from podium.service import accounts, home, invitations, joining, limiter, logins, mail, resets, rosters
from podium.service.database import reading, writing
from podium.service.deps import ContestDep, Service, ServiceDep, contest_of, contest_or_site
from podium.service.markdown import render_file
from podium.service.pages import COOKIE, _form, checked_form, keep_cookie, render_page, signed_in, signed_organizer
from podium.service.proxies import client_address
from podium.service.tables import tokens, users
from podium.service.urls import same_origin, site_url

router = APIRouter(include_in_schema=False)
FORM_COOKIE = "podium_form"  # the token of the forms shown before there is a session


def terms_html(service: Service, request: Request) -> str | None:
    """The terms of the request's contest, their Markdown as safe HTML (:mod:`podium.service.markdown`: no raw HTML, no script link, no foreign image)."""
    contest = contest_of(service, request)
    if contest.content.terms is None:
        return None
    return render_file(contest.content.terms, contest.path.parent, {}, down=1)  # the page has its own h1


def _page(service: Service, request: Request, template: str, code: int = 200, **values: Any) -> HTMLResponse:
    """:func:`~podium.service.pages.render_page` with no message unless one is given (``error``, ``done``)."""
    return render_page(service, request, template, code=code, **({"error": None, "done": None} | values))


def _open_form(service: Service, request: Request, template: str, code: int = 200, **values: Any) -> HTMLResponse:
    """A page with a form shown before there is a session, and the form's token (kept in its cookie, or a new one)."""
    token = request.cookies.get(FORM_COOKIE) or secrets.token_urlsafe(24)
    response = _page(service, request, template, code, form_csrf=token, **values)
    keep_cookie(response, service, request, FORM_COOKIE, token)
    return response


def _check_open_form(service: Service, request: Request, form: dict[str, str]) -> bool:
    origin = request.headers.get("origin")
    if origin is not None and not same_origin(request, origin, service.public_url):
        raise HTTPException(403, "a form from another site's page is refused")
    expected = request.cookies.get(FORM_COOKIE, "")
    return bool(expected) and hmac.compare_digest(form.get("form_csrf", ""), expected)


def absolute_url(service: Service, request: Request, path: str) -> str:
    """The full address of ``path`` on this site: under the public URL (``--public-url``) when there is one, else where the request came."""
    if service.public_url is not None:
        return service.public_url.base + path
    return f"{request.url.scheme}://{request.url.netloc}" + site_url(request, path)


def _signing_up(service: Service, request: Request) -> None:
    if not contest_of(service, request).service.self_registration:
        raise HTTPException(404, "this contest does not take sign-ups: ask the organizers for an account")


@router.get("/terms", response_class=HTMLResponse)
def terms_page(service: ServiceDep, request: Request) -> HTMLResponse:
    html = terms_html(service, request)
    if html is None:
        raise HTTPException(404, "this contest has no terms page")
    return render_page(service, request, "terms.html", terms=html)


@router.get("/register", response_class=HTMLResponse)
def register_page(service: ServiceDep, request: Request, invitation: str = "") -> HTMLResponse:
    _signing_up(service, request)
    return _open_form(
        service,
        request,
        "register.html",
        terms=terms_html(service, request) is not None,
        form={"invitation": invitation[:64]},
    )


@router.post("/register")
async def register(service: ServiceDep, request: Request) -> Response:
    _signing_up(service, request)
    form = await _form(request)
    has_terms = terms_html(service, request) is not None
    again = functools.partial(
        _open_form,
        service,
        request,
        "register.html",
        terms=has_terms,
        form={k: v for k, v in form.items() if "password" not in k},
    )
    if not _check_open_form(service, request, form):
        return again(403, error="the form had expired: send it again")
    if has_terms and form.get("terms") != "accepted":
        return again(422, error="accept the contest's terms to sign up")
    if form.get("password") != form.get("password2"):
        return again(422, error="the two passwords differ")
    team, code = form.get("team", "").strip() or None, form.get("invitation", "").strip() or None
    try:
        _, token = await logins.register(
            service,
            request,
            team,
            form.get("user", "").strip(),
            form.get("password", ""),
            invitation=code,
            email=form.get("email", "").strip() or None,
            session=True,
        )
    except HTTPException as refused:
        return again(refused.status_code, error=str(refused.detail))
    response = RedirectResponse(
        site_url(request, "/account?done=" + quote("welcome: you are signed up and logged in")), status_code=303
    )
    keep_cookie(response, service, request, COOKIE, token, session=True)
    return response


def joined(
    service: Service, contest: Contest, who: accounts.Caller, terms: bool, act: Any, value: str
) -> joining.Joined:
    """``act`` (:func:`~podium.service.joining.create` or :func:`~podium.service.joining.join`) for the signed-in user in
    ``contest``, its ``value`` the team's name or code; the refusals as :class:`HTTPException` (the page and the API).

    The clock is read once, in the write transaction: that reading decides whether registration is open.
    """
    if who.user_id is None:
        raise HTTPException(
            403, "this is a team's token, not a user's: log in (POST /api/tokens) to create or join a team"
        )
    if contest.content.terms is not None and not terms:
        raise HTTPException(422, f"accept the terms of contest {contest.id} to join it")
    try:
        with writing(service.engine) as connection:
            return act(connection, contest, who.user_id, value, service.clock())
    except invitations.Refused as refused:  # joining's refusals, and a refused code
        raise HTTPException(refused.status, str(refused)) from None
    except UsageError as exc:
        raise HTTPException(422, str(exc)) from None


def left(service: Service, contest: Contest, who: accounts.Caller) -> joining.Left:
    """:func:`~podium.service.joining.leave` for the signed-in user in ``contest``; its refusals as :class:`HTTPException`
    (the page and the API). The clock is read once, in the write transaction."""
    if who.user_id is None:
        raise HTTPException(403, "this is a team's token, not a user's: log in (POST /api/tokens) to leave your team")
    try:
        with writing(service.engine) as connection:
            return joining.leave(connection, contest, who.user_id, service.clock())
    except invitations.Refused as refused:
        raise HTTPException(refused.status, str(refused)) from None


def _join_values(service: Service, contest: Contest) -> dict[str, Any]:
    """What the join page says of the contest's registration: open or not, until when, its terms and rules of teams."""
    now = service.clock()
    return {
        "open": joining.is_open(contest, now),
        "closes": joining.closes(contest),
        "terms": contest.content.terms is not None,
        "approval": contest.service.approval,
        "max_team_size": contest.service.max_team_size,
    }


@router.get("/join", response_class=HTMLResponse)
def join_page(service: ServiceDep, contest: ContestDep, request: Request, invitation: str = "") -> HTMLResponse:
    """Create a team in this contest, or join one by its code: for a user signed in to the site (in another contest, say)."""
    _signing_up(service, request)
    signed_in(service, request)
    values = _join_values(service, contest)
    return _page(service, request, "join.html", form={"invitation": invitation[:64]}, **values)


@router.post("/join")
async def join(service: ServiceDep, contest: ContestDep, request: Request) -> Response:
    _signing_up(service, request)
    _, who = await checked_form(service, request)
    form = await _form(request)
    team, code = form.get("team", "").strip(), form.get("invitation", "").strip()
    try:
        if bool(team) == bool(code):
            raise HTTPException(422, "give a new team's name, or the invitation code of a team to join, not both")
        act, value = (joining.create, team) if team else (joining.join, code)
        done = await run_in_threadpool(joined, service, contest, who, form.get("terms") == "accepted", act, value)
    except HTTPException as refused:
        kept = {"team": team, "invitation": code}
        return _page(
            service,
            request,
            "join.html",
            refused.status_code,
            error=str(refused.detail),
            form=kept,
            **_join_values(service, contest),
        )
    said = f"you created team {done.team}" if done.created else f"you joined team {done.team}"
    if not done.approved:
        said += "; it waits for the organizers' approval before it may submit"
    return RedirectResponse(site_url(request, "/submissions?done=" + quote(said)), status_code=303)


def _account_values(service: Service, request: Request, who: accounts.Caller) -> dict[str, Any]:
    now = service.clock()
    contest = contest_or_site(service, request)
    with reading(service.engine) as connection:
        row = connection.execute(users.select().where(users.c.id == who.user_id)).first() if who.user_id else None
        mine = [] if who.user_id is None else accounts.teams_of_user(connection, who.user_id)
        code = None if who.team_id is None else invitations.current(connection, who.team_id, now)
        joinable = [] if who.user_id is None else joining.open_to(connection, who.user_id, home.served(service), now)
        sent = 0 if who.team_id is None else joining.submissions_sent(connection, who.team_id)
    if who.team_id is not None and code is None:  # a new code when the team has none that works
        with writing(service.engine) as connection:
            code = invitations.code_of(connection, who.team_id, service.clock())
    return {
        "user": row,
        "off": mail.kinds_off(row) if row else set(),
        "kinds": mail.KINDS,
        "invitation": code,
        "teams": mine,
        "joinable": joinable,
        "may_leave": who.team is not None and contest is not None and not sent and joining.may_leave(contest, now),
        "members_final": who.team is not None and contest is not None and sent > 0 and joining.may_leave(contest, now),
    }


@router.get("/account", response_class=HTMLResponse)
def account_page(service: ServiceDep, request: Request, done: str | None = None) -> HTMLResponse:
    _, who = signed_in(service, request)
    return _page(service, request, "account.html", done=done, **_account_values(service, request, who))


@router.post("/team/leave")
async def team_leave(service: ServiceDep, contest: ContestDep, request: Request) -> Response:
    """The account page's form: leave your team in this contest (its box ticked to confirm)."""
    _, who = await checked_form(service, request)
    if (await _form(request)).get("confirm") != "leave":
        return _again(service, request, who, 422, "tick the box to confirm that you leave your team")
    try:
        done = await run_in_threadpool(left, service, contest, who)
    except HTTPException as refused:
        return _again(service, request, who, refused.status_code, str(refused.detail))
    said = f"you left team {done.team}" + (
        "; it had no other member and had sent nothing, so it is removed" if done.removed else ""
    )
    return _back(request, said)


def _back(request: Request, done: str) -> Response:
    return RedirectResponse(site_url(request, "/account?done=" + quote(done)), status_code=303)


def _again(service: Service, request: Request, who: accounts.Caller, code: int, error: str) -> HTMLResponse:
    return _page(service, request, "account.html", code, error=error, **_account_values(service, request, who))


@router.post("/account/mail")
async def account_mail(service: ServiceDep, request: Request) -> Response:
    _, who = await checked_form(service, request)
    form = await _form(request)
    if who.user_id is None:
        raise HTTPException(403, "log in as a user to set an address")
    try:
        with writing(service.engine) as connection:
            mail.set_mail(
                connection,
                who.user_id,
                form.get("email", "").strip() or None,
                {kind for kind in mail.KINDS if form.get(kind) != "on"},
                now=service.clock(),
            )
    except UsageError as exc:
        return _again(service, request, who, 422, str(exc))
    return _back(request, "your address and notifications are saved")


@router.post("/account/password")
async def account_password(service: ServiceDep, request: Request) -> Response:
    _, who = await checked_form(service, request)
    form = await _form(request)
    try:
        token = await change_password(
            service, request, who, form.get("current", ""), form.get("password", ""), form.get("password2", "")
        )
    except HTTPException as refused:
        return _again(service, request, who, refused.status_code, str(refused.detail))
    response = _back(request, "your password is changed; your other sessions and tokens have ended")
    keep_cookie(response, service, request, COOKIE, token, session=True)
    return response


async def change_password(
    service: Service,
    request: Request,
    who: accounts.Caller,
    current: str,
    new: str,
    again: str,
    *,
    session: bool = True,
) -> str:
    """Check the current password (limited as a log-in), set the new one, end every token of the user's; a new token (``session``: a web session's)."""
    if who.user_id is None:
        raise HTTPException(403, "log in as a user to change a password")
    if new != again:
        raise HTTPException(422, "the two new passwords differ")
    with reading(service.engine) as connection:
        row = connection.execute(users.select().where(users.c.id == who.user_id)).one()
    try:
        accounts.check_password(new, row.name)
    except UsageError as exc:
        raise HTTPException(422, str(exc)) from None
    await logins.log_in(
        service, request, row.name, current, session=session
    )  # the current password, checked and limited as a log-in
    hashed = await service.hashes.run(accounts.hash_password, new)

    def change() -> str:
        now = service.clock()
        with writing(service.engine) as connection:
            connection.execute(update(users).where(users.c.id == row.id).values(password_hash=hashed))
            connection.execute(delete(tokens).where(tokens.c.user_id == row.id))
            label = f"{'session' if session else 'login'} of {row.name}"
            life = accounts.SESSION if session else timedelta(days=logins.API_TOKEN_DAYS)
            return accounts.new_token(
                connection,
                None,  # a user\'s: their role is read in the contest of each request
                False,
                label,
                now,
                expires=now + life,
                user_id=row.id,
                session=session,
            )

    return await run_in_threadpool(change)


@router.get("/account/confirm/{token}", response_class=HTMLResponse)
def confirm_address(service: ServiceDep, request: Request, token: str) -> HTMLResponse:
    """The link mailed to a new address: following it confirms the address (the token is the proof; no session needed)."""
    with writing(service.engine) as connection:
        name = mail.confirm(connection, token)
    if name is None:
        raise HTTPException(
            404,
            "this confirmation link is unknown or used already: save your address again on your account page for a new one",
        )
    return _page(service, request, "confirmed.html", holder=name)


@router.post("/account/invitation")
async def renew_invitation(service: ServiceDep, request: Request) -> Response:
    _, who = await checked_form(service, request)
    if who.team_id is None:
        raise HTTPException(403, "organizers have no team to invite to")
    with writing(service.engine) as connection:
        invitations.code_of(connection, who.team_id, service.clock(), renew=True)
    return _back(request, "a new invitation code: the old one no longer works")


@router.post("/account/reset-link", response_class=HTMLResponse)
async def organizer_reset_link(service: ServiceDep, request: Request) -> HTMLResponse:
    """An organizer issues a user's reset link (the organizers' page): shown once, to hand over."""
    await checked_form(service, request)
    who = signed_organizer(service, request)
    name = (await _form(request)).get("user", "").strip()
    contest = contest_of(service, request).id
    try:
        with writing(service.engine) as connection:
            token = rosters.reset_token(connection, who, contest, name, service.clock())
    except UsageError as exc:
        raise HTTPException(403 if isinstance(exc, rosters.NotYours) else 404, str(exc)) from None
    link = absolute_url(service, request, resets.PATH + token)
    return render_page(
        service, request, "reset_issued.html", holder=name, link=link, hours=int(resets.LIFE.total_seconds() // 3600)
    )


@router.get("/reset", response_class=HTMLResponse)
def reset_request_page(service: ServiceDep, request: Request) -> HTMLResponse:
    with reading(service.engine) as connection:
        mailing = mail.enabled(connection)
    return _open_form(service, request, "reset_request.html", mailing=mailing)


async def request_reset(service: Service, request: Request, name: str) -> None:
    """Mail a reset link to the user ``name`` if they have a confirmed address (limited per address; the same answer whoever it is)."""
    await logins.reserve(
        service, limiter.RESET, client_address(request, service.proxies), name
    )  # every request counts, sent or not

    def issue() -> None:
        now = service.clock()
        with writing(service.engine) as connection:
            row = accounts.user_row(connection, name)
            if (
                mail.enabled(connection) and row is not None and row.email and row.email_confirmed
            ):  # else no link is made (nor an earlier one cancelled)
                user_id, token = resets.issue(connection, name, now)
                mail.reset_link(connection, user_id, "<site>" + resets.PATH + token, now)

    await run_in_threadpool(issue)


@router.post("/reset", response_class=HTMLResponse)
async def reset_request(service: ServiceDep, request: Request) -> HTMLResponse:
    form = await _form(request)
    if not _check_open_form(service, request, form):
        return _open_form(
            service, request, "reset_request.html", 403, mailing=True, error="the form had expired: send it again"
        )
    try:
        await request_reset(service, request, form.get("user", "").strip())
    except HTTPException as refused:
        return _open_form(
            service, request, "reset_request.html", refused.status_code, mailing=True, error=str(refused.detail)
        )
    return _open_form(
        service,
        request,
        "reset_request.html",
        mailing=True,
        done="if this user has an e-mail address, a link is on its way: it works once, within the hour",
    )


@router.get("/reset/{token}", response_class=HTMLResponse)
def reset_page(service: ServiceDep, request: Request, token: str) -> HTMLResponse:
    with reading(service.engine) as connection:
        row = resets.holder(connection, token, service.clock())
    if row is None:
        raise HTTPException(404, "this reset link is unknown, used already or expired (a link works once, for an hour)")
    return _open_form(service, request, "reset.html", holder=row.name, token=token)


async def use_reset(service: Service, request: Request, token: str, password: str) -> str:
    """Set a password by a reset link; the user's name (404 for a link unknown, used or expired, 422 for a weak password)."""
    with reading(service.engine) as connection:
        row = resets.holder(connection, token, service.clock())
    if row is None:
        raise HTTPException(
            404,
            "this reset link is unknown, used already or expired (a link works once, for an hour): ask for a new one",
        )
    try:
        accounts.check_password(password, row.name)
    except UsageError as exc:
        raise HTTPException(422, str(exc)) from None
    hashed = await service.hashes.run(accounts.hash_password, password)

    def redeem() -> str:
        with writing(service.engine) as connection:
            return resets.redeem(connection, token, hashed, service.clock())

    try:
        return await run_in_threadpool(redeem)
    except UsageError as exc:
        raise HTTPException(404, str(exc)) from None


@router.post("/reset/{token}")
async def reset(service: ServiceDep, request: Request, token: str) -> Response:
    form = await _form(request)
    again = functools.partial(_open_form, service, request, "reset.html", token=token, holder="")
    if not _check_open_form(service, request, form):
        return again(403, error="the form had expired: send it again")
    if form.get("password") != form.get("password2"):
        return again(422, error="the two passwords differ")
    try:
        await use_reset(service, request, token, form.get("password", ""))
    except HTTPException as refused:
        return again(refused.status_code, error=str(refused.detail))
    return RedirectResponse(site_url(request, "/login?next=/account"), status_code=303)
