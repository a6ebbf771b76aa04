"""Splunk's integration: saved search alerts (tests/data/webhooks/splunk/, written from Splunk's
documented webhook alert action payload) must give Zulip's topic and message exactly."""

import pytest

from ..support.webhook_helpers import Case, check_case


@pytest.mark.parametrize("case", [
    Case("search_one_result", "Harbor API 5xx spike",
         "Splunk alert from saved search:\n* **Search**: [Harbor API 5xx spike](https://splunk.tidewater.example:8000/app/"
         "search/@go?sid=scheduler__admin__search__RMD5a1b2_at_1796390000_42)\n* **Host**: api-1.tidewater.example\n"
         "* **Source**: `/var/log/harbor-api/access.log`\n"
         '* **Raw**: `10.0.0.7 - - [05/Dec/2026:09:14:02 +0000] "GET /tides HTTP/1.1" 503 112`'),
    Case("search_missing_fields", "Nightly export check " + "x" * 36 + "...",
         "Splunk alert from saved search:\n* **Search**: [Nightly export check " + "x" * 60 + "](Missing results_link)\n"
         "* **Host**: batch-1\n* **Source**: `Missing source`\n* **Raw**: `Missing _raw`"),
], ids=str)
def test_splunk_alert(org, flask_client, case):
    """Does this Splunk alert post Zulip's topic and message?"""
    check_case(org, flask_client, "splunk", case)
