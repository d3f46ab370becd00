"""Knative Serving's admission through the Python client: Knative's own Service CRD (from
shared/crds, beside the repository, unchanged, over the server's own), then Services whose autoscaling annotations
Knative's webhook refuses, each a 400 Status with the webhook's message and the annotation's path
and nothing stored; a valid one is stored as sent."""
import os
import time

import pytest
import yaml
from kubernetes import client
from kubernetes.client.rest import ApiException

CRD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../../../../shared/crds/knative-serving/service.yaml")
GROUP, VERSION, PLURAL = "serving.knative.dev", "v1", "services"
DENIED = 'admission webhook "validation.webhook.serving.knative.dev" denied the request: validation failed: '
AT = "spec.template.metadata.annotations.autoscaling.knative.dev/"


@pytest.fixture(scope="module")
def services(api_client):
    ext = client.ApiextensionsV1Api(api_client)
    with open(CRD) as f:
        crd = yaml.safe_load(f)
    name = crd["metadata"]["name"]
    # The server installs its own on start: Knative's goes over it, as kubectl apply would put it.
    crd["metadata"]["resourceVersion"] = ext.read_custom_resource_definition(name).metadata.resource_version
    ext.replace_custom_resource_definition(name, crd)
    custom = client.CustomObjectsApi(api_client)
    deadline = time.time() + 10
    while time.time() < deadline:
        try:
            custom.list_cluster_custom_object(GROUP, VERSION, PLURAL)
            break
        except ApiException:
            time.sleep(0.1)
    return custom


def ksvc(name, annotations):
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "Service",
        "metadata": {"name": name},
        "spec": {"template": {"metadata": {"annotations": annotations}, "spec": {"containers": [{"image": "localhost/hello:v1"}]}}},
    }


@pytest.mark.parametrize(
    "annotations,message",
    [
        ({"autoscaling.knative.dev/min-scale": "3", "autoscaling.knative.dev/max-scale": "2"}, f"max-scale=2 is less than min-scale=3: {AT}max-scale, {AT}min-scale"),
        ({"autoscaling.knative.dev/window": "3s"}, f"expected 6s <= 3s <= 1h0m0s: {AT}window"),
        ({"autoscaling.knative.dev/target": "0"}, f"target 0 should be at least 0.01: {AT}target"),
        ({"autoscaling.knative.dev/min-scale": "many"}, f"invalid value: many: {AT}min-scale"),
    ],
)
def test_refused_with_the_webhooks_message(services, namespace, annotations, message):
    with pytest.raises(ApiException) as refused:
        services.create_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, ksvc("refused", annotations))
    assert refused.value.status == 400
    status = yaml.safe_load(refused.value.body)
    assert status["kind"] == "Status"
    assert status["reason"] == "BadRequest"
    assert status["message"] == DENIED + message
    assert services.list_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL)["items"] == []


def test_valid_annotations_are_stored(services, namespace):
    annotations = {"autoscaling.knative.dev/min-scale": "0", "autoscaling.knative.dev/max-scale": "3", "autoscaling.knative.dev/window": "10s"}
    services.create_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, ksvc("scaled", annotations))
    stored = services.get_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, "scaled")
    assert {k: v for k, v in stored["spec"]["template"]["metadata"]["annotations"].items() if k.startswith("autoscaling.")} == annotations
