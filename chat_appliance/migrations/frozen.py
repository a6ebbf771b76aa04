"""The one way a migration states the models it needs: frozen as they are at its version.

A migration never imports chat_appliance.models: the live models move on, and a migration that
read them would make a different schema on a new database than it made on the ones it already
ran on. Instead it declares its own classes on a `Frozen` of the database it runs on:

    frozen = Frozen(database)
    UserProfile = frozen.table("user_profile")   # a table an earlier migration made

    class Draft(frozen.Model):
        user_profile = ForeignKeyField(UserProfile, on_delete="CASCADE")
        ...

        class Meta:
            table_name = "draft"

    frozen.create(Draft)

Every frozen class names its table, and peewee derives its index names from that table name: a
name derived from the class name would change the schema whenever someone renamed a class. (The
migrations made before this helper existed that named indexes after their class, as shipped, say
so in their Meta with `legacy_table_names = True`, and keep their class names.)
"""

from peewee import Model


def _unnamed(model_class):
    raise TypeError(f"frozen model {model_class.__name__} must name its table (class Meta: table_name = ...)")


class Frozen:
    """The frozen models of one migration, bound to the database the migration runs on."""

    def __init__(self, database):
        self.database = database
        bound = database  # a class body cannot read a name it also assigns

        class FrozenModel(Model):
            class Meta:
                database = bound
                legacy_table_names = False  # index names from the table's name, not the class's
                table_name = "frozen_model"  # never created; subclasses do not inherit it
                table_function = _unnamed

        self.Model = FrozenModel

    def table(self, name):
        """A stand-in for a table an earlier migration made: a foreign key to it needs only its id."""
        return type(name, (self.Model,), {"Meta": type("Meta", (), {"table_name": name})})

    def tables(self, *names):
        """Stand-ins for several earlier tables, in the order given."""
        return [self.table(name) for name in names]

    def create(self, *models):
        """CREATE TABLE (if not there yet) and their indexes, parents before children."""
        self.database.create_tables(models)
