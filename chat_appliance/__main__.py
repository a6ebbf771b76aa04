"""`python -m chat_appliance` is the `chat-appliance` command."""

import sys

from chat_appliance.cli.main import main

sys.exit(main())
