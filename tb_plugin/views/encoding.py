"""The JSON bytes of a view's answer: the one encoder of what the routes serve, the parser stores beside a model
(``model/stored_answers.py``) and the command line prints."""

from __future__ import annotations

from typing import Any

import msgspec


def _float_safe(value: Any) -> Any:
    """msgspec encodes NaN as null already; this hook only handles numpy scalars and arrays."""
    import numpy as np

    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"cannot encode {type(value).__name__}")


_numpy_encoder = msgspec.json.Encoder(enc_hook=_float_safe)


def to_json_bytes(payload: Any) -> bytes:
    """JSON of a view's answer (numpy scalars and arrays allowed; NaN becomes null)."""
    return _numpy_encoder.encode(payload)
