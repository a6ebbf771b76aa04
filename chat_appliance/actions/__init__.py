"""State changes. `do_*` functions change state in one transaction and publish events after
commit; `check_*` functions validate first. No HTTP here: views call these."""
