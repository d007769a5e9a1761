//! Parsing a request's path and query into what the API handlers need (kube's RequestInfo).

use std::collections::HashMap;

/// Decoded query parameters (first value wins, like `url.Values.Get`).
#[derive(Debug, Clone, Default)]
pub struct Query(HashMap<String, String>);

impl Query {
    pub fn parse(raw: Option<&str>) -> Self {
        let mut map = HashMap::new();
        for pair in raw.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            map.entry(decode(k)).or_insert_with(|| decode(v));
        }
        Query(map)
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str)
    }

    /// A boolean option: `true`/`1` (kube accepts both for `watch`).
    pub fn flag(&self, key: &str) -> bool {
        matches!(self.get(key), Some("true" | "1"))
    }
}

/// Percent-decoding with `+` as space (Go's `url.QueryUnescape`).
pub fn decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => match u8::from_str_radix(&s[i + 1..i + 3], 16) {
                Ok(b) => {
                    out.push(b);
                    i += 2;
                }
                Err(_) => out.push(b'%'),
            },
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A request under `/api` or `/apis` that names resources.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResourcePath {
    pub group: String,
    pub version: String,
    pub namespace: Option<String>,
    pub resource: String,
    pub name: Option<String>,
    pub subresource: Option<String>,
}

/// What a path addresses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// `/api` (legacy discovery).
    CoreVersions,
    /// `/apis`.
    Groups,
    /// `/apis/GROUP`.
    Group(String),
    /// `/api/v1`, `/apis/GROUP/VERSION`.
    GroupVersion(String, String),
    Resource(ResourcePath),
    /// Anything else (`/version`, `/healthz`, unknown paths).
    NonResource(String),
}

impl Route {
    pub fn parse(path: &str) -> Route {
        let parts: Vec<&str> = path
            .trim_matches('/')
            .split('/')
            .filter(|p| !p.is_empty())
            .collect();
        let (group, version, rest) = match parts.as_slice() {
            ["api"] => return Route::CoreVersions,
            ["apis"] => return Route::Groups,
            ["apis", g] => return Route::Group(g.to_string()),
            ["api", v] => return Route::GroupVersion(String::new(), v.to_string()),
            ["apis", g, v] => return Route::GroupVersion(g.to_string(), v.to_string()),
            ["api", v, rest @ ..] => ("", *v, rest),
            ["apis", g, v, rest @ ..] => (*g, *v, rest),
            _ => return Route::NonResource(path.to_string()),
        };
        let mut rp = ResourcePath {
            group: group.into(),
            version: version.into(),
            ..Default::default()
        };
        let mut rest = rest.to_vec();
        if rest[0] == "namespaces" && rest.len() > 1 {
            rp.namespace = Some(rest[1].to_string());
            if rest.len() > 2 && !matches!(rest[2], "status" | "finalize") {
                rest.drain(..2);
            }
        }
        rp.resource = rest[0].to_string();
        if rp.resource == "namespaces" {
            // `/api/v1/namespaces/NAME[/status]`: the namespace is the object itself.
            rp.name = rp.namespace.take();
            rp.subresource = rest.get(2).map(|s| s.to_string());
            if rest.len() > 3 {
                return Route::NonResource(path.to_string());
            }
        } else {
            rp.name = rest.get(1).map(|s| s.to_string());
            rp.subresource = rest.get(2).map(|s| s.to_string());
            if rest.len() > 3 {
                return Route::NonResource(path.to_string());
            }
        }
        Route::Resource(rp)
    }
}
