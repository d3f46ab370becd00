"""Nodes and the pods they run, through the Python client: the embedded node agent's Node (Ready,
its Lease, capacity), a pod the scheduler binds and the agent runs simulated as kwok does, its
(empty) logs, and a graceful delete that the agent completes."""
import time

from kubernetes import client


def wait(what, probe, timeout=30):
    deadline = time.time() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.time() > deadline:
            raise AssertionError("timed out waiting for " + what)
        time.sleep(0.1)


def test_the_node_is_ready_with_its_lease(core, api_client):
    nodes = core.list_node().items
    assert len(nodes) == 1
    node = nodes[0]
    ready = [c for c in node.status.conditions if c.type == "Ready"][0]
    assert ready.status == "True" and ready.reason == "KubeletReady"
    assert int(node.status.capacity["pods"]) == 110
    assert node.status.daemon_endpoints.kubelet_endpoint.port > 0
    lease = client.CoordinationV1Api(api_client).read_namespaced_lease(node.metadata.name, "kube-node-lease")
    assert lease.spec.holder_identity == node.metadata.name


def test_a_pod_is_scheduled_run_simulated_and_deleted(core, namespace):
    pod = client.V1Pod(metadata=client.V1ObjectMeta(name="web"), spec=client.V1PodSpec(containers=[client.V1Container(name="web", image="nginx:1.27")]))
    core.create_namespaced_pod(namespace, pod)
    running = wait("web Running", lambda: (lambda p: p if p.status.phase == "Running" else None)(core.read_namespaced_pod("web", namespace)))
    assert running.spec.node_name == core.list_node().items[0].metadata.name
    assert running.status.container_statuses[0].ready is True
    assert running.status.pod_ip.startswith("127.")
    assert core.read_namespaced_pod_log("web", namespace) == ""
    core.delete_namespaced_pod("web", namespace)
    gone = lambda: not [p for p in core.list_namespaced_pod(namespace).items if p.metadata.name == "web"]
    wait("web gone", gone)
