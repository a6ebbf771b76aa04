"""Stripe: events about charges, disputes, refunds, customers, subscriptions, discounts, invoices
and invoice items, each in the customer's topic when it has one ("charges", "disputes",
"refunds" otherwise), worded as Zulip words them. Events of Stripe Connect, payouts, products
and the other areas Zulip leaves out are accepted and post nothing."""

from __future__ import annotations

import time
from collections.abc import Iterable
from datetime import datetime, timezone

from chat_appliance.integrations.base import ANY_EVENT, Integration, UnsupportedEvent, WebhookRequest


class Suppressed(Exception):
    """An event Zulip knowingly posts nothing for."""


# Areas (an event type's first part) Zulip posts nothing for: Stripe Connect, balances, payouts,
# catalogue and reporting events.
SUPPRESSED_CATEGORIES = {"application_fee", "balance", "checkout_beta", "coupon", "payment_intent", "payout",
                         "plan", "product", "recipient", "reporting", "review", "sigma", "sku", "source",
                         "subscription_schedule", "topup", "transfer"}
SUPPRESSED_PREFIXES = ("issuing", "order")

# Currencies Stripe counts in whole units (no cents).
ZERO_DECIMAL_CURRENCIES = {"bif", "djf", "jpy", "krw", "pyg", "vnd", "xaf", "xpf", "clp", "gnf", "kmf", "mga", "rwf",
                           "vuv", "xof"}

# An object id's prefix -> its name and its path in Stripe's dashboard (None: no page of its own).
OBJECTS: dict[str, tuple[str, str | None]] = {
    "ch": ("Charge", "charges"), "cus": ("Customer", "customers"), "dp": ("Dispute", "disputes"),
    "du": ("Dispute", "disputes"), "file": ("File", "files"), "link": ("File link", "file_links"),
    "pi": ("Payment intent", "payment_intents"), "po": ("Payout", "payouts"), "prod": ("Product", "products"),
    "re": ("Refund", "refunds"), "tok": ("Token", "tokens"), "ba": ("Bank account", None), "card": ("Card", None),
    "src": ("Source", None), "in": ("Invoice", "invoices"), "ii": ("Invoice item", "invoiceitems"),
    "sub": ("Subscription", "subscriptions"), "si": ("Subscription item", "subscription_items"),
    "mbur": ("Usage record", None), "py": ("Payment", "payments"), "pyr": ("Refund", "refunds"),
}

# An integer in this range is a Unix time (2017 to 2033), shown as a global time.
TIMESTAMP_RANGE = (1500000000, 2000000000)
DAY_SECONDS = 24 * 60 * 60


def amount_string(amount: int, currency: str) -> str:
    decimal = str(amount) if currency in ZERO_DECIMAL_CURRENCIES else f"{amount * 0.01:.02f}"
    return f"${decimal}" if currency == "usd" else f"{decimal} {currency.upper()}"


def linkified_id(object_id: str, lower: bool = False) -> str:
    name, path = OBJECTS[object_id.split("_")[0]]
    if lower:
        name = name.lower()
    return name if path is None else f"[{name}](https://dashboard.stripe.com/{path}/{object_id})"


def stringify(value) -> str:
    """A changed attribute's value as Zulip shows it: Python's str() (True, None, {'a': 1}), or a
    global time for a Unix time."""
    if isinstance(value, int) and not isinstance(value, bool) and TIMESTAMP_RANGE[0] < value < TIMESTAMP_RANGE[1]:
        return f"<time:{datetime.fromtimestamp(value, tz=timezone.utc).isoformat()}>"
    return str(value)


def update_lines(data, obj, excluded: Iterable[str] = ()) -> str:
    """"* <Attribute> is now <value>", one line per changed attribute, in name order."""
    changed = set(data["previous_attributes"]) - set(excluded)
    if not changed:
        raise Suppressed()
    return "".join(f"\n* {name.replace('_', ' ').capitalize()} is now {stringify(obj[name])}"
                   for name in sorted(changed))


def topic_and_body(payload) -> tuple[str, str]:
    event_type = payload["type"]
    parts = event_type.split(".")
    if len(parts) == 3:
        category, resource, event = parts
    else:
        resource, event = parts
        category = resource
    data = payload["data"]
    obj = data["object"]
    topic = obj.get("customer") or ""
    body: str | None = None

    def default_body(excluded: Iterable[str] = ()) -> str:
        text = f"{linkified_id(obj['id'])} {event.replace('_', ' ')}"
        return text + update_lines(data, obj, excluded) if event == "updated" else text

    if category == "account":
        if resource != "account" or event != "updated" or "previous_attributes" not in data:
            raise Suppressed()
        topic, body = "account updates", update_lines(data, obj)
    if category in SUPPRESSED_CATEGORIES or category.startswith(SUPPRESSED_PREFIXES):
        raise Suppressed()
    if category == "charge":
        if resource == "charge":
            topic = topic or "charges"
            body = f"{linkified_id(obj['id'])} for {amount_string(obj['amount'], obj['currency'])} {event}"
            if obj["failure_code"]:
                body += f". Failure code: {obj['failure_code']}"
        if resource == "dispute":
            topic = "disputes"
            body = default_body() + f". Current status: {obj['status'].replace('_', ' ')}."
        if resource == "refund":
            topic = "refunds"
            body = (f"A {linkified_id(obj['id'], lower=True)} for a {linkified_id(obj['charge'], lower=True)} of "
                    f"{amount_string(obj['amount'], obj['currency'])} was updated.")
    if category == "customer":
        if resource == "customer":
            topic = obj["id"]
            body = default_body(excluded=("delinquent", "currency", "default_source"))
            if event == "created":
                if obj["email"]:
                    body += f"\nEmail: {obj['email']}"
                for key, value in (obj["metadata"] or {}).items():
                    body += f"\n{key}: {value}"
        if resource == "discount":
            coupon = obj["coupon"]
            body = (f"Discount {event.replace('_', ' ')} "
                    f"([{coupon['name']}](https://dashboard.stripe.com/coupons/{coupon['id']})).")
        if resource == "source":
            body = default_body()
        if resource == "subscription":
            body = default_body()
            if event == "trial_will_end":
                # Stripe sends it three days before the trial's end; counted from now, rounded.
                days = int((obj["trial_end"] - time.time() + DAY_SECONDS // 2) // DAY_SECONDS)
                body += f" in {days} days"
            if event == "created":
                plan = obj["plan"]
                if plan:
                    if plan["nickname"] is not None:
                        body += f"\nPlan: [{plan['nickname']}](https://dashboard.stripe.com/plans/{plan['id']})"
                    else:
                        body += f"\nPlan: https://dashboard.stripe.com/plans/{plan['id']}"
                if obj["quantity"]:
                    body += f"\nQuantity: {obj['quantity']}"
                if "billing" in obj:
                    body += f"\nBilling method: {obj['billing'].replace('_', ' ')}"
    if category == "file":
        topic = "files"
        body = default_body() + f" ({obj['purpose'].replace('_', ' ')}). \nTitle: {obj['title']}"
    if category == "invoice":
        if event == "upcoming":
            body = "Upcoming invoice created"
        elif (event == "updated" and data["previous_attributes"].get("paid") is False and obj["paid"] is True
              and obj["amount_paid"] != 0 and obj["amount_remaining"] == 0):
            body = f"[Invoice](https://dashboard.stripe.com/invoices/{obj['id']}) is now paid"
        else:
            body = default_body(excluded=("lines", "description", "number", "finalized_at", "status_transitions",
                                          "payment_intent"))
        if event == "created":
            body += (f" ({obj['billing_reason'].replace('_', ' ')})\n"
                     f"Total: {amount_string(obj['total'], obj['currency'])}\n"
                     f"Amount due: {amount_string(obj['amount_due'], obj['currency'])}")
    if category == "invoiceitem":
        body = default_body(excluded=("description", "invoice"))
        if event == "created":
            body += f" for {amount_string(obj['amount'], obj['currency'])}"
    if body is None:
        raise UnsupportedEvent(event_type)
    return topic, body


def format_event(hook: WebhookRequest) -> tuple[str, str] | None:
    try:
        return topic_and_body(hook.payload)
    except Suppressed:
        return None


INTEGRATION = Integration(
    name="stripe",
    display_name="Stripe",
    description="Stripe: charges, disputes, refunds, customers, subscriptions, discounts, invoices and invoice items.",
    find_event=lambda hook: hook.payload["type"],
    formatters={ANY_EVENT: format_event},
    doc_url="https://docs.stripe.com/webhooks",
)
