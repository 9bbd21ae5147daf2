"""What ``Verifier.predict`` accepts as a claim: a Claim, or a claims-file record; anything else is one
InputError naming its position (not an AttributeError from deep inside)."""

from __future__ import annotations

import pytest

from sciverify.data.records import Claim
from sciverify.errors import InputError
from sciverify.pipeline.verify import as_claim, check_claim


def test_claims_and_claims_file_records_are_accepted() -> None:
    claim = Claim(id=7, text="Statins lower the risk of heart attacks.")
    assert as_claim(claim) is claim
    assert as_claim({"id": 7, "claim": claim.text, "evidence": {}}) == claim
    assert as_claim({"id": "c7", "claim": "x"}) == Claim(id="c7", text="x")


@pytest.mark.parametrize(
    ("item", "message"),
    [
        ({"id": 1, "text": "the wrong key"}, r"claims\[3\]: a claim record needs an 'id' .* and a 'claim'"),
        ({"id": True, "claim": "x"}, r"claims\[3\]: a claim record needs an 'id'"),
        ("a bare string", r"claims\[3\]: expected a Claim or a dict with 'id' and 'claim', got str"),
    ],
)
def test_anything_else_is_one_clear_error(item: object, message: str) -> None:
    with pytest.raises(InputError, match=message):
        as_claim(item, 3)


def test_a_claim_that_is_not_utf8_is_refused() -> None:
    undecodable = b"Caf\xe9 lowers blood pressure.".decode("utf-8", "surrogateescape")  # as argv gives it
    with pytest.raises(InputError, match="not valid UTF-8"):
        check_claim(undecodable)
