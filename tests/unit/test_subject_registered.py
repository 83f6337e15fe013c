"""A subject is looked up by name, not in the registry's first page of subjects."""

from __future__ import annotations

import pytest
from confluent_kafka.schema_registry.error import SchemaRegistryError

from streams.registry import subject_registered


class PagedRegistry:
    """Holds many subjects; lists only the first ``page`` of them, as Apicurio's Confluent API does."""

    def __init__(self, subjects: list[str], page: int = 1000) -> None:
        self.subjects, self.page = subjects, page

    def get_subjects(self) -> list[str]:
        return self.subjects[:self.page]

    def get_versions(self, subject: str) -> list[int]:
        if subject not in self.subjects:
            raise SchemaRegistryError(404, 40401, f"Subject '{subject}' not found.")
        return [1]


def test_a_subject_past_the_first_page_is_registered_and_an_unknown_one_is_not() -> None:
    registry = PagedRegistry([f"t{i}.events.p-value" for i in range(1500)])
    assert "t1400.events.p-value" not in registry.get_subjects()
    assert subject_registered(registry, "t1400.events.p-value")
    assert not subject_registered(registry, "t9999.events.p-value")


def test_a_registry_error_other_than_not_found_is_raised() -> None:
    class Down(PagedRegistry):
        def get_versions(self, subject: str) -> list[int]:
            raise SchemaRegistryError(503, 50301, "unavailable")

    with pytest.raises(SchemaRegistryError):
        subject_registered(Down([]), "x-value")
