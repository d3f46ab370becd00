"""CustomResourceDefinitions through the Python client: a CRD created with ApiextensionsV1Api, its
resource found and used by the dynamic client (discovery, create, get, list, patch, status, scale,
delete), schema errors as 422 with causes, and the objects gone with the CRD."""
import time
import uuid

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException
from kubernetes.dynamic import DynamicClient
from kubernetes.dynamic.exceptions import ResourceNotFoundError


def crd_body(group, plural, kind):
    schema = {
        "openAPIV3Schema": {
            "type": "object",
            "properties": {
                "spec": {
                    "type": "object",
                    "required": ["size"],
                    "properties": {
                        "size": {"type": "integer", "minimum": 1},
                        "replicas": {"type": "integer", "default": 1},
                        "mode": {"type": "string", "enum": ["fast", "slow"]},
                    },
                },
                "status": {"type": "object", "properties": {"replicas": {"type": "integer"}, "ready": {"type": "boolean"}}},
            },
        }
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": plural, "singular": kind.lower(), "kind": kind},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": schema,
                    "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}},
                    "additionalPrinterColumns": [{"name": "Size", "type": "integer", "jsonPath": ".spec.size"}],
                }
            ],
        },
    }


@pytest.fixture
def crd(api_client):
    group = "py-" + uuid.uuid4().hex[:8] + ".example.com"
    ext = client.ApiextensionsV1Api(api_client)
    ext.create_custom_resource_definition(crd_body(group, "boxes", "Box"))
    deadline = time.time() + 10
    while time.time() < deadline:
        got = ext.read_custom_resource_definition(f"boxes.{group}")
        if any(c.type == "Established" and c.status == "True" for c in got.status.conditions or []):
            break
        time.sleep(0.05)
    yield group
    try:
        ext.delete_custom_resource_definition(f"boxes.{group}")
    except ApiException as err:
        assert err.status == 404


def test_dynamic_client_round_trip(api_client, crd, namespace):
    dyn = DynamicClient(api_client)
    boxes = dyn.resources.get(api_version=f"{crd}/v1", kind="Box")
    created = boxes.create(body={"apiVersion": f"{crd}/v1", "kind": "Box", "metadata": {"name": "b1"}, "spec": {"size": 3, "junk": 1}}, namespace=namespace)
    assert created.spec.size == 3
    assert created.spec.replicas == 1
    assert "junk" not in created.spec

    assert [b.metadata.name for b in boxes.get(namespace=namespace).items] == ["b1"]
    patched = boxes.patch(name="b1", namespace=namespace, body={"spec": {"mode": "fast"}}, content_type="application/merge-patch+json")
    assert patched.spec.mode == "fast"
    assert patched.metadata.generation == 2

    status = dyn.resources.get(api_version=f"{crd}/v1", kind="Box").subresources["status"]
    updated = status.patch(name="b1", namespace=namespace, body={"status": {"ready": True, "replicas": 1}}, content_type="application/merge-patch+json")
    assert updated.status.ready is True

    scale = boxes.subresources["scale"]
    got = scale.get(name="b1", namespace=namespace)
    assert got.spec.replicas == 1 and got.status.replicas == 1
    scale.patch(name="b1", namespace=namespace, body={"spec": {"replicas": 3}}, content_type="application/merge-patch+json")
    assert boxes.get(name="b1", namespace=namespace).spec.replicas == 3

    boxes.delete(name="b1", namespace=namespace)
    assert boxes.get(namespace=namespace).items == []


def test_schema_errors_are_422_with_causes(api_client, crd, namespace):
    dyn = DynamicClient(api_client)
    boxes = dyn.resources.get(api_version=f"{crd}/v1", kind="Box")
    with pytest.raises(ApiException) as err:
        boxes.create(body={"apiVersion": f"{crd}/v1", "kind": "Box", "metadata": {"name": "bad"}, "spec": {"size": 0, "mode": "warp"}}, namespace=namespace)
    assert err.value.status == 422
    body = err.value.body if isinstance(err.value.body, str) else err.value.body.decode()
    assert 'spec.mode: Unsupported value: \\"warp\\": supported values: \\"fast\\", \\"slow\\"' in body
    assert "spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1" in body


def test_objects_go_with_their_crd(api_client, crd, namespace):
    dyn = DynamicClient(api_client)
    boxes = dyn.resources.get(api_version=f"{crd}/v1", kind="Box")
    boxes.create(body={"apiVersion": f"{crd}/v1", "kind": "Box", "metadata": {"name": "doomed"}, "spec": {"size": 1}}, namespace=namespace)
    client.ApiextensionsV1Api(api_client).delete_custom_resource_definition(f"boxes.{crd}")
    deadline = time.time() + 10
    while time.time() < deadline:
        try:
            client.ApiextensionsV1Api(api_client).read_custom_resource_definition(f"boxes.{crd}")
        except ApiException as err:
            assert err.status == 404
            break
        time.sleep(0.05)
    dyn.resources.invalidate_cache()
    with pytest.raises(ResourceNotFoundError):
        DynamicClient(api_client).resources.get(api_version=f"{crd}/v1", kind="Box")
