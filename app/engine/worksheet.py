"""The workload sheet's headings: shared by the service that stores a sheet and the widget that draws it."""

from __future__ import annotations

from pydantic import BaseModel, Field


class FieldSpec(BaseModel):
    """One heading of the sheet, as the lesson words it."""

    key: str
    label: str
    question: str
    example: str = Field(description="Greyed placeholder from the lesson's classifier; never saved")


FIELDS: tuple[FieldSpec, ...] = (
    FieldSpec(
        key="input",
        label="Input source and size",
        question="Where does the data live? How many items, how many bytes?",
        example="e.g. labelled photos on the team's network share: count and total size from its report",
    ),
    FieldSpec(
        key="preparation",
        label="Preparation",
        question="What happens to each item before the maths: decoding, cleaning, tokenising, resizing?",
        example="e.g. decode each JPEG, resize, pack into batches: images decoded a second still to measure",
    ),
    FieldSpec(
        key="computation",
        label="Computation",
        question="Which model or algorithm? Trained, or only run? How many parameters, at what precision?",
        example="e.g. a small image classifier, trained; parameters from its model card",
    ),
    FieldSpec(
        key="outputs",
        label="Outputs",
        question="What does the job write (checkpoints, predictions, reports), how large, and how often?",
        example="e.g. a checkpoint every half hour; its size still to measure",
    ),
    FieldSpec(
        key="dependencies",
        label="Dependencies",
        question="Libraries, drivers, services, datasets, and other teams you wait on.",
        example="e.g. the storage team's share, the GPU driver version, the labelling team",
    ),
)
FIELD_KEYS: tuple[str, ...] = tuple(f.key for f in FIELDS)
