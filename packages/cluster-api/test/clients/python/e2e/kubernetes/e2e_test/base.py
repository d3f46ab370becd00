"""``kubernetes.e2e_test.base`` for the client's own e2e tests: ``get_e2e_configuration()`` returns a
client Configuration loaded from $KUBECONFIG (the test server's kubeconfig: its URL, CA and token), as
the client's e2e suite does; without one the tests are skipped with the reason."""
import copy
import os
import unittest

from kubernetes.client.configuration import Configuration
from kubernetes.config import kube_config


def get_e2e_configuration():
    config = copy.copy(Configuration())
    config.host = None
    path = os.environ.get("KUBECONFIG", "")
    if path and os.path.exists(path):
        kube_config.load_kube_config(config_file=path, client_configuration=config)
    if config.host is None:
        raise unittest.SkipTest("no kubeconfig of a running server in $KUBECONFIG")
    print("Running test against : %s" % config.host)
    return config
