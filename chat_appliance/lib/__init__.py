"""Pure helpers shared by the views and the actions."""
