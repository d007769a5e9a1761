//! List resources for `terraform query` (Terraform 1.14+): find existing objects again, this
//! estate's by default, another estate's when named, or the unlabelled ones (`unlabelled =
//! true`: objects made outside any estate, the migration case). `exclude_uids` leaves out the
//! objects a state records (their uids, read from the state file), so that what remains of the
//! estate's objects are its orphans: labelled by an apply whose state never recorded them.
//!
//! Every typed resource and `kubernetes_manifest` lists under its own name (the engine reads
//! results against the managed resource of the same name). The estate is a label selector
//! (`tofu-estate=<estate>` or `!tofu-estate`) beside the user's, so the API filters; pages of
//! [`PAGE_SIZE`] objects follow the API's `limit`/`continue`. Each result carries the identity
//! the resource itself gives the object and, when asked, the state an import of it makes
//! ([`Listable::imported_state`], the import path itself), so what is listed, what is
//! imported and what a plan reads agree.

use std::collections::{HashSet, VecDeque};
use std::sync::Arc;

use async_trait::async_trait;
use futures::StreamExt;
use futures::stream::{self, BoxStream};
use kube::api::ListParams;
use kube_estate::{ApiError, ESTATE_LABEL, Estate};
use plugin_runtime::{
    Attribute, AttributePath, Block, Diagnostic, Diagnostics, ListEvent, ListRequest, ListResource,
    ListedObject, Resource, Schema, Type, Value,
};
use serde_json::Value as Json;

use crate::context::Context;
use crate::discovery::Resolved;
use crate::lifecycle::diag;
use crate::objects;

/// Objects per LIST request.
pub const PAGE_SIZE: usize = 500;

/// A resource whose objects can be listed: where they live, and the state an import of one
/// makes.
#[async_trait]
pub trait Listable: Resource {
    /// Config attributes beyond the common ones (the manifest's `api_version` and `kind`).
    fn list_attributes(&self) -> Vec<Attribute> {
        Vec::new()
    }

    /// The kind a listing with `config` reads.
    async fn collection(&self, ctx: &Context, config: &Value) -> Result<Resolved, Diagnostics>;

    /// The resource state an import of `live` makes.
    fn imported_state(&self, live: &Json) -> Value;
}

/// The list resource of one [`Listable`] resource.
pub struct KindList {
    target: Arc<dyn Listable>,
    ctx: Arc<Context>,
}

impl KindList {
    pub fn new(target: Arc<dyn Listable>, ctx: Arc<Context>) -> KindList {
        KindList { target, ctx }
    }
}

/// Which estate label a listing selects.
#[derive(Clone, Debug, PartialEq, Eq)]
enum EstateFilter {
    /// Objects labelled with this estate.
    Of(String),
    /// Objects with no estate label at all.
    Unlabelled,
}

impl EstateFilter {
    /// From the config: `unlabelled`, else `estate`, else the provider's own estate.
    fn of(config: &Value, own: &Estate) -> EstateFilter {
        if config.get("unlabelled").as_bool() == Some(true) {
            return EstateFilter::Unlabelled;
        }
        let estate = config.get("estate").as_str().unwrap_or(own.as_str());
        EstateFilter::Of(estate.to_string())
    }

    fn selector(&self) -> String {
        match self {
            EstateFilter::Of(estate) => format!("{ESTATE_LABEL}={estate}"),
            EstateFilter::Unlabelled => format!("!{ESTATE_LABEL}"),
        }
    }
}

/// The label selector a listing sends: the user's and the estate's.
fn label_selector(config: &Value, estate: &EstateFilter) -> String {
    match config
        .get("label_selector")
        .as_str()
        .filter(|s| !s.trim().is_empty())
    {
        Some(user) => format!("{user},{}", estate.selector()),
        None => estate.selector(),
    }
}

/// One listing in progress: the next page to fetch, and what is left to send.
struct Pager {
    ctx: Arc<Context>,
    target: Arc<dyn Listable>,
    collection: Resolved,
    namespace: Option<String>,
    params: ListParams,
    include: bool,
    /// Objects with these uids are left out.
    exclude: HashSet<String>,
    /// The page to fetch next: `Some(None)` the first, `Some(Some(token))` the one the API's
    /// `continue` token names, `None` after the last.
    next: Option<Option<String>>,
    pending: VecDeque<Json>,
    /// How often the list started again after its `continue` token expired.
    restarts: u32,
}

impl Pager {
    /// The next event, fetching a page when none is pending; `None` at the end.
    async fn next_event(mut self) -> Option<(ListEvent, Pager)> {
        loop {
            if let Some(live) = self.pending.pop_front() {
                let uid = live.pointer("/metadata/uid").and_then(Json::as_str);
                if uid.is_some_and(|uid| self.exclude.contains(uid)) {
                    continue;
                }
                // Once shown, left out of a list that starts again (see `restarts`).
                if let Some(uid) = uid {
                    self.exclude.insert(uid.to_string());
                }
                let event = self.listed(&live);
                return Some((event, self));
            }
            let token = self.next.take()?;
            let continued = token.is_some();
            let params = match token {
                Some(token) => self.params.clone().continue_token(&token),
                None => self.params.clone(),
            };
            let conn = match self.ctx.connection() {
                Ok(conn) => conn,
                Err(e) => return Some((ListEvent::Diagnostics(e.into()), self)),
            };
            let page = objects::list_page(
                &conn.client,
                &self.collection.resource,
                self.namespace.as_deref(),
                &params,
            )
            .await;
            match page {
                Ok((items, next)) => {
                    self.pending.extend(items);
                    self.next = next.map(Some);
                }
                // The `continue` token expired (etcd compacted since the first page): the
                // list starts again, without the objects already shown.
                Err(e) if objects::starts_again(&e, continued, self.restarts) => {
                    self.restarts += 1;
                    self.next = Some(None);
                }
                Err(e) => {
                    let error = self.list_error(e);
                    return Some((ListEvent::Diagnostics(error.into()), self));
                }
            }
        }
    }

    fn listed(&self, live: &Json) -> ListEvent {
        let state = self.target.imported_state(live);
        let Some(identity) = self.target.identity(&state) else {
            return ListEvent::Diagnostics(
                Diagnostic::warning(
                    "Object without a name skipped",
                    format!("A listed {} has no name.", self.collection.resource.kind),
                )
                .into(),
            );
        };
        let target = objects::Target::of(self.collection.resource.clone(), live);
        ListEvent::Object(Box::new(ListedObject {
            identity,
            display_name: target.import_id(),
            resource_object: self.include.then_some(state),
        }))
    }

    /// A failed LIST, naming what was listed where; a refusal says which permission is missing.
    fn list_error(&self, e: ApiError) -> Diagnostic {
        let resource = &self.collection.resource;
        let group = if resource.group.is_empty() {
            "core".to_string()
        } else {
            resource.group.clone()
        };
        let scope = match &self.namespace {
            Some(ns) => format!("in namespace {ns:?}"),
            None if self.collection.namespaced => "in all namespaces".to_string(),
            None => "(cluster-scoped)".to_string(),
        };
        match e {
            ApiError::Forbidden { message, .. } => Diagnostic::error(
                format!("Not allowed to list {} {scope}", resource.plural),
                format!(
                    "The Kubernetes API refused: {message}\n\nListing needs the `list` verb on \
                     `{}` (API group {group}) {scope}: grant it with a Role or ClusterRole and \
                     binding, or set `namespace` to one the identity may list.",
                    resource.plural
                ),
            ),
            other => other.into(),
        }
    }
}

#[async_trait]
impl ListResource for KindList {
    fn type_name(&self) -> &'static str {
        self.target.type_name()
    }

    fn aliases(&self) -> &'static [&'static str] {
        self.target.aliases()
    }

    fn schema(&self) -> Schema {
        let mut block = Block::new(format!(
            "Existing objects of {}: this estate's by default.",
            self.target.type_name()
        ));
        for attribute in self.target.list_attributes() {
            block = block.attribute(attribute);
        }
        let block = block
            .attribute(Attribute::optional(
                "namespace",
                Type::String,
                "The namespace to list; every namespace when null. Not set for cluster-scoped kinds.",
            ))
            .attribute(Attribute::optional(
                "label_selector",
                Type::String,
                "A Kubernetes label selector, e.g. `app=shop,tier!=cache`.",
            ))
            .attribute(Attribute::optional(
                "field_selector",
                Type::String,
                "A Kubernetes field selector, e.g. `metadata.name=shop`.",
            ))
            .attribute(Attribute::optional(
                "estate",
                Type::String,
                "List the objects of this estate (label `tofu-estate`); the provider's own estate \
                 when null. Another estate's objects are listed only when named here.",
            ))
            .attribute(Attribute::optional(
                "unlabelled",
                Type::Bool,
                "List the objects that carry no estate label at all instead: objects made \
                 outside any estate, to adopt them (`terraform query -generate-config-out`).",
            ))
            .attribute(Attribute::optional(
                "exclude_uids",
                Type::list(Type::String),
                "Leave out the objects with these uids. Given the uids a state records \
                 (`metadata.uid` of its resources), the estate's objects that remain are orphans: \
                 labelled with the estate, in no state.",
            ));
        Schema::new(0, block)
    }

    fn validate(&self, config: &Value) -> Diagnostics {
        let mut out = Diagnostics::new();
        let estate = config.get("estate");
        if let Some(name) = estate.as_str()
            && let Err(e) = Estate::parse(name)
        {
            out.push(Diagnostic::error("Invalid estate", e.to_string()).at(AttributePath::root("estate")));
        }
        if config.get("unlabelled").as_bool() == Some(true) && !estate.is_null() {
            out.push(
                Diagnostic::error(
                    "Conflicting estate filters",
                    "`unlabelled = true` lists objects without an estate label: leave `estate` out.",
                )
                .at(AttributePath::root("unlabelled")),
            );
        }
        if config
            .get("label_selector")
            .as_str()
            .is_some_and(|s| s.contains(ESTATE_LABEL))
        {
            out.push(
                Diagnostic::error(
                    "The estate label is selected by `estate`",
                    format!(
                        "Leave {ESTATE_LABEL:?} out of label_selector: use `estate` to name an \
                         estate, or `unlabelled = true` for objects without one."
                    ),
                )
                .at(AttributePath::root("label_selector")),
            );
        }
        out
    }

    fn list(&self, request: ListRequest) -> BoxStream<'static, ListEvent> {
        let ctx = self.ctx.clone();
        let target = self.target.clone();
        let limit = request.limit.unwrap_or(usize::MAX);
        let start = async move { start(ctx, target, request).await };
        stream::once(start)
            .flat_map(|started| match started {
                Ok(pager) => stream::unfold(pager, Pager::next_event).boxed(),
                Err(diagnostics) => stream::iter([ListEvent::Diagnostics(diagnostics)]).boxed(),
            })
            .take(limit)
            .boxed()
    }
}

/// Resolves what to list and with which parameters.
async fn start(
    ctx: Arc<Context>,
    target: Arc<dyn Listable>,
    request: ListRequest,
) -> Result<Pager, Diagnostics> {
    let config = &request.config;
    let conn = ctx.connection().map_err(diag)?;
    let collection = target.collection(&ctx, config).await?;
    let namespace = config.get("namespace").as_str().map(str::to_string);
    if namespace.is_some() && !collection.namespaced {
        return Err(Diagnostic::error(
            "Namespace set for a cluster-scoped kind",
            format!(
                "{} objects belong to no namespace: leave `namespace` out.",
                collection.resource.kind
            ),
        )
        .at(AttributePath::root("namespace"))
        .into());
    }
    let estate = EstateFilter::of(config, &conn.estate);
    let page_size = request.limit.unwrap_or(PAGE_SIZE).min(PAGE_SIZE);
    let mut params = ListParams::default()
        .labels(&label_selector(config, &estate))
        .limit(u32::try_from(page_size).unwrap_or(u32::MAX));
    if let Some(fields) = config.get("field_selector").as_str().filter(|s| !s.is_empty()) {
        params = params.fields(fields);
    }
    Ok(Pager {
        ctx: ctx.clone(),
        target,
        collection,
        namespace,
        params,
        include: request.include_resource_object,
        exclude: config
            .get("exclude_uids")
            .elements()
            .iter()
            .filter_map(|uid| uid.as_str().map(str::to_string))
            .collect(),
        next: Some(None),
        pending: VecDeque::new(),
        restarts: 0,
    })
}

/// The list resources of every listable resource.
pub fn all(targets: Vec<Arc<dyn Listable>>, ctx: &Arc<Context>) -> Vec<Arc<dyn ListResource>> {
    targets
        .into_iter()
        .map(|target| Arc::new(KindList::new(target, ctx.clone())) as Arc<dyn ListResource>)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_estate_filter_is_the_own_estate_unless_named_or_unlabelled() {
        let own = Estate::parse("app").unwrap();
        let config = |pairs: Vec<(&str, Value)>| Value::object(pairs);
        let default = EstateFilter::of(&config(vec![]), &own);
        assert_eq!(default.selector(), "tofu-estate=app");
        let other = EstateFilter::of(&config(vec![("estate", Value::string("net"))]), &own);
        assert_eq!(other.selector(), "tofu-estate=net");
        let none = EstateFilter::of(&config(vec![("unlabelled", Value::Bool(true))]), &own);
        assert_eq!(none.selector(), "!tofu-estate");
        let user = config(vec![("label_selector", Value::string("app=shop"))]);
        assert_eq!(label_selector(&user, &none), "app=shop,!tofu-estate");
    }

    #[test]
    fn conflicting_or_invalid_filters_are_errors_at_their_attribute() {
        let ctx = Arc::new(Context::default());
        let config_maps = crate::kinds::listable(&ctx)
            .into_iter()
            .find(|r| r.type_name() == "kubernetes_config_map")
            .expect("ConfigMaps are listable");
        let list = KindList::new(config_maps, ctx);
        let paths = |pairs: Vec<(&str, Value)>| -> Vec<String> {
            list.validate(&Value::object(pairs))
                .0
                .iter()
                .filter_map(|d| d.attribute.as_ref().map(|p| p.to_string()))
                .collect()
        };
        assert!(paths(vec![("estate", Value::string("net"))]).is_empty());
        assert_eq!(paths(vec![("estate", Value::string("Not One"))]), ["estate"]);
        assert_eq!(
            paths(vec![
                ("estate", Value::string("net")),
                ("unlabelled", Value::Bool(true))
            ]),
            ["unlabelled"]
        );
        assert_eq!(
            paths(vec![("label_selector", Value::string("tofu-estate=x"))]),
            ["label_selector"]
        );
        // Unknown values are checked once known.
        assert!(
            paths(vec![
                ("estate", Value::unknown()),
                ("unlabelled", Value::unknown())
            ])
            .is_empty()
        );
        let schema = list.schema();
        assert!(schema.block.find_attribute("unlabelled").is_some());
        assert!(schema.block.find_attribute("api_version").is_none());
    }
}
