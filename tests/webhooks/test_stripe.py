"""Stripe's integration: events (tests/data/webhooks/stripe/, written from Stripe's documented event
objects) must give Zulip's topic and message exactly, and the events Zulip leaves out post
nothing."""

import json
import time

import pytest

from ..support.webhook_helpers import Case, check_case, check_ignored, fixture_body, incoming_bot, messages_from, post_payload

CUS = "cus_RkP3xT9vQ2mWzA"
DASH = "https://dashboard.stripe.com"
CHARGE = f"[Charge]({DASH}/charges/ch_3QhTa2Kx8PbTWd3a0c1E7f2B)"
CUSTOMER = f"[Customer]({DASH}/customers/{CUS})"
SUB = f"[Subscription]({DASH}/subscriptions/sub_1QhTg2Kx8PbTWd3aWx3Yz5Ab)"
INVOICE = f"[Invoice]({DASH}/invoices/in_1QhTh5Kx8PbTWd3aBc7De9Fg)"
ITEM = f"[Invoice item]({DASH}/invoiceitems/ii_1QhTi8Kx8PbTWd3aHj1Kl3Mn)"

CASES = [
    Case("charge_succeeded", CUS, f"{CHARGE} for 42.50 EUR succeeded"),
    Case("charge_succeeded_usd", CUS, f"[Charge]({DASH}/charges/ch_3QhTb7Kx8PbTWd3a1rT6uV0w) for $19.99 succeeded"),
    Case("charge_succeeded_jpy_no_customer", "charges",
         f"[Charge]({DASH}/charges/ch_3QhTc1Kx8PbTWd3a2yZ8aB1c) for 3500 JPY succeeded"),
    Case("charge_failed", CUS, f"{CHARGE} for 42.50 EUR failed. Failure code: card_declined"),
    Case("payment_succeeded", CUS, f"[Payment]({DASH}/payments/py_1QhTd4Kx8PbTWd3a3dE2fG5h) for 120.00 EUR succeeded"),
    Case("charge_dispute_created", "disputes",
         f"[Dispute]({DASH}/disputes/dp_1QhTe6Kx8PbTWd3a4hI8jK2l) created. Current status: needs response."),
    Case("charge_dispute_closed", "disputes",
         f"[Dispute]({DASH}/disputes/dp_1QhTe6Kx8PbTWd3a4hI8jK2l) closed. Current status: won."),
    Case("charge_refund_updated", "refunds",
         f"A [refund]({DASH}/refunds/re_3QhTa2Kx8PbTWd3a0mN4oP6q) for a "
         f"[charge]({DASH}/charges/ch_3QhTa2Kx8PbTWd3a0c1E7f2B) of 20.00 EUR was updated."),
    Case("customer_created", CUS, f"{CUSTOMER} created"),
    Case("customer_created_email_metadata", CUS, f"{CUSTOMER} created\nEmail: lotte@example.org\nloyalty_tier: gold"),
    Case("customer_deleted", CUS, f"{CUSTOMER} deleted"),
    Case("customer_updated", CUS, f"{CUSTOMER} updated\n* Balance is now -500\n* Email is now lotte.brandt@example.org"),
    Case("customer_discount_created", CUS,
         f"Discount created ([Winter crossing 25% off]({DASH}/coupons/WINTER25))."),
    Case("customer_subscription_created", CUS,
         f"{SUB} created\nPlan: [Commuter monthly]({DASH}/plans/price_1QhT0aKx8PbTWd3aMonthly)\nQuantity: 2\n"
         "Billing method: charge automatically"),
    Case("customer_subscription_created_no_nickname", CUS,
         f"{SUB} created\nPlan: {DASH}/plans/price_1QhT0aKx8PbTWd3aMonthly\nQuantity: 1"),
    Case("customer_subscription_deleted", CUS, f"{SUB} deleted"),
    Case("customer_subscription_updated", CUS,
         f"{SUB} updated\n* Cancel at period end is now True\n"
         "* Current period end is now <time:2026-01-31T08:10:00+00:00>\n* Status is now past_due"),
    Case("invoice_created", CUS, f"{INVOICE} created (subscription cycle)\nTotal: 58.00 EUR\nAmount due: 58.00 EUR"),
    Case("invoice_payment_failed", CUS, f"{INVOICE} payment failed"),
    Case("invoice_updated_paid", CUS, f"{INVOICE} is now paid"),
    Case("invoice_updated", CUS, f"{INVOICE} updated\n* Amount due is now 5200\n* Status is now open"),
    Case("invoice_upcoming", CUS, "Upcoming invoice created"),
    Case("invoiceitem_created", CUS, f"{ITEM} created for 12.50 EUR"),
    Case("invoiceitem_updated", CUS, f"{ITEM} updated\n* Amount is now 2500\n* Quantity is now 2"),
    Case("account_updated", "account updates", "* Charges enabled is now True"),
    Case("charge_succeeded", "payments", f"{CHARGE} for 42.50 EUR succeeded", query={"topic": "payments"}),
]


@pytest.mark.parametrize("case", CASES, ids=[f"{c.fixture}{'-topic' if c.query else ''}" for c in CASES])
def test_stripe_event(org, flask_client, case):
    """Does this Stripe event post Zulip's topic and message?"""
    check_case(org, flask_client, "stripe", case)


def test_stripe_trial_will_end(org, flask_client):
    """Is a trial's end told in days from now, rounded, as Zulip tells it?"""
    bot_id, key = incoming_bot(org)
    event = json.loads(fixture_body("stripe", "customer_subscription_trial_will_end"))
    event["data"]["object"]["trial_end"] = int(time.time()) + 3 * 24 * 3600 + 100
    response = post_payload(flask_client, "stripe", key, event, stream="Denmark")
    assert response.status_code == 200, response.get_json()
    assert [(m.topic, m.content) for m in messages_from(bot_id)] == [(CUS, f"{SUB} trial will end in 3 days")]


@pytest.mark.parametrize("fixture", ["payout_paid", "account_updated_without_previous_attributes",
                                     "customer_updated_delinquent_only"])
def test_stripe_events_zulip_leaves_out(org, flask_client, fixture):
    """Are a payout, an account update without its previous attributes, and a customer update
    changing only what Zulip leaves out accepted, posting nothing?"""
    body = check_ignored(org, flask_client, "stripe", fixture)
    assert body["msg"] == ""


def test_stripe_unsupported_event(org, flask_client):
    """Is an event of a handled area that Zulip does not word answered with its success note?"""
    body = check_ignored(org, flask_client, "stripe", "customer_bank_account_created")
    assert body["msg"] == ("The 'customer.bank_account.created' event isn't currently supported by the Stripe "
                           "webhook; ignoring")


def test_stripe_filters_by_event_type(org, flask_client):
    """Do only_events= and exclude_events= filter on the event's type?"""
    bot_id, key = incoming_bot(org)
    for fixture in ("charge_succeeded", "invoice_created", "customer_created"):
        post_payload(flask_client, "stripe", key, fixture_body("stripe", fixture), stream="Denmark",
                     only_events='["charge.*", "invoice.*"]', exclude_events='["invoice.created"]')
    assert [m.content for m in messages_from(bot_id)] == [f"{CHARGE} for 42.50 EUR succeeded"]
