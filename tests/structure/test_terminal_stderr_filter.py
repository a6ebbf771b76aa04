"""The zulip-terminal test tolerates one known client-side race on stderr and nothing else.
These check that filter on the shapes CI has printed: interleaved tracebacks of two threads."""

from ..support.clients import unexplained_errors

FRAME = '  File "/venv/lib/python3.10/site-packages/zulipterminal/core.py", line 182, in update_screen\n'
THREADING = '  File "/usr/lib/python3.10/threading.py", line 1016, in _bootstrap_inner\n'


def race(thread):
    return (f"Exception in thread {thread}:\nTraceback (most recent call last):\n{THREADING}    self.run()\n"
            f"{FRAME}    assert hasattr(self, \"_update_pipe\")\nAssertionError\n")


def test_one_thread_dying_of_the_race_is_explained():
    assert unexplained_errors(race("Thread-6 (update_user_list)")) == ""


def test_two_interleaved_tracebacks_are_explained():
    # As printed by a CI run: the second header's name lands inside a frame line and its colon
    # stands alone on a later line.
    interleaved = (
        "Exception in thread Exception in thread Thread-6 (update_user_list):\n"
        "Traceback (most recent call last):\n" + THREADING + "    self.run()\n"
        + '  File "/venv/lib/python3.10/site-packages/zulipterminal/ui_tools/views.py", line 735, in update_user_list\n'
        "Thread-2 (_start_presence_updates)    self.view.controller.update_screen()\n"
        + FRAME + '    assert hasattr(self, "_update_pipe")\nAssertionError\n:\n'
        + race("x").split(":\n", 1)[1])
    assert unexplained_errors(interleaved) == ""


def test_any_other_error_is_reported():
    other = race("Thread-3 (poll)") + "Traceback (most recent call last):\n  File \"x.py\", line 1, in f\nKeyError: 'stream_id'\n"
    left = unexplained_errors(other)
    assert "KeyError: 'stream_id'" in left and 'File "x.py"' in left
    assert unexplained_errors("Traceback (most recent call last):\nValueError\n")
    assert unexplained_errors("a warning, no traceback\n") == ""
