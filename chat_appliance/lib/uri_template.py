"""A validator for RFC 6570 URL templates (levels 1-4), as linkifiers use them."""

from __future__ import annotations

import re

# Expression operators (section 2.2): level 2 + #, level 3 . / ; ? &, and = , ! @ | reserved.
OPERATORS = "+#./;?&=,!@|"
VARNAME = r"(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})(?:\.?(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2}))*"
VARSPEC = re.compile(rf"^({VARNAME})(?::[1-9][0-9]{{0,3}}|\*)?$")
# Literal characters may not be CTL, SP, DQUOTE, ', %, <, >, \, ^, `, {, |, } (section 2.1),
# except % starting a pct-encoded triplet.
FORBIDDEN_LITERAL = set(" \"'<>\\^`{|}")


class InvalidTemplate(ValueError):
    """The text is not an RFC 6570 template."""


def template_variables(template: str) -> list[str]:
    """The variable names of a valid template, in order; raises InvalidTemplate."""
    names = []
    index = 0
    while index < len(template):
        char = template[index]
        if char == "{":
            end = template.find("}", index)
            if end == -1:
                raise InvalidTemplate("unclosed expression")
            body = template[index + 1:end]
            if body[:1] in OPERATORS:
                if body[0] in "=,!@|":
                    raise InvalidTemplate(f"reserved operator {body[0]!r}")
                body = body[1:]
            for spec in body.split(","):
                match = VARSPEC.match(spec)
                if not match:
                    raise InvalidTemplate(f"bad variable {spec!r}")
                names.append(match.group(1))
            index = end + 1
            continue
        if char == "}" or char in FORBIDDEN_LITERAL or ord(char) < 32 or ord(char) == 127:
            raise InvalidTemplate(f"character {char!r} not allowed")
        if char == "%" and not re.match(r"%[0-9A-Fa-f]{2}", template[index:index + 3]):
            raise InvalidTemplate("bad percent-encoding")
        index += 1
    return names
