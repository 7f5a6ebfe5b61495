"""A site kind (guiforge.envs.site_kind) in real Chromium: guiforge serves the kind's own pages
under its reserved origin, `goto` stays on them, the health check fails once the page has
left the site, and the final state is what the kind's state script reads."""

from __future__ import annotations

import pytest

from guiforge.envs.actions import Action
from guiforge.envs.base import TaskSpec
from guiforge.envs.site_kind import SiteKind
from guiforge.envs.web.page_env import ActionError
from guiforge.envs.web.site import SITE_ORIGIN


class QuizKind(SiteKind):
    domain = "quiz"
    surface = "a quiz page"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory):
    tmp_path = tmp_path_factory.mktemp("quiz")
    (tmp_path / "quiz.html").write_text(
        "<!doctype html><title>Quiz</title><input id='answer' value='7'><input type='checkbox' name='sure' checked>"
        "<script>window.siteState = () => ({asked: new URLSearchParams(location.search).get('n')});</script>")
    (tmp_path / "help").mkdir()
    (tmp_path / "help" / "index.html").write_text("<!doctype html><title>Help</title>")
    kind = QuizKind()
    kind.pages = tmp_path
    env = kind.make(kind.spec())
    env.start()
    yield env
    env.close()


def _task(**setup) -> TaskSpec:
    return TaskSpec(task_id="q1", domain="quiz", instruction="answer", setup=setup)


def test_a_site_kind_serves_its_pages_keeps_goto_on_them_and_fails_health_off_site(site):
    site.reset(_task(page="quiz.html", query={"n": 3}, answer=7))
    assert site.healthy()
    state = site.final_state().apps["site"]
    assert state == {"url": "/quiz.html?n=3", "title": "Quiz", "fields": {"answer": "7", "sure": True},
                     "page": {"asked": "3"}}

    with pytest.raises(ActionError, match="only this site's pages"):
        site.execute(Action(type="goto", text="http://example.com/"))
    assert site.execute(Action(type="goto", text="help/")) == "opened /help/"
    assert site.final_state().apps["site"]["title"] == "Help" and site.healthy()

    with pytest.raises(Exception, match="ERR_BLOCKED_BY_CLIENT"):  # the router answers nothing but the site
        site.s.page.goto("http://example.com/")
    assert not site.healthy()  # the page left the site: an env_failure, never a reward


def test_a_site_task_naming_a_page_the_kind_lacks_is_refused(site):
    with pytest.raises(ValueError, match="setup.page 'nope.html' is not a page of"):
        site.reset(_task(page="nope.html"))
    site.reset(_task(page="quiz.html"))
    assert site.s.page.url == f"{SITE_ORIGIN}/quiz.html"


def test_a_reset_leaves_no_storage_of_the_task_before(site):
    """localStorage lives with the context and sessionStorage with the tab, both reused across
    tasks: the next task's start state must not hold what the last one saved."""
    site.reset(_task(page="quiz.html"))
    site.js_sync("() => { localStorage.setItem('draft', 'x'); sessionStorage.setItem('step', '2'); return true; }")
    site.reset(_task(page="quiz.html"))
    left = site.js_sync("() => [localStorage.getItem('draft'), sessionStorage.getItem('step')]")
    assert left == [None, None]


def test_a_reset_after_a_blocked_navigation_still_clears_the_sites_storage(site):
    """The error page a blocked navigation leaves has no storage of its own, whatever
    ``page.url`` says; the site's session storage in this tab must still be emptied."""
    site.reset(_task(page="quiz.html"))
    site.js_sync("() => { localStorage.setItem('draft', 'x'); sessionStorage.setItem('step', '2'); return true; }")
    with pytest.raises(Exception, match="ERR_BLOCKED_BY_CLIENT"):
        site.s.page.goto("http://example.com/")
    site.reset(_task(page="quiz.html"))
    assert site.js_sync("() => [localStorage.getItem('draft'), sessionStorage.getItem('step')]") == [None, None]
