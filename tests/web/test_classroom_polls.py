"""The cheap class polls: a learner's banner answers 304 while their class is unchanged (ETag, If-None-Match)."""

from __future__ import annotations

import re

from httpx import Response

from tests.web.classroom_helpers import Room, Student, room_fixture

__all__ = ["room_fixture"]


def banner_url(page: str) -> str:
    match = re.search(r'hx-get="(/class-banner\?[^"]+)"', page)
    assert match, "the page does not poll the class banner"
    return match.group(1).replace("&amp;", "&")


def poll(learner: Student, page: str, etag: str | None) -> Response:
    headers = {"HX-Request": "true"} | ({"If-None-Match": etag} if etag else {})
    return learner.client.get(banner_url(page), headers=headers)


def page_etag(page: str) -> str:
    token = re.search(r'data-token="([^"]+)"', page)
    assert token
    return f'"banner-{token.group(1)}"'


def test_an_unchanged_class_answers_304_and_a_changed_one_the_new_banner(room: Room) -> None:
    created = room.instructor.create()
    room.instructor.open_dashboard(created)
    ada = room.learner()
    page = ada.open(ada.joins(created.code, "Ada"))
    etag = page_etag(page)
    r = poll(ada, page, etag)
    assert r.status_code == 304 and r.content == b"" and r.headers["etag"] == etag
    assert room.instructor.pace("hold", 1).status_code == 303  # the class changes: new content, new tag
    r = poll(ada, page, etag)
    assert r.status_code == 200 and "held at step 1" in r.text
    assert r.headers["etag"] != etag and r.headers["etag"] == page_etag(r.text)
    again = poll(ada, r.text, r.headers["etag"])  # the new banner polls with its own tag: nothing new
    assert again.status_code == 304


def test_a_page_from_before_etags_still_gets_204_when_nothing_changed(room: Room) -> None:
    created = room.instructor.create()
    ada = room.learner()
    page = ada.open(ada.joins(created.code, "Ada"))
    assert poll(ada, page, None).status_code == 204


def test_a_stale_tag_gets_the_current_banner_not_304(room: Room) -> None:
    created = room.instructor.create()
    ada = room.learner()
    page = ada.open(ada.joins(created.code, "Ada"))
    r = poll(ada, page, '"banner-999.1"')
    assert r.status_code == 200 and 'id="class-banner"' in r.text and ">Ada<" in r.text


def test_a_learner_moved_by_the_instructor_is_moved_even_with_a_current_tag(room: Room) -> None:
    created = room.instructor.create()
    ada = room.learner()
    page = ada.open(ada.joins(created.code, "Ada"))
    room.instructor.pace("bring", 2, move=True)
    r = poll(ada, page, page_etag(page))
    assert r.status_code == 200 and r.headers["hx-redirect"].endswith("/2")
