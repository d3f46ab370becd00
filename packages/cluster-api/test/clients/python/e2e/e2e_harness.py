"""A pytest plugin (``-p e2e_harness``) that lets the python3-kubernetes test modules Debian ships
(``kubernetes/dynamic/test_client.py``, ``test_discovery.py``) import ``kubernetes.e2e_test.base``,
the one module of the client's e2e suite they need and Debian leaves out. The package path of the
installed ``kubernetes`` is extended with ``kubernetes/`` beside this file, which holds only that
module: the configuration the suite runs against, nothing else."""
import os

import kubernetes

_overlay = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kubernetes")
if _overlay not in kubernetes.__path__:
    kubernetes.__path__.append(_overlay)
