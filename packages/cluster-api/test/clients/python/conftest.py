"""Fixtures for the Python client tests: a client from $KUBECONFIG (the server's generated
kubeconfig: TLS with its CA, the admin token) and a fresh namespace per test."""
import os
import uuid

import pytest
from kubernetes import client, config


@pytest.fixture(scope="session")
def api_client():
    return config.new_client_from_config(config_file=os.environ["KUBECONFIG"])


@pytest.fixture(scope="session")
def core(api_client):
    return client.CoreV1Api(api_client)


@pytest.fixture
def namespace(core):
    name = "py-" + uuid.uuid4().hex[:10]
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
    yield name
    core.delete_namespace(name)
