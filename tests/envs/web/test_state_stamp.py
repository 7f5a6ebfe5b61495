"""The web apps' state stamp (guiforge.envs.web.page_env.state_stamp): hashed in the page, it
changes exactly when the state a verifier reads changes, so per-step progress reads the
whole state (~100 KB on a phone) only then."""

from __future__ import annotations

from web_env_helpers import task

from guiforge.envs import Action
from guiforge.preparers.web_apps import web_setup


def test_the_stamp_follows_the_state_and_the_answer(web, world):
    web.reset(task("stamp", "web", ["mail"], web_setup(world, start="mail"), []))
    first, state = web.state_stamp(), web.final_state().apps
    assert first and web.state_stamp() == first
    web.step(Action(type="scroll", x=500, y=500, direction="down", amount=1))  # a look around changes nothing
    assert web.state_stamp() == first and web.final_state().apps == state
    web.env.js_sync("() => { const s = guiforge.getState(); s.mail.sent = [{to: 'x'}]; guiforge.loadState(s); "
                    "return true; }")
    assert web.state_stamp() != first and web.final_state().apps != state
    changed = web.state_stamp()
    web.step(Action(type="answer", text="7"))
    assert web.state_stamp() != changed
