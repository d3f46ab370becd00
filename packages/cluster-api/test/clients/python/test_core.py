"""CoreV1Api round trips through the Python client: what it sends, the server must take; what the
server answers, the client must deserialize into its models."""
from kubernetes import client
from kubernetes.client.rest import ApiException
import pytest


def pod(name, labels=None):
    return client.V1Pod(
        metadata=client.V1ObjectMeta(name=name, labels=labels or {}),
        spec=client.V1PodSpec(containers=[client.V1Container(name="app", image="nginx:1.25")]),
    )


def test_pod_create_get_list_patch_delete(core, namespace):
    created = core.create_namespaced_pod(namespace, pod("web", {"tier": "front"}))
    assert created.metadata.uid
    assert created.status.phase == "Pending"

    got = core.read_namespaced_pod("web", namespace)
    assert got.spec.containers[0].image == "nginx:1.25"

    core.create_namespaced_pod(namespace, pod("db", {"tier": "back"}))
    front = core.list_namespaced_pod(namespace, label_selector="tier=front")
    assert [p.metadata.name for p in front.items] == ["web"]

    patched = core.patch_namespaced_pod("web", namespace, {"metadata": {"labels": {"patched": "yes"}}})
    assert patched.metadata.labels == {"tier": "front", "patched": "yes"}

    core.delete_namespaced_pod("web", namespace)
    with pytest.raises(ApiException) as err:
        core.read_namespaced_pod("web", namespace)
    assert err.value.status == 404


def test_invalid_object_is_422_with_causes(core, namespace):
    bad = client.V1Pod(metadata=client.V1ObjectMeta(name="Bad_Name"), spec=client.V1PodSpec(containers=[]))
    with pytest.raises(ApiException) as err:
        core.create_namespaced_pod(namespace, bad)
    assert err.value.status == 422
    assert '"reason":"Invalid"' in err.value.body.replace(" ", "")


def test_secret_and_service_round_trip(core, namespace):
    core.create_namespaced_secret(namespace, client.V1Secret(metadata=client.V1ObjectMeta(name="s"), string_data={"k": "v"}))
    assert core.read_namespaced_secret("s", namespace).data == {"k": "dg=="}
    svc = client.V1Service(
        metadata=client.V1ObjectMeta(name="web"),
        spec=client.V1ServiceSpec(selector={"app": "web"}, ports=[client.V1ServicePort(port=80, target_port=8080)]),
    )
    made = core.create_namespaced_service(namespace, svc)
    assert made.spec.cluster_ip
    assert made.spec.ports[0].target_port == 8080
