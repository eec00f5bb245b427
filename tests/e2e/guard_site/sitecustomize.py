"""Put this directory on PYTHONPATH and every Python process started with it stays on loopback (and, with
E2E_IMPORT_LOG set, records which watched packages it imports: see import_watch)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import import_watch
import offline_guard

offline_guard.install()
import_watch.install()
