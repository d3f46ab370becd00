"""The kinds of issue 18 through the Python client's typed APIs: AppsV1Api Deployments (with /scale
and /status), ConfigMaps (immutable), Nodes (with /status), Events by field selector, Leases, and
`kubernetes.utils.create_from_yaml` of a multi-document file. What the client sends the server must
take; what the server answers the client must deserialize into its models."""
import datetime
import json
import os
import tempfile
import uuid

from kubernetes import client, utils
from kubernetes.client.rest import ApiException
import pytest


@pytest.fixture(scope="session")
def apps(api_client):
    return client.AppsV1Api(api_client)


def deployment(name, replicas=2):
    labels = {"app": name}
    return client.V1Deployment(
        metadata=client.V1ObjectMeta(name=name),
        spec=client.V1DeploymentSpec(
            replicas=replicas,
            selector=client.V1LabelSelector(match_labels=labels),
            template=client.V1PodTemplateSpec(
                metadata=client.V1ObjectMeta(labels=labels),
                spec=client.V1PodSpec(containers=[client.V1Container(name="web", image="nginx:1.25")]),
            ),
        ),
    )


def test_deployment_create_read_patch_scale_delete(apps, namespace):
    created = apps.create_namespaced_deployment(namespace, deployment("web"))
    assert created.spec.strategy.type == "RollingUpdate"
    assert created.spec.strategy.rolling_update.max_surge == "25%"
    assert created.spec.revision_history_limit == 10

    got = apps.read_namespaced_deployment("web", namespace)
    assert got.metadata.uid == created.metadata.uid
    assert got.spec.template.spec.containers[0].image == "nginx:1.25"

    patched = apps.patch_namespaced_deployment("web", namespace, {"spec": {"template": {"spec": {"containers": [{"name": "web", "image": "nginx:1.26"}]}}}})
    assert patched.spec.template.spec.containers[0].image == "nginx:1.26"
    assert patched.metadata.generation == 2

    scale = apps.read_namespaced_deployment_scale("web", namespace)
    assert (scale.spec.replicas, scale.status.selector) == (2, "app=web")
    apps.patch_namespaced_deployment_scale("web", namespace, {"spec": {"replicas": 4}})
    assert apps.read_namespaced_deployment("web", namespace).spec.replicas == 4

    status = apps.patch_namespaced_deployment_status("web", namespace, {"status": {"observedGeneration": 3, "replicas": 4, "readyReplicas": 1}})
    assert (status.status.ready_replicas, status.spec.replicas) == (1, 4)

    assert [d.metadata.name for d in apps.list_namespaced_deployment(namespace).items] == ["web"]
    apps.delete_namespaced_deployment("web", namespace)
    with pytest.raises(ApiException) as err:
        apps.read_namespaced_deployment("web", namespace)
    assert err.value.status == 404


def test_deployment_whose_selector_misses_its_template_is_422(apps, namespace):
    bad = deployment("web")
    bad.spec.selector = client.V1LabelSelector(match_labels={"app": "other"})
    with pytest.raises(ApiException) as err:
        apps.create_namespaced_deployment(namespace, bad)
    assert err.value.status == 422
    causes = json.loads(err.value.body)["details"]["causes"]
    assert [c["field"] for c in causes] == ["spec.template.metadata.labels"]
    assert apps.list_namespaced_deployment(namespace).items == []


def test_configmap_create_read_patch_delete_and_immutability(core, namespace):
    cm = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="settings"), data={"mode": "fast"}, binary_data={"blob": "AAEC"})
    created = core.create_namespaced_config_map(namespace, cm)
    assert (created.data, created.binary_data) == ({"mode": "fast"}, {"blob": "AAEC"})
    patched = core.patch_namespaced_config_map("settings", namespace, {"data": {"mode": "slow"}, "immutable": True})
    assert (patched.data["mode"], patched.immutable) == ("slow", True)
    with pytest.raises(ApiException) as err:
        core.patch_namespaced_config_map("settings", namespace, {"data": {"mode": "other"}})
    assert err.value.status == 422
    assert "field is immutable when `immutable` is set" in json.loads(err.value.body)["message"]
    assert core.read_namespaced_config_map("settings", namespace).data["mode"] == "slow"
    core.delete_namespaced_config_map("settings", namespace)
    assert core.list_namespaced_config_map(namespace).items == []


def test_node_create_read_patch_status_delete(core):
    name = "py-node-" + uuid.uuid4().hex[:6]
    node = client.V1Node(
        metadata=client.V1ObjectMeta(name=name, labels={"node-role.kubernetes.io/worker": ""}),
        status=client.V1NodeStatus(capacity={"cpu": "4", "memory": "8Gi"}, node_info=client.V1NodeSystemInfo(
            machine_id="m", system_uuid="s", boot_id="b", kernel_version="6.1", os_image="Debian", container_runtime_version="containerd://1.7",
            kubelet_version="v1.32.0", kube_proxy_version="", operating_system="linux", architecture="amd64")),
    )
    created = core.create_node(node)
    assert created.status.allocatable == {"cpu": "4", "memory": "8Gi"}
    assert created.status.node_info.kubelet_version == "v1.32.0"
    core.patch_node(name, {"spec": {"unschedulable": True}})
    cordoned = core.list_node(field_selector="spec.unschedulable=true").items
    assert name in [n.metadata.name for n in cordoned]
    ready = core.patch_node_status(name, {"status": {"conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "ok"}]}})
    assert ready.status.conditions[0].type == "Ready"
    core.delete_node(name)
    with pytest.raises(ApiException) as err:
        core.read_node(name)
    assert err.value.status == 404


def test_events_listed_by_involved_object(core, namespace):
    involved = client.V1ObjectReference(kind="Pod", name="web", namespace=namespace, uid="u-1")
    for i, reason in enumerate(["Scheduled", "Pulled"]):
        core.create_namespaced_event(namespace, client.CoreV1Event(
            metadata=client.V1ObjectMeta(name=f"web.{i}"), involved_object=involved, reason=reason, message=reason.lower(), type="Normal"))
    # An event recorded with eventTime (the events.k8s.io model requires one to deserialize).
    core.create_namespaced_event(namespace, client.CoreV1Event(
        metadata=client.V1ObjectMeta(name="other.0"), involved_object=client.V1ObjectReference(kind="Pod", name="other", namespace=namespace), reason="Scheduled", type="Normal",
        event_time=datetime.datetime.now(datetime.timezone.utc), reporting_component="example.com/py", reporting_instance="py-1", action="Schedule", message="placed"))
    found = core.list_namespaced_event(namespace, field_selector="involvedObject.kind=Pod,involvedObject.name=web")
    assert [e.reason for e in found.items] == ["Scheduled", "Pulled"]
    events = client.EventsV1Api(core.api_client).list_namespaced_event(namespace, field_selector="regarding.name=other")
    assert [(e.note, e.regarding.name, e.reporting_controller) for e in events.items] == [("placed", "other", "example.com/py")]


def test_lease_create_renew_conflict(api_client, namespace):
    coordination = client.CoordinationV1Api(api_client)
    lease = client.V1Lease(metadata=client.V1ObjectMeta(name="leader"), spec=client.V1LeaseSpec(holder_identity="a", lease_duration_seconds=15))
    created = coordination.create_namespaced_lease(namespace, lease)
    created.spec.holder_identity = "b"
    renewed = coordination.replace_namespaced_lease("leader", namespace, created)
    assert renewed.spec.holder_identity == "b"
    with pytest.raises(ApiException) as err:
        coordination.replace_namespaced_lease("leader", namespace, created)
    assert (err.value.status, json.loads(err.value.body)["reason"]) == (409, "Conflict")


MULTI_DOCUMENT = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  replicas: 1
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec: {containers: [{name: api, image: "example.com/api:1"}]}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: api-settings
data: {level: info}
---
apiVersion: v1
kind: Service
metadata:
  name: api
spec:
  selector: {app: api}
  ports: [{port: 80}]
"""


def test_create_from_yaml_of_a_multi_document_file(api_client, apps, core, namespace):
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        f.write(MULTI_DOCUMENT)
    try:
        created = utils.create_from_yaml(api_client, f.name, namespace=namespace)
    finally:
        os.unlink(f.name)
    kinds = sorted(obj.kind for group in created for obj in group)
    assert kinds == ["ConfigMap", "Deployment", "Service"]
    assert apps.read_namespaced_deployment("api", namespace).spec.selector.match_labels == {"app": "api"}
    assert core.read_namespaced_config_map("api-settings", namespace).data == {"level": "info"}
