"""A text progress bar on stderr for the export and import commands (one line per stage)."""

import sys

BAR_WIDTH = 30


class ProgressBar:
    """Call with (label, done, total); redraws the label's bar in place and ends its line when done."""

    def __init__(self, stream=None):
        self.stream = stream or sys.stderr
        self.current = None

    def __call__(self, label, done, total):
        if label != self.current and self.current is not None:
            self.stream.write("\n")
        self.current = label
        filled = BAR_WIDTH if total == 0 else int(BAR_WIDTH * done / total)
        self.stream.write(f"\r  {label:<14} [{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {done}/{total}")
        self.stream.flush()

    def close(self):
        if self.current is not None:
            self.stream.write("\n")
            self.current = None
