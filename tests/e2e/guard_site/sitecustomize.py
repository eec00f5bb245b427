"""Put this directory on PYTHONPATH and every Python process started with it stays on loopback."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import offline_guard

offline_guard.install()
