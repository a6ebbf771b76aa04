"""`python -m chat_appliance` is the `chat-appliance` command."""

import sys

from .cli import main

sys.exit(main())
