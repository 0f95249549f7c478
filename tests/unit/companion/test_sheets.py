"""The workload sheet's rules, without a database: what a field may hold, and what a save changes."""

from __future__ import annotations

import pytest

from app.classroom.sheets import SheetField, check_field, empty_sheet, export, merge, touched


@pytest.mark.parametrize("value", ["", "photos on the share", "decode, resize, batch"])
def test_words_without_numbers_need_no_note(value: str) -> None:
    assert check_field(SheetField(value=value)) == ""


@pytest.mark.parametrize("value", ["1.28 million images", "about 140 GB", "ResNet-50"])
def test_a_number_in_a_field_to_measure_needs_a_note(value: str) -> None:
    assert "marked to measure but holds a number" in check_field(SheetField(value=value))
    assert check_field(SheetField(value=value, note="counted with find | wc -l")) == ""


def test_a_known_field_may_hold_a_number_without_a_note() -> None:
    assert check_field(SheetField(value="140 GB", status="known")) == ""


def test_a_note_of_spaces_is_no_note() -> None:
    assert check_field(SheetField(value="140 GB", note="   ")) != ""


def test_a_refused_field_is_not_merged_and_says_why() -> None:
    saved = SheetField(value="photos")
    merged, error = merge(saved, {"input": "140 GB"}, "input")
    assert merged is None and "to measure" in error


def test_control_characters_are_dropped_and_newlines_kept() -> None:
    merged, error = merge(SheetField(), {"input": "photos\x00 on\r\nthe share"}, "input")
    assert error == "" and merged is not None and merged.value == "photos on\nthe share"


def test_only_fields_the_form_names_are_touched() -> None:
    assert touched({"csrf_token": "t", "next": "/companion/sheet"}) == []
    assert touched({"outputs_status": "known", "input": ""}) == ["input", "outputs"]


def test_an_empty_sheet_exports_every_heading_empty_and_to_measure() -> None:
    data = export(empty_sheet())
    assert [f.value for f in data.fields] == [""] * 5
    assert {f.status for f in data.fields} == {"to measure"}
    assert data.measurements == []
