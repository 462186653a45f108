"""Puts this checkout's package first on sys.path, so the tests run the code beside them
whether started from clients/python or from the repository root
(``python3 -m unittest discover -s clients/python/tests``)."""

import os
import sys

CLIENT_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if CLIENT_DIR not in sys.path:
    sys.path.insert(0, CLIENT_DIR)
