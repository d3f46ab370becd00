"""APIServices through the Python client: one created from YAML with utils.create_from_yaml (as the
client's e2e suite registers `v1alpha1.wardle.k8s.io`, port defaulted to 443) and with
ApiregistrationV1Api, read, listed beside the Local ones, patched, Available=False while its Service
is missing, refused with 422 and Kubernetes' causes when malformed, and deleted."""
import json
import time
import uuid

import pytest
import yaml
from kubernetes import client, utils
from kubernetes.client.rest import ApiException


@pytest.fixture
def apireg(api_client):
    return client.ApiregistrationV1Api(api_client)


def available(apireg, name):
    for _ in range(150):
        conditions = apireg.read_api_service(name).status.conditions or []
        found = [c for c in conditions if c.type == "Available"]
        if found:
            return found[0]
        time.sleep(0.2)
    raise AssertionError(f"{name} never got an Available condition")


def test_create_from_yaml_read_list_patch_delete(api_client, apireg, tmp_path):
    group = f"wardle-{uuid.uuid4().hex[:8]}.k8s.io"
    name = f"v1alpha1.{group}"
    manifest = tmp_path / "api-service.yaml"
    manifest.write_text(yaml.safe_dump({
        "apiVersion": "apiregistration.k8s.io/v1",
        "kind": "APIService",
        "metadata": {"name": name},
        "spec": {"insecureSkipTLSVerify": True, "group": group, "groupPriorityMinimum": 1000,
                 "versionPriority": 15, "service": {"name": "api", "namespace": "wardle"}, "version": "v1alpha1"},
    }))
    utils.create_from_yaml(api_client, str(manifest))
    try:
        got = apireg.read_api_service(name)
        assert (got.spec.group, got.spec.version, got.spec.service.port) == (group, "v1alpha1", 443)
        names = [s.metadata.name for s in apireg.list_api_service().items]
        assert name in names and "v1.apps" in names
        condition = available(apireg, name)
        assert (condition.status, condition.reason) == ("False", "ServiceNotFound")
        assert condition.message == 'service/api in "wardle" is not present'
        patched = apireg.patch_api_service(name, {"spec": {"versionPriority": 20}})
        assert patched.spec.version_priority == 20
        with pytest.raises(ApiException) as refused:
            apireg.patch_api_service(name, {"spec": {"versionPriority": 0}})
        assert refused.value.status == 422
        causes = json.loads(refused.value.body)["details"]["causes"]
        assert [(c["field"], c["message"]) for c in causes] == [("spec.versionPriority", "Invalid value: 0: must be positive and less than 1000")]
    finally:
        apireg.delete_api_service(name)
    with pytest.raises(ApiException) as gone:
        apireg.read_api_service(name)
    assert gone.value.status == 404


def test_local_api_services_are_available(apireg):
    condition = available(apireg, "v1.apps")
    assert (condition.status, condition.reason) == ("True", "Local")
    assert apireg.read_api_service("v1.apps").spec.service is None


def test_malformed_api_service_is_422(apireg):
    body = client.V1APIService(
        metadata=client.V1ObjectMeta(name="v1alpha1.wrong.example.com"),
        spec=client.V1APIServiceSpec(group="other.example.com", version="v1alpha1", group_priority_minimum=30000,
                                     version_priority=10, service=client.ApiregistrationV1ServiceReference(name="api", namespace="")),
    )
    with pytest.raises(ApiException) as refused:
        apireg.create_api_service(body)
    assert refused.value.status == 422
    status = json.loads(refused.value.body)
    assert status["reason"] == "Invalid"
    assert [(c["field"], c["message"]) for c in status["details"]["causes"]] == [
        ("metadata.name", 'Invalid value: "v1alpha1.wrong.example.com": must be `spec.version+"."+spec.group`: "v1alpha1.other.example.com"'),
        ("spec.groupPriorityMinimum", "Invalid value: 30000: must be positive and less than 20000"),
        ("spec.service.namespace", "Required value"),
    ]
