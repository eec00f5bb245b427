"""``python -m hermes_memory.cli``: the same as the ``hermes-memory`` command."""

import sys

from hermes_memory.cli import main

sys.exit(main())
