"""The account pages in Debian's Chromium (Playwright): sign up with the terms, log in, change the password, reset it by an organizer's link.

Walked at 375 px wide, without JavaScript needed (each form posts and
redirects); screenshots go to ``test-artifacts/pages`` (or ``$PODIUM_ARTIFACTS``).
"""

from __future__ import annotations

from pathlib import Path

from podium.service import accounts
from podium.service.database import writing
from service_helpers import LiveServer
from test_accounts_mail import with_terms
from test_pages_browser import _logged_in, _shot, browser  # noqa: F401  (the module's Chromium fixture)

PHONE = {"width": 375, "height": 800}


def test_sign_up_log_in_change_and_reset_the_password_in_chromium(browser: object, tmp_path: Path) -> None:  # noqa: F811
    _, service, clock = with_terms(tmp_path, "# Terms\n\nOne account per person. *Be fair.*\n")
    with writing(service.engine) as connection:
        accounts.add_user(connection, "org", "org-password-1", None, True, clock())
    with LiveServer(service) as live:
        page = browser.new_context(viewport=PHONE, java_script_enabled=False).new_page()  # type: ignore[attr-defined]
        page.goto(live.url + "/login")
        page.click("text=Sign up")
        page.wait_for_url("**/register")
        page.fill("#user", "dana")
        page.fill("#email", "dana@delta.test")
        page.fill("#password", "dana-password-1")
        page.fill("#password2", "dana-password-1")
        page.fill("#team", "delta")
        page.click(
            "button:has-text('Sign up')"
        )  # the terms are not accepted yet: the browser's own check holds the form
        assert page.url.endswith("/register")
        page.check("input[name=terms]")
        _shot(page, "register-375")
        page.click("button:has-text('Sign up')")
        page.wait_for_url("**/account?done=*")
        assert "welcome" in page.inner_text("[role=status]") and "of team delta" in page.inner_text("main")
        code = page.inner_text("#invitation-code")
        assert len(code) == 20
        assert page.evaluate("document.documentElement.scrollWidth") <= 375  # nothing wider than the phone
        _shot(page, "account-375")

        page.click("button:has-text('Log out')")
        page.goto(live.url + "/login?next=/account")
        page.fill("#user", "dana")
        page.fill("#password", "dana-password-1")
        page.click("form.stack button")
        page.wait_for_url(live.url + "/account")  # the whole URL: "**/account" also matches /login?next=/account

        page.fill("#current", "wrong-password-0")
        page.fill("#password", "dana-password-2")
        page.fill("#password2", "dana-password-2")
        page.click("button:has-text('Change the password')")
        assert "wrong user name or password" in page.inner_text("[role=alert]")
        page.fill("#current", "dana-password-1")
        page.fill("#password", "dana-password-2")
        page.fill("#password2", "dana-password-2")
        page.click("button:has-text('Change the password')")
        page.wait_for_url("**/account?done=*")
        assert "password is changed" in page.inner_text("[role=status]")

        organizer = _logged_in(browser, live.url, "org", "/organizer")
        organizer.fill("#reset-user", "dana")  # type: ignore[attr-defined]
        organizer.click("button:has-text('Make a password-reset link')")  # type: ignore[attr-defined]
        link = organizer.inner_text("#reset-link")  # type: ignore[attr-defined]
        _shot(organizer, "reset-link-organizer")
        assert link.startswith(live.url + "/reset/")

        stranger = browser.new_context(viewport=PHONE, java_script_enabled=False).new_page()  # type: ignore[attr-defined]
        stranger.goto(link)
        assert "for dana" in stranger.inner_text("h1")
        stranger.fill("#password", "dana-password-3")
        stranger.fill("#password2", "dana-password-3")
        _shot(stranger, "reset-375")
        stranger.click("button:has-text('Set the password')")
        stranger.wait_for_url("**/login?next=/account")
        stranger.fill("#user", "dana")
        stranger.fill("#password", "dana-password-3")
        stranger.click("form.stack button")
        stranger.wait_for_url(live.url + "/account")
        stranger.goto(link)  # a link works once
        assert "used already" in stranger.inner_text("main")
        page.reload()  # the reset ended dana's first session
        assert page.url.endswith("/login?next=/account")
