//! The words for an RBAC refusal: which estate may not read whose outputs, as whom, which
//! verb was refused, and the grant that would allow it.
//! A refusal message is words only; [`identity`] asks the API who was refused when the
//! server's message does not say.

use k8s_openapi::api::authentication::v1::SelfSubjectReview;
use kube::api::PostParams;
use kube_estate::{Estate, with_retry};
use plugin_runtime::Diagnostic;

use crate::grants::Reader;

pub const REFUSAL_SUMMARY: &str = "This estate may not read another estate's outputs";

/// A read of `estate`'s outputs that the Kubernetes API refused: the reader has no RBAC grant.
#[derive(Clone, Debug, PartialEq)]
pub struct RbacRefusal {
    /// The estate reading (the provider block's estate).
    pub reader_estate: Estate,
    /// The estate whose outputs were asked for.
    pub estate: Estate,
    /// Who the API says is asking, when known.
    pub identity: Option<Reader>,
    /// The verb refused: `get` (by name) or `list`.
    pub verb: String,
    /// The Secrets refused by name (empty for a list).
    pub secret_names: Vec<String>,
    /// The outputs those Secrets record, as the reader named them (empty for a list).
    pub outputs: Vec<String>,
    /// Outputs the same read was allowed to get: the reader's grant covers some outputs.
    pub granted: Vec<String>,
    /// The API server's own words.
    pub server_message: String,
}

/// The identity a username stands for: `system:serviceaccount:<ns>:<name>` is a
/// ServiceAccount, anything else a User.
pub fn identity_of(username: &str) -> Reader {
    match username
        .strip_prefix("system:serviceaccount:")
        .and_then(|r| r.split_once(':'))
    {
        Some((namespace, name)) => Reader::ServiceAccount {
            namespace: namespace.to_string(),
            name: name.to_string(),
        },
        None => Reader::User(username.to_string()),
    }
}

/// The username in a 403 message: `... is forbidden: User "app-planner" cannot get ...`.
pub fn username_in(message: &str) -> Option<&str> {
    let start = message.find("User \"")? + "User \"".len();
    let len = message[start..].find('"')?;
    Some(&message[start..start + len]).filter(|u| !u.is_empty())
}

/// The identity a refused request ran as: from the 403 message, or else by asking the
/// API (a SelfSubjectReview, which stores nothing). `None` when neither says.
pub async fn identity(client: &kube::Client, message: &str) -> Option<Reader> {
    if let Some(user) = username_in(message) {
        return Some(identity_of(user));
    }
    let api: kube::Api<SelfSubjectReview> = kube::Api::all(client.clone());
    let (params, ask) = (PostParams::default(), SelfSubjectReview::default());
    let review = with_retry(|| api.create(&params, &ask)).await.ok()?;
    let username = review.status?.user_info?.username?;
    Some(identity_of(&username))
}

impl RbacRefusal {
    fn who(&self) -> String {
        match &self.identity {
            Some(Reader::User(n)) => format!("User {n:?}"),
            Some(Reader::Group(n)) => format!("Group {n:?}"),
            Some(Reader::ServiceAccount { namespace, name }) => {
                format!("ServiceAccount \"{namespace}/{name}\"")
            }
            None => "the identity this provider connects as".to_string(),
        }
    }

    /// A Role and RoleBinding granting exactly the refused gets, ready for kubectl apply.
    fn grant_yaml(&self, reader: &Reader) -> String {
        let namespace = self.estate.records_namespace();
        let name = format!("tofu-records-read-{}", self.reader_estate);
        let names = self
            .secret_names
            .iter()
            .map(|n| format!("\"{n}\""))
            .collect::<Vec<_>>()
            .join(", ");
        let subject = reader.subject();
        let mut subject_yaml = format!("- kind: {}\n  name: {}\n", subject.kind, subject.name);
        match &subject.namespace {
            Some(ns) => subject_yaml.push_str(&format!("  namespace: {ns}\n")),
            None => subject_yaml.push_str("  apiGroup: rbac.authorization.k8s.io\n"),
        }
        format!(
            "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: {name}\n  \
             namespace: {namespace}\nrules:\n- apiGroups: [\"\"]\n  resources: [\"secrets\"]\n  \
             verbs: [\"get\"]\n  resourceNames: [{names}]\n---\napiVersion: rbac.authorization.k8s.io/v1\n\
             kind: RoleBinding\nmetadata:\n  name: {name}\n  namespace: {namespace}\nroleRef:\n  \
             apiGroup: rbac.authorization.k8s.io\n  kind: Role\n  name: {name}\nsubjects:\n{subject_yaml}"
        )
    }
}

impl From<RbacRefusal> for Diagnostic {
    fn from(r: RbacRefusal) -> Diagnostic {
        let namespace = r.estate.records_namespace();
        let what = if r.verb == "list" {
            "list the Secrets".to_string()
        } else {
            format!("get the Secrets {}", quoted(&r.secret_names))
        };
        let mut detail = format!(
            "Estate \"{}\" reads the outputs of estate \"{}\", recorded in namespace \"{namespace}\", \
             but the Kubernetes API refused: {} may not {what} there (verb \"{}\").\n\
             The API server said: {}\n\n",
            r.reader_estate,
            r.estate,
            r.who(),
            r.verb,
            r.server_message
        );
        if r.verb == "list" {
            detail.push_str(
                "This data source lists the namespace because it names no outputs. Set `names` to \
                 the outputs it needs: each is then read with `get` by name, which is all that \
                 estate's `readers` grant.\n\n",
            );
        }
        let owner = format!(
            "Estate \"{}\" decides who may read its outputs: its owners can add this identity to \
             the `readers` of its records_outputs resource",
            r.estate
        );
        if !r.outputs.is_empty() {
            let (noun, verb) = if r.outputs.len() == 1 {
                ("Output", "is")
            } else {
                ("Outputs", "are")
            };
            detail.push_str(&format!("{noun} {} {verb} not granted to it", quoted(&r.outputs)));
            if r.granted.is_empty() {
                detail.push_str(".\n\n");
            } else {
                detail.push_str(&format!(
                    "; it may read {} (a grant of some outputs only).\n\n",
                    quoted(&r.granted)
                ));
            }
        }
        let mut wanted: Vec<String> = r.granted.iter().chain(&r.outputs).cloned().collect();
        wanted.sort();
        match (&r.identity, r.verb.as_str()) {
            (Some(reader), "get") if !r.granted.is_empty() => detail.push_str(&format!(
                "{owner}, adding {} to this reader's entry (keeping any other outputs it has):\n\n  \
                 readers = [{}]\n\nor an administrator can apply this Role and RoleBinding (get by \
                 name, no list):\n\n{}",
                quoted(&r.outputs),
                reader.hcl_for_outputs(&wanted),
                r.grant_yaml(reader)
            )),
            (Some(reader), "get") => detail.push_str(&format!(
                "{owner}:\n\n  readers = [{}]\n\nor, for these outputs only:\n\n  readers = [{}]\n\n\
                 or an administrator can apply this Role and RoleBinding (get by name, no list):\n\n{}",
                reader.hcl(),
                reader.hcl_for_outputs(&wanted),
                r.grant_yaml(reader)
            )),
            (Some(reader), _) => detail.push_str(&format!("{owner}:\n\n  readers = [{}]\n", reader.hcl())),
            (None, _) => detail.push_str(&format!("{owner}.\n")),
        }
        Diagnostic::error(REFUSAL_SUMMARY, detail)
    }
}

fn quoted(names: &[String]) -> String {
    names
        .iter()
        .map(|n| format!("\"{n}\""))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    const MESSAGE: &str = "secrets \"output-gateway-host\" is forbidden: User \"app-planner\" cannot get \
                           resource \"secrets\" in API group \"\" in the namespace \"tofu-records-network\"";

    fn refusal(verb: &str, identity: Option<Reader>) -> RbacRefusal {
        RbacRefusal {
            reader_estate: Estate::parse("app").unwrap(),
            estate: Estate::parse("network").unwrap(),
            identity,
            verb: verb.into(),
            secret_names: if verb == "get" {
                vec!["output-gateway-host".into(), "output-namespace".into()]
            } else {
                vec![]
            },
            outputs: if verb == "get" {
                vec!["gateway_host".into(), "namespace".into()]
            } else {
                vec![]
            },
            granted: vec![],
            server_message: MESSAGE.into(),
        }
    }

    #[test]
    fn identities_come_from_usernames_and_messages() {
        assert_eq!(username_in(MESSAGE), Some("app-planner"));
        assert_eq!(username_in("forbidden"), None);
        assert_eq!(identity_of("app-planner"), Reader::User("app-planner".into()));
        assert_eq!(
            identity_of("system:serviceaccount:shop:app"),
            Reader::ServiceAccount {
                namespace: "shop".into(),
                name: "app".into()
            }
        );
    }

    #[test]
    fn get_refusal_names_estate_namespace_identity_verb_and_grant() {
        let d = Diagnostic::from(refusal("get", Some(Reader::User("app-planner".into()))));
        assert_eq!(d.summary, "This estate may not read another estate's outputs");
        let expected_start = "Estate \"app\" reads the outputs of estate \"network\", recorded in namespace \
                              \"tofu-records-network\", but the Kubernetes API refused: User \"app-planner\" \
                              may not get the Secrets \"output-gateway-host\", \"output-namespace\" there \
                              (verb \"get\").";
        assert!(d.detail.starts_with(expected_start), "{}", d.detail);
        assert!(
            d.detail
                .contains("readers = [{ kind = \"User\", name = \"app-planner\" }]")
        );
        assert!(d.detail.contains(
            "kind: Role\nmetadata:\n  name: tofu-records-read-app\n  namespace: tofu-records-network\n"
        ));
        assert!(d.detail.contains(
            "  verbs: [\"get\"]\n  resourceNames: [\"output-gateway-host\", \"output-namespace\"]\n"
        ));
        assert!(d.detail.ends_with(
            "subjects:\n- kind: User\n  name: app-planner\n  apiGroup: rbac.authorization.k8s.io\n"
        ));
        assert!(!d.detail.contains("Set `names`"));
        assert!(d.detail.contains(
            "or, for these outputs only:\n\n  readers = [{ kind = \"User\", name = \"app-planner\", \
             outputs = [\"gateway_host\", \"namespace\"] }]"
        ));
    }

    #[test]
    fn a_grant_of_some_outputs_is_told_the_output_to_add() {
        let mut r = refusal("get", Some(Reader::User("restricted".into())));
        r.secret_names = vec!["output-namespace".into()];
        r.outputs = vec!["namespace".into()];
        r.granted = vec!["gateway_host".into()];
        let d = Diagnostic::from(r);
        assert!(
            d.detail.contains(
                "Output \"namespace\" is not granted to it; it may read \"gateway_host\" (a grant of \
                 some outputs only)."
            ),
            "{}",
            d.detail
        );
        assert!(d.detail.contains(
            "adding \"namespace\" to this reader's entry (keeping any other outputs it has):\n\n  \
             readers = [{ kind = \"User\", name = \"restricted\", outputs = [\"gateway_host\", \"namespace\"] }]"
        ));
        assert!(d.detail.contains("  resourceNames: [\"output-namespace\"]\n"));
    }

    #[test]
    fn list_refusal_points_to_names() {
        let sa = Reader::ServiceAccount {
            namespace: "shop".into(),
            name: "app".into(),
        };
        let d = Diagnostic::from(refusal("list", Some(sa)));
        assert!(
            d.detail
                .contains("ServiceAccount \"shop/app\" may not list the Secrets there (verb \"list\")")
        );
        assert!(d.detail.contains("Set `names`"));
        assert!(d.detail.contains("namespace = \"shop\""));
        assert!(!d.detail.contains("kind: Role"));
    }

    #[test]
    fn unknown_identity_still_names_estates() {
        let d = Diagnostic::from(refusal("get", None));
        assert!(
            d.detail
                .contains("the identity this provider connects as may not get")
        );
        assert!(d.detail.contains("tofu-records-network"));
    }
}
