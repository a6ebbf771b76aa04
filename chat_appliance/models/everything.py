"""Every model module beyond the base and the organization (MODEL_MODULES, in an order in which
each one's imports come before it). chat_appliance.models imports this module on the first use
of one of their names, so that they load together: a model's backrefs (`realm.streams`,
`user.subscriptions`) exist once any model is in use. Python makes another thread that imports
this module meanwhile wait until it is complete."""

from importlib import import_module

from chat_appliance.models import MODEL_MODULES

for _name in MODEL_MODULES:
    import_module(f"{__package__}.{_name}")
