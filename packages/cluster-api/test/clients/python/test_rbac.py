"""RBAC through the Python client: a ServiceAccount token may do nothing but discovery and self-review
until the admin binds it a role (RbacAuthorizationV1Api); refusals are 403 with kube-apiserver's
message, and the account's own access reviews agree."""
import copy
import json
import time

from kubernetes import client
from kubernetes.client.rest import ApiException
import pytest


def account_client(api_client, core, namespace, name):
    """A client acting as ServiceAccount `name`, with a token from TokenRequest."""
    core.create_namespaced_service_account(namespace, client.V1ServiceAccount(metadata=client.V1ObjectMeta(name=name)))
    request = client.AuthenticationV1TokenRequest(spec=client.V1TokenRequestSpec(audiences=[]))
    token = core.create_namespaced_service_account_token(name, namespace, request).status.token
    config = copy.copy(api_client.configuration)
    config.api_key = {"authorization": "Bearer " + token}
    return client.ApiClient(config)


def until(check, seconds=10):
    """A binding takes effect once the authorizer's cache has seen it: a moment later, as in Kubernetes."""
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.05)


def allowed(call):
    try:
        call()
        return True
    except ApiException as err:
        if err.status != 403:
            raise
        return False


def test_a_service_account_is_refused_until_bound(api_client, core, namespace):
    sa = account_client(api_client, core, namespace, "ci")
    sa_core = client.CoreV1Api(sa)

    with pytest.raises(ApiException) as err:
        sa_core.list_namespaced_pod(namespace)
    assert err.value.status == 403
    body = json.loads(err.value.body)
    assert body["reason"] == "Forbidden"
    assert body["message"] == (
        'pods is forbidden: User "system:serviceaccount:%s:ci" cannot list resource "pods" '
        'in API group "" in the namespace "%s"' % (namespace, namespace))
    # Discovery is every authenticated user's.
    assert client.CoreApi(sa).get_api_versions().versions == ["v1"]

    binding = client.V1RoleBinding(
        metadata=client.V1ObjectMeta(name="ci-view"),
        role_ref=client.V1RoleRef(api_group="rbac.authorization.k8s.io", kind="ClusterRole", name="view"),
        subjects=[client.V1Subject(kind="ServiceAccount", name="ci", namespace=namespace)],
    )
    client.RbacAuthorizationV1Api(api_client).create_namespaced_role_binding(namespace, binding)

    until(lambda: allowed(lambda: sa_core.list_namespaced_pod(namespace)))
    assert not allowed(lambda: sa_core.list_namespaced_secret(namespace))

    review = client.V1SelfSubjectAccessReview(spec=client.V1SelfSubjectAccessReviewSpec(
        resource_attributes=client.V1ResourceAttributes(verb="list", resource="secrets", namespace=namespace)))
    assert client.AuthorizationV1Api(sa).create_self_subject_access_review(review).status.allowed is False


def test_rbac_objects_round_trip(api_client, namespace):
    rbac = client.RbacAuthorizationV1Api(api_client)
    role = client.V1Role(
        metadata=client.V1ObjectMeta(name="pod-reader"),
        rules=[client.V1PolicyRule(api_groups=[""], resources=["pods"], verbs=["get", "list"], resource_names=["web"])],
    )
    created = rbac.create_namespaced_role(namespace, role)
    assert created.rules[0].resource_names == ["web"]
    assert [r.metadata.name for r in rbac.list_namespaced_role(namespace).items] == ["pod-reader"]
    view = rbac.read_cluster_role("view")
    assert view.aggregation_rule.cluster_role_selectors[0].match_labels == {"rbac.authorization.k8s.io/aggregate-to-view": "true"}
    with pytest.raises(ApiException) as err:
        rbac.create_namespaced_role(namespace, client.V1Role(metadata=client.V1ObjectMeta(name="bad"), rules=[client.V1PolicyRule(verbs=[])]))
    assert err.value.status == 422
