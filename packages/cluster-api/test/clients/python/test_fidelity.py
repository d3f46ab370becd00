"""The Python client as it really talks: `watch=True` and every boolean as `True`/`False`, watches
through watch.Watch().stream, create_from_yaml over multi-document YAML (and its conflict path, whose
exceptions carry kube-apiserver's exact Status bytes), error bodies compared byte for byte."""
import json
import threading
import time

import pytest
from kubernetes import client, utils, watch
from kubernetes.client.rest import ApiException


def pod(name, labels=None):
    return client.V1Pod(
        metadata=client.V1ObjectMeta(name=name, labels=labels or {}),
        spec=client.V1PodSpec(containers=[client.V1Container(name="app", image="nginx:1.25")]),
    )


def status_bytes(message, reason, code, details):
    """A failure Status as kube-apiserver writes it: Go's field order, compact, a newline after."""
    body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message, "reason": reason}
    if details is not None:
        body["details"] = details
    body["code"] = code
    return json.dumps(body, separators=(",", ":")) + "\n"


def later(seconds, fn):
    t = threading.Timer(seconds, fn)
    t.start()
    return t


def test_watch_stream_sees_added_modified_deleted(core, namespace):
    core.create_namespaced_pod(namespace, pod("w", {"app": "w"}))
    changes = []

    def change():
        core.patch_namespaced_pod("w", namespace, {"metadata": {"labels": {"step": "two"}}})
        core.delete_namespaced_pod("w", namespace)

    timer = later(1.0, change)
    w = watch.Watch()
    try:
        # The client sends watch=True (and allowWatchBookmarks=True): both must mean what they say.
        for event in w.stream(core.list_namespaced_pod, namespace, allow_watch_bookmarks=True, timeout_seconds=20):
            if event["type"] == "BOOKMARK":
                continue
            changes.append((event["type"], event["object"].metadata.name, (event["object"].metadata.labels or {}).get("step")))
            if event["type"] == "DELETED":
                w.stop()
    finally:
        timer.cancel()
    assert changes == [("ADDED", "w", None), ("MODIFIED", "w", "two"), ("DELETED", "w", "two")]


def test_watch_resumes_from_a_list_resource_version(core, namespace):
    listed = core.list_namespaced_pod(namespace)
    timer = later(0.5, lambda: core.create_namespaced_pod(namespace, pod("late")))
    w = watch.Watch()
    seen = []
    try:
        for event in w.stream(core.list_namespaced_pod, namespace, resource_version=listed.metadata.resource_version, timeout_seconds=20):
            seen.append((event["type"], event["object"].metadata.name))
            w.stop()
    finally:
        timer.cancel()
    assert seen == [("ADDED", "late")]


@pytest.mark.parametrize("value", [True, False])
def test_boolean_parameters_as_the_client_spells_them(core, namespace, value):
    core.create_namespaced_pod(namespace, pod("b"))
    # watch=False is a list; pretty takes the client's own spelling.
    listed = core.list_namespaced_pod(namespace, watch=False, pretty=str(value))
    assert [p.metadata.name for p in listed.items] == ["b"]
    raw = core.list_namespaced_pod(namespace, pretty=str(value), _preload_content=False).data.decode()
    assert raw.startswith('{\n  "kind": "PodList"') == value
    assert raw.endswith("}") if value else raw.endswith("}\n")
    # orphanDependents=True leaves the orphan finalizer for the garbage collector, which then lets go.
    core.delete_namespaced_pod("b", namespace, orphan_dependents=value, grace_period_seconds=0)
    for _ in range(100):
        try:
            core.read_namespaced_pod("b", namespace)
        except ApiException as err:
            assert err.status == 404
            return
        time.sleep(0.1)
    raise AssertionError("the pod was never deleted")


def test_orphan_dependents_false_lifts_the_replication_controller_default(core, namespace):
    rc = client.V1ReplicationController(
        metadata=client.V1ObjectMeta(name="rc"),
        spec=client.V1ReplicationControllerSpec(
            replicas=0, selector={"app": "rc"},
            template=client.V1PodTemplateSpec(metadata=client.V1ObjectMeta(labels={"app": "rc"}), spec=pod("x").spec),
        ),
    )
    core.create_namespaced_replication_controller(namespace, rc)
    # The answer is the object while its orphan finalizer keeps it (the client's model is V1Status: read it raw).
    kept = json.loads(core.delete_namespaced_replication_controller("rc", namespace, orphan_dependents=True, _preload_content=False).data)
    assert kept["metadata"]["finalizers"] == ["orphan"]
    core.create_namespaced_replication_controller(namespace, client.V1ReplicationController(metadata=client.V1ObjectMeta(name="rc2"), spec=rc.spec))
    gone = core.delete_namespaced_replication_controller("rc2", namespace, orphan_dependents=False)
    assert (gone.kind, gone.status, gone.details.name, gone.code) == ("Status", "Success", "rc2", None)


MANIFESTS = """\
apiVersion: v1
kind: ServiceAccount
metadata:
  name: builder
---
apiVersion: v1
kind: Secret
metadata:
  name: creds
stringData:
  token: abc
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector:
    app: web
  ports:
  - port: 80
    targetPort: 8080
---
apiVersion: v1
kind: Pod
metadata:
  name: web
  labels:
    app: web
spec:
  serviceAccountName: builder
  containers:
  - name: app
    image: nginx:1.25
"""


def test_create_from_yaml_multi_document_and_its_conflict_path(api_client, core, namespace, tmp_path):
    manifest = tmp_path / "app.yaml"
    manifest.write_text(MANIFESTS)
    created = utils.create_from_yaml(api_client, str(manifest), namespace=namespace)
    assert [objs[0].metadata.name for objs in created] == ["builder", "creds", "web", "web"]
    assert core.read_namespaced_service("web", namespace).spec.ports[0].target_port == 8080
    assert core.read_namespaced_secret("creds", namespace).data == {"token": "YWJj"}

    with pytest.raises(utils.FailToCreateError) as failure:
        utils.create_from_yaml(api_client, str(manifest), namespace=namespace)
    bodies = [e.body for e in failure.value.api_exceptions]
    assert [e.status for e in failure.value.api_exceptions] == [409, 409, 409, 409]
    assert bodies == [
        status_bytes(f'{kind} "{name}" already exists', "AlreadyExists", 409, {"name": name, "kind": kind})
        for kind, name in [("serviceaccounts", "builder"), ("secrets", "creds"), ("services", "web"), ("pods", "web")]
    ]
    assert 'Error from server (Conflict): {"kind":"Status","apiVersion":"v1"' in str(failure.value)


def test_create_from_yaml_objects_with_an_invalid_one(api_client, namespace):
    bad = [
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "good"}, "spec": {"containers": [{"name": "c", "image": "i"}]}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "Bad_Name"}, "spec": {"containers": [{"name": "c", "image": "i"}]}},
    ]
    with pytest.raises(utils.FailToCreateError) as failure:
        utils.create_from_yaml(api_client, yaml_objects=bad, namespace=namespace)
    (e,) = failure.value.api_exceptions
    body = json.loads(e.body)
    assert (e.status, body["reason"], body["details"]["name"]) == (422, "Invalid", "Bad_Name")
    assert list(body) == ["kind", "apiVersion", "metadata", "status", "message", "reason", "details", "code"]
    assert [list(c) for c in body["details"]["causes"]] == [["reason", "message", "field"]] * len(body["details"]["causes"])
    assert e.body.endswith("}\n")


def test_error_bodies_are_kube_apiserver_bytes(core, api_client, namespace):
    with pytest.raises(ApiException) as missing:
        core.read_namespaced_pod("nope", namespace)
    assert missing.value.body == status_bytes('pods "nope" not found', "NotFound", 404, {"name": "nope", "kind": "pods"})
    assert missing.value.headers["Content-Type"] == "application/json"
    with pytest.raises(ApiException) as unknown:
        api_client.call_api("/api/v1/widgets", "GET", auth_settings=["BearerToken"], _preload_content=False)
    # The body kube-apiserver answers for a resource its served group version does not have.
    assert unknown.value.body.decode() == status_bytes("the server could not find the requested resource", "NotFound", 404, {})
    assert unknown.value.headers["Content-Length"] == "174"


def test_patch_kinds_and_delete(core, namespace):
    core.create_namespaced_pod(namespace, pod("p", {"a": "1"}))
    merged = core.patch_namespaced_pod("p", namespace, {"metadata": {"labels": {"b": "2"}}})
    assert merged.metadata.labels == {"a": "1", "b": "2"}
    # A list body is sent as a JSON patch.
    patched = core.patch_namespaced_pod("p", namespace, [{"op": "replace", "path": "/metadata/labels/a", "value": "9"}])
    assert patched.metadata.labels == {"a": "9", "b": "2"}
    status = core.delete_namespaced_pod("p", namespace, body=client.V1DeleteOptions(grace_period_seconds=0, propagation_policy="Background"))
    # The client's model for the answer is V1Pod; a pod gone at once answers a Status.
    assert status.kind == "Status"
    for _ in range(50):
        if not core.list_namespaced_pod(namespace).items:
            break
        time.sleep(0.1)
    assert core.list_namespaced_pod(namespace).items == []
