"""The workload sheet's rules, without a database: what a number may hold, and what a save changes."""

from __future__ import annotations

import pytest

from app.classroom.sheets import SheetField, SheetNumber, check_field, empty_sheet, export, merge, touched


@pytest.mark.parametrize("value", ["", "photos on the share", "decode, resize, batch"])
def test_words_without_numbers_need_no_note(value: str) -> None:
    assert check_field(SheetField(numbers=[SheetNumber(label="photos", value=value)])) == ""


@pytest.mark.parametrize("value", ["1.28 million images", "about 140 GB", "ResNet-50"])
def test_a_number_to_measure_that_holds_a_figure_needs_a_note(value: str) -> None:
    field = SheetField(numbers=[SheetNumber(label="images", value=value)])
    assert "“images” is marked to measure but holds a figure" in check_field(field)
    noted = SheetField(numbers=[SheetNumber(label="images", value=value, note="counted with find | wc -l")])
    assert check_field(noted) == ""


def test_each_number_is_marked_on_its_own() -> None:
    """One heading, two numbers: the known one needs no note, the one still to measure does."""
    field = SheetField(value="photos on the share", numbers=[
        SheetNumber(label="photos", value="1,281,167", status="known"),
        SheetNumber(label="total size", value="140 GB"),
    ])
    assert check_field(field).startswith("“total size” is marked to measure")
    field.numbers[1].status = "known"
    assert check_field(field) == ""


def test_the_heading_text_may_mention_figures_its_numbers_carry_the_marks() -> None:
    assert check_field(SheetField(value="about 140 GB of photos")) == ""


def test_a_note_of_spaces_is_no_note() -> None:
    assert check_field(SheetField(numbers=[SheetNumber(value="140 GB", note="   ")])) != ""


def test_a_form_replaces_a_headings_numbers_with_its_rows_and_drops_empty_ones() -> None:
    saved = SheetField(value="photos", numbers=[SheetNumber(label="old", value="1", status="known")])
    merged, error = merge(saved, {"input_0_label": "", "input_0_value": "", "input_0_status": "to_measure",
                                  "input_1_label": "photos", "input_1_value": "1,281,167",
                                  "input_1_status": "known"}, "input")
    assert error == "" and merged is not None
    assert merged.value == "photos"
    assert merged.numbers == [SheetNumber(label="photos", value="1,281,167", status="known")]


def test_a_refused_number_is_not_merged_and_says_why() -> None:
    merged, error = merge(SheetField(), {"input_0_label": "size", "input_0_value": "140 GB"}, "input")
    assert merged is None and "to measure" in error


def test_control_characters_are_dropped_and_newlines_kept() -> None:
    merged, error = merge(SheetField(), {"input": "photos\x00 on\r\nthe share"}, "input")
    assert error == "" and merged is not None and merged.value == "photos on\nthe share"


def test_only_fields_the_form_names_are_touched() -> None:
    assert touched({"csrf_token": "t", "next": "/companion/sheet"}) == []
    assert touched({"outputs_0_status": "known", "input": ""}) == ["input", "outputs"]


def test_an_empty_sheet_exports_every_heading_empty_with_no_numbers() -> None:
    data = export(empty_sheet())
    assert [f.value for f in data.fields] == [""] * 5
    assert [f.numbers for f in data.fields] == [[]] * 5
    assert data.measurements == []
