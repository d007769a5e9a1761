//! The attribute a Kubernetes field path names (`spec.scaleTargetRef.apiVersion` in an API
//! server's refusal is `spec[0].scale_target_ref[0].api_version`), so a refusal points at what
//! to change in the configuration.

use plugin_runtime::AttributePath;

use super::{Field, INLINE, Shape, Unsupported};

/// One step of an API field path.
#[derive(Debug, PartialEq)]
enum Step {
    Key(String),
    Index(i64),
}

/// `spec.containers[0].image`, `metadata.labels[app]` as steps.
fn steps(field: &str) -> Vec<Step> {
    let mut out = Vec::new();
    for part in field.split('.') {
        let (name, rest) = part.split_once('[').map_or((part, ""), |(n, r)| (n, r));
        if !name.is_empty() {
            out.push(Step::Key(name.to_string()));
        }
        for bracket in rest.split('[') {
            let inner = bracket.trim_end_matches(']');
            if inner.is_empty() {
                continue;
            }
            out.push(match inner.parse() {
                Ok(i) => Step::Index(i),
                Err(_) => Step::Key(inner.to_string()),
            });
        }
    }
    out
}

/// The attribute path `field` (an API field path) names in a resource whose fields are
/// `fields`, as deep as the fields go (a field the catalog does not have ends the path at its
/// parent; `metadata`'s fields, which the table leaves to the metadata block, end at it).
pub fn attribute_path(fields: &[Field], field: &str) -> Option<AttributePath> {
    let steps = steps(field);
    let Some(Step::Key(first)) = steps.first() else {
        return None;
    };
    walk(fields, &steps, None).or_else(|| {
        // hashicorp's attribute names are the fields' in snake_case where nothing else says.
        Some(AttributePath::root(&snake(first)))
    })
}

fn walk(fields: &[Field], steps: &[Step], at: Option<AttributePath>) -> Option<AttributePath> {
    let join = |name: &str| match &at {
        Some(p) => p.clone().attribute(name),
        None => AttributePath::root(name),
    };
    for field in fields {
        if field.json == INLINE {
            let Some(sub) = field.object_fields() else {
                continue;
            };
            if let Some(found) = walk(sub, steps, Some(element(join(field.name), field))) {
                return Some(found);
            }
            continue;
        }
        let parts: Vec<&str> = field.json.split('.').collect();
        let named = steps.len() >= parts.len()
            && parts
                .iter()
                .zip(steps)
                .all(|(p, s)| matches!(s, Step::Key(k) if k == p));
        if !named {
            continue;
        }
        let rest = &steps[parts.len()..];
        let path = join(field.name);
        return Some(match (field.shape, rest.first()) {
            (Shape::Object(sub) | Shape::Unsupported(Unsupported::Block(sub)), _) => {
                let path = path.index(0);
                walk(sub, rest, Some(path.clone())).unwrap_or(path)
            }
            (Shape::Single(sub), _) => walk(sub, rest, Some(path.clone())).unwrap_or(path),
            (Shape::Array(sub), Some(Step::Index(i))) => {
                let path = path.index(*i);
                walk(sub, &rest[1..], Some(path.clone())).unwrap_or(path)
            }
            (Shape::List(_), Some(Step::Index(i))) => path.index(*i),
            (Shape::Map(_), Some(Step::Key(k))) => path.key(k),
            _ => path,
        });
    }
    None
}

/// `path` at the one element of a block of at most one.
fn element(path: AttributePath, field: &Field) -> AttributePath {
    match field.shape {
        Shape::Object(_) => path.index(0),
        _ => path,
    }
}

fn snake(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path_in(type_name: &str, field: &str) -> String {
        let fields = crate::catalog::entry(type_name).expect("a catalog type").fields();
        attribute_path(fields, field)
            .map(|p| p.to_string())
            .unwrap_or_default()
    }

    #[test]
    fn an_api_field_names_the_attribute_to_set() {
        assert_eq!(
            path_in(
                "kubernetes_horizontal_pod_autoscaler_v1",
                "spec.scaleTargetRef.apiVersion"
            ),
            "spec[0].scale_target_ref[0].api_version"
        );
        assert_eq!(
            path_in(
                "kubernetes_deployment_v1",
                "spec.template.spec.containers[1].image"
            ),
            "spec[0].template[0].spec[0].container[1].image"
        );
        assert_eq!(
            path_in(
                "kubernetes_deployment_v1",
                "spec.template.spec.containers[0].resources.limits[cpu]"
            ),
            "spec[0].template[0].spec[0].container[0].resources[0].limits[\"cpu\"]"
        );
        assert_eq!(path_in("kubernetes_deployment_v1", "metadata.labels"), "metadata");
        assert_eq!(path_in("kubernetes_deployment_v1", "spec.noSuchField"), "spec[0]");
    }
}
