use kube::core::{Status, response::StatusCause, response::StatusDetails};

use super::*;

fn cm() -> ObjectRef {
    ObjectRef::namespaced("ConfigMap", "shop", "app-config")
}

fn api(code: u16, reason: &str, message: &str) -> kube::Error {
    kube::Error::Api(Status::failure(message, reason).with_code(code).boxed())
}

#[test]
fn maps_statuses_to_variants() {
    let e = ApiError::from_kube(
        api(404, "NotFound", "configmaps \"app-config\" not found"),
        &cm(),
        "get",
    );
    assert!(e.is_not_found() && !e.is_forbidden());
    assert_eq!(e.to_string(), "ConfigMap \"shop/app-config\" not found");

    let msg = "configmaps \"app-config\" is forbidden: User \"app-planner\" cannot get resource";
    let e = ApiError::from_kube(api(403, "Forbidden", msg), &cm(), "get");
    assert!(e.is_forbidden());
    match &e {
        ApiError::Forbidden { verb, message, .. } => {
            assert_eq!(verb, "get");
            assert_eq!(message, msg);
        }
        other => panic!("{other:?}"),
    }

    let e = ApiError::from_kube(api(409, "AlreadyExists", "exists"), &cm(), "create");
    assert!(matches!(e, ApiError::AlreadyExists { .. }));
    let e = ApiError::from_kube(
        api(409, "Conflict", "the object has been modified"),
        &cm(),
        "update",
    );
    assert!(matches!(e, ApiError::Conflict { ref message, .. } if message == "the object has been modified"));

    for code in [429, 500, 503] {
        let e = ApiError::from_kube(api(code, "", "busy"), &cm(), "get");
        assert!(matches!(e, ApiError::Unavailable { .. }), "{code}");
    }
    let e = ApiError::from_kube(api(410, "Gone", "too old"), &cm(), "list");
    assert!(matches!(e, ApiError::Other { code: 410, ref object, .. } if *object == cm()));
}

#[test]
fn invalid_keeps_causes_and_lists_them() {
    let status = Status::failure("ConfigMap \"Bad\" is invalid", "Invalid")
        .with_code(422)
        .with_details(StatusDetails {
            name: "Bad".into(),
            group: String::new(),
            kind: "ConfigMap".into(),
            uid: String::new(),
            causes: vec![StatusCause {
                reason: "FieldValueInvalid".into(),
                message: "a lowercase RFC 1123 subdomain must consist of ...".into(),
                field: "metadata.name".into(),
            }],
            retry_after_seconds: 0,
        });
    let e = ApiError::from_kube(kube::Error::Api(status.boxed()), &cm(), "create");
    match &e {
        ApiError::Invalid { causes, .. } => assert_eq!(causes[0].0, "metadata.name"),
        other => panic!("{other:?}"),
    }
    let d = Diagnostic::from(e);
    assert_eq!(
        d.summary,
        "ConfigMap \"shop/app-config\" is invalid: metadata.name: a lowercase RFC 1123 \
         subdomain must consist of ..."
    );
    assert!(
        d.detail.contains("\n- metadata.name: a lowercase RFC 1123"),
        "{}",
        d.detail
    );
}

#[test]
fn field_manager_conflicts_name_manager_field_and_force_conflicts() {
    // As kube-apiserver answers (kube-golden 12), with a second manager added.
    let cause = |manager: &str, field: &str| StatusCause {
        reason: "FieldManagerConflict".into(),
        message: format!("conflict with \"{manager}\" using v1"),
        field: field.into(),
    };
    let status = Status::failure("Apply failed with 2 conflicts: ...", "Conflict")
        .with_code(409)
        .with_details(StatusDetails {
            name: "app-config".into(),
            group: String::new(),
            kind: "configmaps".into(),
            uid: String::new(),
            causes: vec![cause("kubectl-edit", ".data.a"), cause("helm", ".data.b")],
            retry_after_seconds: 0,
        });
    let e = ApiError::from_kube(kube::Error::Api(status.boxed()), &cm(), "apply");
    let ApiError::Conflict { fields, .. } = &e else {
        panic!("{e:?}")
    };
    assert_eq!(
        fields[0],
        FieldConflict {
            manager: "kubectl-edit".into(),
            field: ".data.a".into()
        }
    );
    let d = Diagnostic::from(e);
    assert_eq!(
        d.summary,
        "Field manager conflict on ConfigMap \"shop/app-config\": fields owned by \"kubectl-edit\", \"helm\""
    );
    assert!(
        d.detail.contains("\n- .data.a (owned by \"kubectl-edit\")"),
        "{}",
        d.detail
    );
    assert!(
        d.detail.contains("\n- .data.b (owned by \"helm\")"),
        "{}",
        d.detail
    );
    assert!(
        d.detail
            .contains("field_manager {\n    force_conflicts = true\n  }"),
        "{}",
        d.detail
    );
    assert!(!d.detail.contains("since it was read"), "{}", d.detail);

    // Any other conflict still says the object moved.
    let d = Diagnostic::from(ApiError::from_kube(
        api(409, "Conflict", "the object has been modified"),
        &cm(),
        "update",
    ));
    assert!(d.detail.contains("since it was read"), "{}", d.detail);
}

#[test]
fn a_write_into_a_missing_namespace_names_the_namespace() {
    // As kube-apiserver answers a create into a namespace that does not exist.
    let e = ApiError::from_kube(
        api(404, "NotFound", "namespaces \"shop\" not found"),
        &cm(),
        "create",
    );
    assert!(matches!(&e, ApiError::NamespaceMissing { namespace, .. } if namespace == "shop"));
    assert!(!e.is_not_found(), "the object is not what is missing");
    let d = Diagnostic::from(e);
    assert_eq!(
        d.summary,
        "Cannot create ConfigMap \"shop/app-config\": namespace \"shop\" not found"
    );
    // The namespace itself, absent, is an ordinary not-found.
    let ns = ObjectRef::cluster("Namespace", "shop");
    let e = ApiError::from_kube(api(404, "NotFound", "namespaces \"shop\" not found"), &ns, "get");
    assert!(e.is_not_found());
}

#[test]
fn refusals_that_are_not_about_rbac_say_what_refused() {
    // As kube-apiserver answers a create into a terminating namespace.
    let status = Status::failure(
        "configmaps \"app-config\" is forbidden: unable to create new content in namespace shop \
         because it is being terminated",
        "Forbidden",
    )
    .with_code(403)
    .with_details(StatusDetails {
        name: "app-config".into(),
        group: String::new(),
        kind: "configmaps".into(),
        uid: String::new(),
        causes: vec![StatusCause {
            reason: "NamespaceTerminating".into(),
            message: "namespace shop is being terminated".into(),
            field: "metadata.namespace".into(),
        }],
        retry_after_seconds: 0,
    });
    let e = ApiError::from_kube(kube::Error::Api(status.boxed()), &cm(), "create");
    assert!(matches!(&e, ApiError::NamespaceTerminating { namespace, .. } if namespace == "shop"));
    let d = Diagnostic::from(e);
    assert_eq!(
        d.summary,
        "Cannot create ConfigMap \"shop/app-config\": namespace \"shop\" is being deleted"
    );
    assert!(!d.detail.contains("RBAC"), "{}", d.detail);

    let quota =
        "pods \"p\" is forbidden: exceeded quota: compute, requested: cpu=2, used: cpu=1, limited: cpu=2";
    let e = ApiError::from_kube(api(403, "Forbidden", quota), &cm(), "create");
    assert!(matches!(e, ApiError::QuotaExceeded { .. }), "{e:?}");
    let d = Diagnostic::from(e);
    assert!(
        d.summary.ends_with("a resource quota refused it"),
        "{}",
        d.summary
    );
    assert!(
        d.detail.contains(quota) && !d.detail.contains("RBAC"),
        "{}",
        d.detail
    );

    // A webhook picks its own code; a ValidatingAdmissionPolicy answers 403 or 422.
    for (code, message) in [
        (
            400,
            "admission webhook \"deny.example.com\" denied the request: no",
        ),
        (
            403,
            "admission webhook \"deny.example.com\" denied the request without explanation",
        ),
        (
            422,
            "configmaps \"x\" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: no",
        ),
    ] {
        let e = ApiError::from_kube(api(code, "Forbidden", message), &cm(), "create");
        assert!(matches!(e, ApiError::AdmissionDenied { .. }), "{code}: {e:?}");
        let d = Diagnostic::from(e);
        assert!(d.summary.contains("admission control denied it"), "{}", d.summary);
        assert!(
            d.detail.contains(message) && !d.detail.contains("RBAC"),
            "{}",
            d.detail
        );
    }
}

#[test]
fn an_unavailable_api_names_the_request_the_cause_and_the_tries() {
    let failure = Failure {
        error: kube::Error::Service("connection reset by peer".into()),
        tries: 8,
        waited: Duration::from_millis(14_200),
        uncertain: true,
        ended: Ended::Budget,
    };
    let e = ApiError::from_list(failure, "ConfigMap", Some("fault-ns"), "tofu-estate!=fault");
    assert!(e.is_uncertain());
    let d = Diagnostic::from(e);
    assert_eq!(
        d.summary,
        "Kubernetes API unavailable: could not list ConfigMap objects in namespace \"fault-ns\" \
         with selector \"tofu-estate!=fault\""
    );
    assert!(
        d.detail.starts_with(
            "The connection to the API server broke before the answer: connection reset by peer"
        ),
        "{}",
        d.detail
    );
    assert!(d.detail.contains("Tried 8 times over 14.2 s."), "{}", d.detail);

    let failure = Failure {
        error: api(503, "ServiceUnavailable", "etcd is down"),
        tries: 1,
        waited: Duration::ZERO,
        uncertain: true,
        ended: Ended::NotRepeatable,
    };
    let d = Diagnostic::from(ApiError::from_kube(failure, &cm(), "create"));
    assert_eq!(
        d.summary,
        "Kubernetes API unavailable: could not create ConfigMap \"shop/app-config\""
    );
    assert!(
        d.detail
            .starts_with("The API server answered 503 Service Unavailable: etcd is down"),
        "{}",
        d.detail
    );
    assert!(d.detail.contains("must not be sent twice"), "{}", d.detail);
}

#[test]
fn diagnostics_name_verb_and_object() {
    let e = ApiError::from_kube(api(403, "Forbidden", "User \"u\" cannot delete"), &cm(), "delete");
    let d = Diagnostic::from(e);
    assert_eq!(d.summary, "Not allowed to delete ConfigMap \"shop/app-config\"");
    assert!(d.detail.contains("User \"u\" cannot delete"));
}

/// A v1.36 kube-apiserver's 500 for a Deployment whose container lists env `A` twice: a clear
/// refusal naming the object and the field, not an unavailable API.
#[test]
fn a_typed_patch_refusal_names_the_object_and_the_fields() {
    let message = "failed to create typed patch object (shop/web; apps/v1, Kind=Deployment): errors:\n  \
                   .spec.template.spec.containers[name=\"c\"].env: duplicate entries for key [name=\"A\"]\n  \
                   .spec.replicas: expected numeric (int or float), got string";
    let web = ObjectRef::namespaced("Deployment", "shop", "web");
    let failure = Failure {
        error: api(500, "", message),
        tries: 1,
        waited: Duration::ZERO,
        uncertain: false,
        ended: Ended::Final,
    };
    let e = ApiError::from_kube(failure, &web, "apply");
    assert!(
        matches!(&e, ApiError::Untypable { errors, .. } if errors.len() == 2),
        "{e:?}"
    );
    assert!(!e.is_uncertain() && !e.is_duplicate_keys());
    let d = Diagnostic::from(e);
    assert_eq!(
        d.summary,
        "Cannot apply Deployment \"shop/web\": the API server refused its fields"
    );
    assert!(
        d.detail.contains(
            "\n- .spec.template.spec.containers[name=\"c\"].env: duplicate entries for key [name=\"A\"]\n"
        ),
        "{}",
        d.detail
    );
    assert!(
        !d.detail.contains("unavailable") && !d.detail.contains("Tried"),
        "{}",
        d.detail
    );

    let only_duplicates = "failed to create typed patch object (shop/web; apps/v1, Kind=Deployment): \
                           .spec.template.spec.containers[name=\"c\"].env: duplicate entries for key [name=\"A\"]";
    let e = ApiError::from_kube(api(500, "", only_duplicates), &web, "apply");
    assert!(e.is_duplicate_keys(), "{e:?}");
}

#[test]
fn a_webhook_the_server_cannot_call_is_named_and_final() {
    let message = "Internal error occurred: failed calling webhook \"check.example.com\": failed to \
                   call webhook: Post \"https://check.gate.svc:443/check?timeout=10s\": no endpoints \
                   available for service \"check\"";
    assert_eq!(failed_webhook(message).as_deref(), Some("check.example.com"));
    assert_eq!(failed_webhook("Internal error occurred: etcd is down"), None);
}
