"""Type aliases shared by the annotations of actions/, lib/, events/, db/ and server/.

Only for annotations: JSON objects that arrive from clients or leave as API dictionaries are
arbitrary in shape, so they are typed as plain dictionaries of Any rather than one TypedDict
per shape."""

from typing import Any, Callable

# A JSON object: an API response or event dictionary, a decoded request parameter.
JSONDict = dict[str, Any]
# A request parameter's parser (lib/validators.py): (parameter name, value as sent) -> the parsed
# value, or ParamError.
Parser = Callable[[str, Any], Any]
