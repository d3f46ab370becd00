"""A watch of ConfigMaps through the Python client's Watch helper, which sends `watch=True` (Python's
spelling of the boolean): the server must take it as a watch, as kube-apiserver parses booleans."""
from kubernetes import client, watch


def test_watch_configmaps(core, namespace):
    start = core.list_namespaced_config_map(namespace).metadata.resource_version
    core.create_namespaced_config_map(namespace, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="w1"), data={"a": "1"}))
    core.patch_namespaced_config_map("w1", namespace, {"data": {"a": "2"}})
    core.delete_namespaced_config_map("w1", namespace)
    seen = []
    w = watch.Watch()
    for event in w.stream(core.list_namespaced_config_map, namespace, resource_version=start, timeout_seconds=10):
        seen.append((event["type"], event["object"].metadata.name, (event["object"].data or {}).get("a")))
        if len(seen) == 3:
            w.stop()
    assert seen == [("ADDED", "w1", "1"), ("MODIFIED", "w1", "2"), ("DELETED", "w1", "2")]
