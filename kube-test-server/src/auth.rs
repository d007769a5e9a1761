//! Bearer-token authentication: tokens map to users and groups, like `--token-auth-file`.

use std::collections::HashMap;
use std::sync::RwLock;

use base64::Engine as _;

/// The authenticated identity of a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserInfo {
    pub name: String,
    pub uid: String,
    /// Groups including `system:authenticated` / `system:unauthenticated`.
    pub groups: Vec<String>,
}

impl UserInfo {
    pub fn anonymous() -> Self {
        Self {
            name: "system:anonymous".into(),
            uid: String::new(),
            groups: vec!["system:unauthenticated".into()],
        }
    }

    pub fn is_admin(&self) -> bool {
        self.groups.iter().any(|g| g == "system:masters")
    }
}

/// The outcome of looking at a request's Authorization header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Authn {
    User(UserInfo),
    /// A token was sent but is unknown: 401.
    Rejected,
}

/// The admin's static token, as in the transcripts.
pub const ADMIN_TOKEN: &str = "admin-token-0123456789abcdef";

/// The identities of the recorded transcripts, with their exact tokens and uids.
const STATIC_USERS: &[(&str, &str, &str, &[&str])] = &[
    (ADMIN_TOKEN, "admin", "uid-admin", &["system:masters"]),
    (
        "restricted-token-0123456789abcdef",
        "restricted",
        "uid-restricted",
        &[],
    ),
    (
        "app-planner-token-0123456789abcdef",
        "app-planner",
        "uid-app-planner",
        &["tofu-planners"],
    ),
    (
        "sa-runner-token-0123456789abcdef",
        "system:serviceaccount:g-14-rbac:tofu-runner",
        "uid-sa-tofu-runner",
        &["system:serviceaccounts", "system:serviceaccounts:g-14-rbac"],
    ),
];

/// Token table; users can be added while the server runs.
pub struct Authenticator {
    tokens: RwLock<HashMap<String, UserInfo>>,
}

impl Default for Authenticator {
    fn default() -> Self {
        Self::new()
    }
}

impl Authenticator {
    pub fn new() -> Self {
        let auth = Self {
            tokens: RwLock::new(HashMap::new()),
        };
        for (token, name, uid, groups) in STATIC_USERS {
            let groups = groups.iter().map(|g| g.to_string()).collect();
            auth.insert(token, name, uid, groups);
        }
        auth
    }

    fn insert(&self, token: &str, name: &str, uid: &str, mut groups: Vec<String>) {
        groups.push("system:authenticated".into());
        let user = UserInfo {
            name: name.into(),
            uid: uid.into(),
            groups,
        };
        self.tokens
            .write()
            .expect("token table poisoned")
            .insert(token.into(), user);
    }

    /// Adds (or replaces) a user and returns its token, which is derived from the name so
    /// that a restarted server accepts the same kubeconfig.
    pub fn add_user(&self, name: &str, groups: &[String]) -> String {
        let token = token_for_name(name);
        self.insert(&token, name, &format!("uid-{name}"), groups.to_vec());
        token
    }

    /// Signs `claims` into a JWT-shaped token (a random signature) and accepts it from now on as
    /// the ServiceAccount `namespace`/`name`: what the TokenRequest API and the token controller
    /// hand out.
    pub fn issue_service_account_token(
        &self,
        claims: &serde_json::Value,
        namespace: &str,
        name: &str,
        uid: &str,
    ) -> String {
        let b64 = |v: &[u8]| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v);
        let signature: Vec<u8> = (0..8).flat_map(|_| uuid::Uuid::new_v4().into_bytes()).collect();
        let header = serde_json::json!({"alg": "RS256", "kid": "kube-test-server"});
        let jwt = format!(
            "{}.{}.{}",
            b64(header.to_string().as_bytes()),
            b64(claims.to_string().as_bytes()),
            b64(&signature)
        );
        let groups = vec![
            "system:serviceaccounts".to_string(),
            format!("system:serviceaccounts:{namespace}"),
        ];
        self.insert(
            &jwt,
            &format!("system:serviceaccount:{namespace}:{name}"),
            uid,
            groups,
        );
        jwt
    }

    /// The token of a known user name.
    pub fn token_for(&self, name: &str) -> Option<String> {
        let tokens = self.tokens.read().expect("token table poisoned");
        tokens
            .iter()
            .find(|(_, u)| u.name == name)
            .map(|(t, _)| t.clone())
    }

    /// Authenticates an `Authorization` header value (or its absence).
    pub fn authenticate(&self, header: Option<&str>) -> Authn {
        let Some(header) = header else {
            return Authn::User(UserInfo::anonymous());
        };
        let token = header.strip_prefix("Bearer ").unwrap_or("").trim();
        match self.tokens.read().expect("token table poisoned").get(token) {
            Some(user) => Authn::User(user.clone()),
            None => Authn::Rejected,
        }
    }
}

/// The token scheme for named users: `<name>-token-0123456789abcdef` like the transcripts'.
pub fn token_for_name(name: &str) -> String {
    format!("{name}-token-0123456789abcdef")
}
