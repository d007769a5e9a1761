//! Server-side apply's refusal of an object it cannot make a typed patch of: structured-merge-diff
//! finds a keyed list holding a key twice (`env` with two entries named `A`) or a value of the
//! wrong type. kube-apiserver answers it with a 500, although the server is fine and the same
//! request is refused the same way every time, so it is neither retried nor "unavailable".

/// How structured-merge-diff's refusal begins (kube-apiserver v1.36, any kind).
const REFUSAL: &str = "failed to create typed patch object";

/// What is wrong where, one `path: problem` each, when a `code` answer with `message` is that
/// refusal: `failed to create typed patch object (ns/name; apps/v1, Kind=Deployment): .spec.x:
/// problem`, or several after `errors:`, one an indented line.
pub fn refusal(code: u16, message: &str) -> Option<Vec<String>> {
    if code != 500 {
        return None;
    }
    let rest = message.strip_prefix(REFUSAL)?;
    let (_, detail) = rest.split_once("): ")?;
    let errors = match detail.strip_prefix("errors:") {
        Some(many) => many
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(str::to_string)
            .collect(),
        None => vec![detail.trim().to_string()],
    };
    Some(errors)
}

/// Whether one of [`refusal`]'s errors is a keyed list holding a key twice.
pub fn is_duplicate_key(error: &str) -> bool {
    error.contains(": duplicate entries for key [")
}

/// The field one of [`refusal`]'s errors names as one the object's schema does not declare
/// (`.spec.validation: field not declared in schema`), as its map keys from the root; `None`
/// for any other error, or a field inside a list, which has no such path.
pub fn undeclared_field(error: &str) -> Option<Vec<String>> {
    let path = error.strip_suffix(": field not declared in schema")?;
    let keys: Vec<String> = path.strip_prefix('.')?.split('.').map(str::to_string).collect();
    let plain = keys.iter().all(|k| !k.is_empty() && !k.contains(['[', ']', '=']));
    plain.then_some(keys)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn undeclared_fields_as_their_keys() {
        let keys = undeclared_field(".spec.validation: field not declared in schema");
        assert_eq!(keys, Some(vec!["spec".to_string(), "validation".to_string()]));
        let in_list = ".spec.versions[name=\"v1\"].x: field not declared in schema";
        assert_eq!(undeclared_field(in_list), None);
        assert_eq!(undeclared_field(".spec.x: expected map, got string"), None);
    }

    /// As a v1.36 kube-apiserver answers `kubectl apply --server-side` of such Deployments.
    #[test]
    fn one_or_several_errors_are_read_and_other_answers_are_not_refusals() {
        let one = "failed to create typed patch object (default/d1; apps/v1, Kind=Deployment): \
                   .spec.template.spec.containers[name=\"c\"].env: duplicate entries for key [name=\"A\"]";
        let errors = refusal(500, one).unwrap();
        assert_eq!(
            errors,
            [".spec.template.spec.containers[name=\"c\"].env: duplicate entries for key [name=\"A\"]"]
        );
        assert!(is_duplicate_key(&errors[0]));
        let many = "failed to create typed patch object (default/d1; apps/v1, Kind=Deployment): errors:\n  \
                    .spec.template.spec.containers[name=\"c\"].ports: duplicate entries for key \
                    [containerPort=80,protocol=\"TCP\"]\n  .spec.replicas: expected numeric (int or float), got string";
        let errors = refusal(500, many).unwrap();
        assert_eq!(errors.len(), 2);
        assert!(is_duplicate_key(&errors[0]) && !is_duplicate_key(&errors[1]));
        assert_eq!(
            errors[1],
            ".spec.replicas: expected numeric (int or float), got string"
        );
        assert_eq!(refusal(503, one), None);
        assert_eq!(refusal(500, "etcdserver: request timed out"), None);
    }
}
