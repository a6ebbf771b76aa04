"""Type aliases shared by the annotations of actions/, lib/, events/, db/ and server/.

Only for annotations: JSON objects that arrive from clients or leave as API dictionaries are
arbitrary in shape, so they are typed as plain dictionaries of Any rather than one TypedDict
per shape."""

from typing import Any

# A JSON object: an API response or event dictionary, a decoded request parameter.
JSONDict = dict[str, Any]
