"""In-process event delivery: actions publish after commit, queues subscribe."""
