"""Metadata-only reads through the Python client's own machinery: call_api with the Accept header
client-go's metadata client sends (JSON part; this client release has no PartialObjectMetadata model,
so ObjectMeta is read into V1ObjectMeta); a metadata-only watch through watch.Watch().stream."""
import json
import threading

from kubernetes import client, watch

ONE = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"
LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"


def pod(name):
    return client.V1Pod(
        metadata=client.V1ObjectMeta(name=name, labels={"app": name}, annotations={"note": "n"}),
        spec=client.V1PodSpec(containers=[client.V1Container(name="app", image="nginx:1.25")]),
    )


def metadata_call(api_client, path, accept, response_type, **query):
    camel = lambda k: k.split("_")[0] + "".join(w.title() for w in k.split("_")[1:])  # timeout_seconds → timeoutSeconds
    params = [(camel(k), v) for k, v in query.items() if not k.startswith("_")]
    opts = {k: v for k, v in query.items() if k.startswith("_")}
    return api_client.call_api(
        path, "GET", query_params=params, header_params={"Accept": accept},
        response_type=response_type, auth_settings=["BearerToken"], _return_http_data_only=True, **opts,
    )


def test_get_and_list_metadata(api_client, core, namespace):
    core.create_namespaced_pod(namespace, pod("m1"))
    core.create_namespaced_pod(namespace, pod("m2"))
    one = json.loads(metadata_call(api_client, f"/api/v1/namespaces/{namespace}/pods/m1", ONE, None, _preload_content=False).data)
    assert (one["kind"], one["apiVersion"], one["metadata"]["name"], one["metadata"]["annotations"]) == ("PartialObjectMetadata", "meta.k8s.io/v1", "m1", {"note": "n", "openshift.io/scc": "anyuid"})
    assert set(one) == {"kind", "apiVersion", "metadata"}
    # The metadata deserializes into the client's own ObjectMeta model.
    meta = api_client._ApiClient__deserialize(one["metadata"], "V1ObjectMeta")
    assert (meta.name, meta.namespace, meta.labels) == ("m1", namespace, {"app": "m1"})
    page = json.loads(metadata_call(api_client, f"/api/v1/namespaces/{namespace}/pods", LIST, None, limit=1, _preload_content=False).data)
    assert page["kind"] == "PartialObjectMetadataList"
    assert [i["metadata"]["name"] for i in page["items"]] == ["m1"]
    assert page["metadata"]["remainingItemCount"] == 1 and page["metadata"]["continue"]
    rest = json.loads(metadata_call(api_client, f"/api/v1/namespaces/{namespace}/pods", LIST, None, _preload_content=False, **{"continue": page["metadata"]["continue"]}).data)
    assert [i["metadata"]["name"] for i in rest["items"]] == ["m2"]
    assert all(set(item) == {"kind", "apiVersion", "metadata"} for item in rest["items"])


def test_metadata_watch_through_watch_stream(api_client, core, namespace):
    path = f"/api/v1/namespaces/{namespace}/pods"

    def watch_metadata(**kwargs):
        # watch.Watch().stream adds watch=True and _preload_content=False, as for any list function.
        return metadata_call(api_client, path, ONE, None, **kwargs)

    timer = threading.Timer(0.5, lambda: core.create_namespaced_pod(namespace, pod("w1")))
    timer.start()
    seen = []
    w = watch.Watch()
    try:
        for event in w.stream(watch_metadata, timeout_seconds=20):
            seen.append((event["type"], event["object"]["kind"], event["object"]["metadata"]["name"], "spec" in event["object"]))
            w.stop()
    finally:
        timer.cancel()
    assert seen == [("ADDED", "PartialObjectMetadata", "w1", False)]
